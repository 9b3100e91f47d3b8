/**
 * The intent recorded by the provider lookup (C1): an operation begins with one local activity, `describeProvider`
 * given the start, and a worker of an earlier version, which ignores the start and answers with the facts alone,
 * still has the intent recorded (by `recordIntent`) before anything is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationStart } from '../../src/core/operation';
import { startHarness, type Harness } from './harness';
import { localActivityResults } from './status-loop-checks';

const scripts = { two_polls: { steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }] } };

/** Runs one operation to `succeeded` and returns the local activities its workflow ran, in order, and its journal. */
async function succeeded(h: Harness) {
  const request = h.request('rest', { script: 'two_polls' });
  await h.client.start(request);
  expect((await h.client.result(request.operationId)).localState).toBe('succeeded');
  const lookups = await localActivityResults(h, request.operationId, 'describeProvider');
  const intents = await localActivityResults(h, request.operationId, 'recordIntent');
  const entries = (await h.store.entries(request.operationId)).map(({ entry }) => entry);
  const record = await h.client.get(request.operationId);
  return { lookups, intents, entries, record };
}

describe('the intent recorded by the provider lookup (C1)', () => {
  let current: Harness;
  let earlier: Harness;

  beforeAll(async () => {
    current = await startHarness('intent-lookup', { scenarios: { rest: { scripts } } as never });
    earlier = await startHarness('intent-lookup-earlier', {
      scenarios: { rest: { scripts } } as never,
      // The lookup as an earlier version runs it: it knows nothing of the start and answers with the facts alone.
      activities: (made) => ({
        ...made,
        describeProvider: ({ provider }: { provider: string; start?: OperationStart }) =>
          made.describeProvider({ provider }),
      }),
    });
  });
  afterAll(async () => {
    await current?.stop();
    await earlier?.stop();
  });

  it('C1: one local activity reads the facts and records the intent before the create', async () => {
    const { lookups, intents, entries, record } = await succeeded(current);
    expect(lookups).toHaveLength(1);
    expect(intents).toEqual([]);
    expect(lookups[0]).toMatchObject({
      recorded: { outcome: { state: { localState: 'create_pending' } } },
    });
    expect(entries.slice(0, 2).map((entry) => entry.body.kind)).toEqual(['intent', 'transition']);
    expect(entries.filter((entry) => entry.body.kind === 'intent')).toHaveLength(1);
    expect(record.journal.transitions[0]).toMatchObject({ sequence: 2, body: { to: 'create_pending' } });
  });

  it('C1: beside a worker of an earlier version, recordIntent records it, once, before the create', async () => {
    const { lookups, intents, entries, record } = await succeeded(earlier);
    expect(lookups).toHaveLength(1);
    expect(lookups[0]).not.toHaveProperty('recorded');
    expect(intents).toHaveLength(1);
    expect(entries.slice(0, 2).map((entry) => entry.body.kind)).toEqual(['intent', 'transition']);
    expect(entries.filter((entry) => entry.body.kind === 'intent')).toHaveLength(1);
    expect(record.journal.transitions[0]).toMatchObject({ sequence: 2, body: { to: 'create_pending' } });
  });
});
