/**
 * The outside user's case on the real dev server (E3, B3): a provider whose POST create carries no idempotency
 * token and which declares no reconciliation method, its create answer lost (the simulator drops it). The
 * escalation offers no same-token re-send, a decision naming one is refused before anything is sent, and the
 * workflow's history stays small. Asserted from the workflow's history, the store and the simulator's accounting.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AsyncJobClient } from '../../src/client';
import type { OperationRecord } from '../../src/core/operation';
import { startSimulator, type Simulator } from '../../src/simulator';
import { uniqueId } from '../setup/temporal';
import { startDocumentWorker, writeRestVariant, type DocumentWorker } from '../workflows/document-worker';

const TOKEN = `sim-secret-${Math.random().toString(36).slice(2)}`;
/** Far above what the escalation needs (about 30 events), far below a retry loop (4,056 in the outside report). */
const HISTORY_BOUND = 100;

/** The rest preset without an idempotency token and without reconciliation: a plain tokenless POST. */
function tokenlessContract(dir: string, name: string): Promise<string> {
  return writeRestVariant(dir, name, (preset) => {
    delete preset.create.idempotencyToken;
    return { ...preset, reconciliation: { method: 'none' } };
  });
}

async function untilEscalated(client: AsyncJobClient, operationId: string): Promise<OperationRecord> {
  const end = Date.now() + 60_000;
  for (;;) {
    const record = await client.get(operationId).catch(() => undefined);
    if (record?.localState === 'escalated') return record;
    if (Date.now() > end) throw new Error(`${operationId}: not escalated (${record?.localState ?? 'no record'})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a tokenless create without reconciliation, its answer lost (E3, B3)', () => {
  let sim: Simulator;
  let worker: DocumentWorker;
  let client: AsyncJobClient;
  const id = uniqueId('tokenless').toLowerCase();
  const provider = `tokenless-${id}`.slice(0, 64);

  beforeAll(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-tokenless-'));
    sim = await startSimulator({
      dialect: 'rest',
      token: TOKEN,
      seed: 7,
      scenario: {
        scripts: {
          lost: {
            steps: [{ state: 'running' }],
            faults: [{ on: 'create', nth: 'every', fault: { kind: 'drop' } }],
          },
        },
      },
    });
    worker = await startDocumentWorker({
      taskQueue: `wf-${id}`,
      dataDir: dir,
      providers: [{ name: provider, path: await tokenlessContract(dir, provider) }],
      baseUrls: { [provider]: sim.url },
      env: { ASYNCJOB_SIMULATOR_TOKEN: TOKEN, ASYNCJOB_SIMULATOR_URL: sim.url },
      forbiddenValues: [TOKEN],
    });
    client = worker.client;
  });

  afterAll(async () => {
    await worker?.stop();
    await sim?.stop();
  });

  it('E3, B3: the escalation offers no same-token re-send, a decision naming one is refused, and the history stays small', async () => {
    expect(worker.registry.get(provider).facts.capabilities.sameTokenResend).toBe(false);
    const operationId = uniqueId('op-tokenless');
    await client.start({
      operationId,
      provider,
      payload: { report: 'monthly-sales', scenario: 'lost' },
      startedBy: 'service:test-suite',
      authorisedBy: 'policy:integration-tests',
      createDeadline: { afterMs: 20_000 },
      resultDeadline: { afterMs: 60_000 },
      policy: { baseDelayMs: 20, maxDelayMs: 200, cancelDeadlineMs: 5_000, maxHintMs: 60_000 },
    });
    const escalated = await untilEscalated(client, operationId);
    expect(escalated.escalation?.reason).toBe('create_unknown');
    expect(escalated.escalation?.options.map((o) => o.option)).toEqual(['close', 'inspect_provider_console']);

    // A decision naming the re-send is refused before anything happens: nothing more reaches the provider.
    const createsBefore = sim.requests({ action: 'create' }).length;
    const refused = await client
      .decide(operationId, { option: 'retry_create_same_token', approvedBy: 'alice@example.com', reason: 'try again' })
      .then(
        () => undefined,
        (error: unknown) => error as { refusalCode?: string; detail?: string },
      );
    expect(refused?.refusalCode).toBe('ASYNCJOB_ERR_OPTION_NOT_EXECUTABLE');
    expect(refused?.detail).toContain('same_token_resend');
    expect(createsBefore).toBe(1);

    await client.decide(operationId, { option: 'close', approvedBy: 'alice@example.com', reason: 'checked by hand' });
    const summary = await client.result(operationId);
    expect(summary.localState).toBe('closed');
    // One create was sent, no reconcile request was ever made, and nothing was retried.
    expect(sim.requests({ action: 'create' })).toHaveLength(1);
    expect(sim.requests({ action: 'reconcile' })).toHaveLength(0);
    const history = await worker.env.client.workflow.getHandle(operationId).fetchHistory();
    const events = history.events ?? [];
    expect(events.length).toBeGreaterThan(0);
    expect(events.length).toBeLessThan(HISTORY_BOUND);
    const journal = (await worker.store.entries(operationId)).map(({ entry }) => entry.body);
    expect(journal.filter((b) => b.kind === 'observation')).toHaveLength(1);
  });
});
