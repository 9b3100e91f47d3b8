import { describe, expect, it } from 'vitest';
import { intentEntryOf, newOperationRecord, operationRecordSchema, startRecord } from '../../src/core/operation';
import { intentEntrySchema, instantSchema } from '../../src/core/journal';
import { defaultPollPolicy, pollPolicySchema } from '../../src/core/policy';
import { requestFingerprint } from '../../src/core/fingerprint';
import { TRAVERSAL_CORPUS } from '../security/traversal-corpus';
import { T0, TOKEN, newRecord } from './helpers';

const valid = {
  operationId: 'op_01J7Q5X4D4PA3D',
  provider: 'acme',
  payload: { range: '2026-01' },
  startedBy: 'agent:reporting',
  authorisedBy: 'alice@example.com',
  createDeadline: { afterMs: 120_000 },
  resultDeadline: { atMs: T0 + 3_600_000 },
};
const make = (request: unknown, traceId = 'trace-1') =>
  newOperationRecord({ request, nowMs: T0, idempotencyToken: TOKEN, traceId });

describe('C1, U4: the operation record', () => {
  it("C1: a start's record takes the provider's tuning under the request's own policy, field by field", () => {
    const start = {
      request: { ...valid, policy: { baseDelayMs: 2_000 } },
      startedAtMs: T0,
      idempotencyToken: TOKEN,
      traceId: 'trace-1',
    };
    const tuned = startRecord(start, { baseDelayMs: 9_000, maxDelayMs: 30_000 });
    if (tuned.kind !== 'ok') throw new Error(JSON.stringify(tuned.issues));
    expect(tuned.record.policy).toMatchObject({ baseDelayMs: 2_000, maxDelayMs: 30_000 });
    // The same start makes the same record wherever it is made (the workflow's first copy, the worker's intent).
    expect(startRecord(start, { baseDelayMs: 9_000, maxDelayMs: 30_000 })).toEqual(tuned);
    const untuned = startRecord(start);
    if (untuned.kind !== 'ok') throw new Error(JSON.stringify(untuned.issues));
    expect(untuned.record.policy.maxDelayMs).toBe(defaultPollPolicy().maxDelayMs);
    expect(startRecord({ ...start, idempotencyToken: 'short' }).kind).toBe('refused');
  });

  it('C1: a new record is create_pending with fingerprint, token, deadlines and who authorised it', () => {
    const result = make(valid);
    if (result.kind !== 'ok') throw new Error(JSON.stringify(result.issues));
    const r = result.record;
    expect(operationRecordSchema.parse(r)).toEqual(r);
    expect(r).toMatchObject({
      localState: 'create_pending',
      requestFingerprint: requestFingerprint({ range: '2026-01' }),
      idempotencyToken: TOKEN,
      deadlines: { createDeadlineMs: T0 + 120_000, resultDeadlineMs: T0 + 3_600_000 },
      authorisation: { startedBy: 'agent:reporting', authorisedBy: 'alice@example.com', approvals: [] },
      budgets: { maxStatusRequests: defaultPollPolicy().maxStatusRequests },
      journal: { nextSequence: 3 },
    });
    const intent = intentEntryOf(r);
    expect(intent.sequence).toBe(1);
    expect(intentEntrySchema.parse(intent.body)).toEqual(intent.body);
    expect(instantSchema.parse(intent.body.createDeadlineAt)).toBe(new Date(T0 + 120_000).toISOString());
  });

  it.each([
    ['operationId with a space', { operationId: 'op 1' }, 'operationId'],
    ['operationId too long', { operationId: 'x'.repeat(201) }, 'operationId'],
    ['provider with a slash', { provider: 'a/b' }, 'provider'],
    ['payload not an object', { payload: [1, 2] }, 'payload'],
    ['payload with NaN', { payload: { n: Number.NaN } }, 'payload'],
    ['payload too large', { payload: { s: 'x'.repeat(300_000) } }, 'payload'],
    ['missing authorisedBy', { authorisedBy: undefined }, 'authorisedBy'],
    ['deadline both relative and absolute', { createDeadline: { afterMs: 1, atMs: 2 } }, 'createDeadline'],
    ['unknown field', { priority: 'high' }, ''],
    ['bad policy value', { policy: { baseDelayMs: -1 } }, 'policy.baseDelayMs'],
    ['unknown policy field', { policy: { retries: 3 } }, 'policy'],
    ['result deadline in the past', { resultDeadline: { atMs: T0 - 1 } }, 'resultDeadline'],
    ['result deadline before the create deadline', { resultDeadline: { afterMs: 60_000 } }, 'resultDeadline'],
  ])('refuses a start request with %s, naming the field', (_title, change, path) => {
    const result = make({ ...valid, ...change });
    expect(result.kind).toBe('refused');
    if (result.kind === 'refused') {
      expect(result.code).toBe('ASYNCJOB_ERR_INVALID_INPUT');
      expect(result.issues.map((i) => i.path)).toContain(path);
    }
  });

  it.each(TRAVERSAL_CORPUS.flatMap((id) => ['operationId', 'provider', 'clientReference'].map((field) => [field, id])))(
    'R6: refuses a %s that could name a path (%j), naming the field',
    (field, id) => {
      const result = make({ ...valid, [field]: id });
      expect(result.kind).toBe('refused');
      if (result.kind === 'refused') expect(result.issues.map((i) => i.path)).toContain(field);
    },
  );

  it('I4: the trace ID is never the idempotency token', () => {
    expect(make(valid, TOKEN)).toMatchObject({ kind: 'refused', issues: [{ path: 'traceId' }] });
  });

  it('P2: policy overrides accept millisecond values, and defaults follow docs/rules.md#p2', () => {
    expect(defaultPollPolicy()).toMatchObject({
      baseDelayMs: 5_000,
      maxDelayMs: 120_000,
      jitter: 'bounded',
      minJitterRatio: 0.5,
    });
    const r = newRecord({ baseDelayMs: 1, maxDelayMs: 20, maxStatusRequests: 3 });
    expect(r.policy).toMatchObject({ baseDelayMs: 1, maxDelayMs: 20 });
    expect(r.budgets.maxStatusRequests).toBe(3);
    expect(pollPolicySchema.safeParse({ baseDelayMs: 10, maxDelayMs: 5 }).success).toBe(false);
  });
});
