import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Decision, OPTIONS_BY_REASON } from '../../src/core/escalation';
import { journalEntryBodySchema } from '../../src/core/journal';
import { type Observation } from '../../src/core/observation';
import { webhookMovesReadToNow } from '../../src/core/poll-loop';
import { operationRecordSchema, type OperationRecord } from '../../src/core/operation';
import { type PollPolicyInput } from '../../src/core/policy';
import {
  afterActivityFailure,
  afterCancel,
  afterCollect,
  afterCreate,
  afterReconcile,
  afterStatus,
  applyDecision,
  applyWebhookHint,
  cancelWaitsForJob,
  decisionDeadlinePassed,
  isRefusal,
  nextCommand,
  onWake,
  operationSummary,
  recordRejectedDecision,
  requestCancel,
  reserveCreateAttempt,
  type Command,
  type CollectOutcome,
  type FailedCallSent,
  type ReconciliationMethod,
  type StepContext,
  type StepEntry,
  type StepRefusal,
  type StepResult,
} from '../../src/core/step';
import { T0, newRecord, observed } from './helpers';

// ---------------------------------------------------------------------------------------------------------
// Harness: synthetic observations, a context, and the checks every step result must pass.
// ---------------------------------------------------------------------------------------------------------

const CAPS = { cancel: true, repeatableCollect: true };
const FAST: PollPolicyInput = {
  baseDelayMs: 1_000,
  maxDelayMs: 8_000,
  notFoundWindowMs: 5_000,
  cancelDeadlineMs: 60_000,
  decisionDeadlineMs: 600_000,
  extensionMs: 300_000,
  extensionStatusRequests: 4,
};
const SHA = 'a'.repeat(64);
const CREATE_DEADLINE = T0 + 120_000;
const RESULT_DEADLINE = T0 + 3_600_000;

function ctx(nowMs: number, over: Partial<StepContext> = {}): StepContext {
  return { nowMs, random: 0.5, actor: 'workflow', capabilities: CAPS, reconciliation: 'same_token_resend', ...over };
}

const createObs = (at: number, p: Partial<Observation> = {}): Observation =>
  observed({
    action: 'create',
    transport: 'response',
    httpStatus: 202,
    receivedAtMs: at,
    remoteJobId: 'job_7ad2',
    statusUrl: 'https://api.example.test/jobs/job_7ad2',
    ...p,
  });
const reconcileObs = (at: number, p: Partial<Observation> = {}): Observation =>
  observed({
    action: 'reconcile',
    transport: 'response',
    httpStatus: 200,
    receivedAtMs: at,
    ...p,
  });
const statusObs = (at: number, p: Partial<Observation> = {}): Observation =>
  observed({
    action: 'status',
    transport: 'response',
    httpStatus: 200,
    receivedAtMs: at,
    remoteJobId: 'job_7ad2',
    ...p,
  });
const running = (at: number, p: Partial<Observation> = {}) =>
  statusObs(at, { remoteState: 'running', category: 'pending', ...p });
const done = (at: number, p: Partial<Observation> = {}) =>
  statusObs(at, {
    remoteState: 'succeeded',
    category: 'success',
    resultReference: { url: 'https://api.example.test/jobs/job_7ad2/result', sha256: SHA },
    ...p,
  });
const cancelObs = (at: number, p: Partial<Observation> = {}): Observation =>
  observed({
    action: 'cancel',
    transport: 'response',
    httpStatus: 202,
    receivedAtMs: at,
    ...p,
  });
const collectObs = (at: number, p: Partial<Observation> = {}): Observation =>
  observed({
    action: 'collect',
    transport: 'response',
    httpStatus: 200,
    receivedAtMs: at,
    ...p,
  });
const VALID: CollectOutcome = {
  result: {
    artifactLocation: 'file:///artifacts/op-1',
    sha256: SHA,
    sizeBytes: 42,
    validation: 'valid',
    recordCount: 3,
  },
  artifact: {
    kind: 'artifact',
    location: 'file:///artifacts/op-1',
    sha256: SHA,
    sizeBytes: 42,
    validation: 'valid',
    recordCount: 3,
  },
};
const INVALID: CollectOutcome = {
  result: {
    artifactLocation: 'file:///artifacts/op-1',
    sha256: SHA,
    sizeBytes: 42,
    validation: 'invalid',
    problems: ['sha256 mismatch'],
  },
};

/** S1, R4: `succeeded` only with a result that validated, or one a human accepted by a recorded decision (A1). */
function assertSucceededHasValidResult(record: OperationRecord): void {
  if (record.localState !== 'succeeded') return;
  expect(record.result).not.toBeNull();
  expect(record.result!.validation === 'valid' || record.result!.acceptedBy !== undefined).toBe(true);
  expect(record.remote.category).toBe('success');
}

/** The contract of every step: entries are exactly those from the input's nextSequence, contiguous, schema-valid. */
function check(before: OperationRecord, step: StepResult): OperationRecord {
  const from = before.journal.nextSequence;
  const expected = Array.from({ length: step.record.journal.nextSequence - from }, (_, i) => from + i);
  expect(step.entries.map((e) => e.sequence)).toEqual(expected);
  for (const entry of step.entries) {
    const parsed = journalEntryBodySchema.safeParse(entry.body);
    expect(parsed.success ? 'ok' : JSON.stringify(parsed.error.issues)).toBe('ok');
    expect(entry.actor.length).toBeGreaterThan(0);
  }
  const record = operationRecordSchema.safeParse(step.record);
  expect(record.success ? 'ok' : JSON.stringify(record.error.issues)).toBe('ok');
  assertSucceededHasValidResult(step.record);
  return step.record;
}

function notRefused(step: StepResult | StepRefusal): StepResult {
  if ('kind' in step && step.kind === 'refused') throw new Error(`unexpected refusal ${step.code}: ${step.message}`);
  return step as StepResult;
}

const kinds = (entries: StepEntry[]) =>
  entries.map((e) => (e.body.kind === 'transition' ? `${e.body.from}->${e.body.to}` : e.body.kind));
const optionsOf = (r: OperationRecord) => (r.escalation?.options ?? []).map((o) => o.option);

/** Reserves and answers one status read at `at` (B2: the counter is incremented before the send). */
function poll(
  record: OperationRecord,
  at: number,
  answer: (at: number) => Observation,
  c: Partial<StepContext> = {},
): OperationRecord {
  const woke = onWake(record, ctx(at, c));
  if (woke.kind !== 'read_status') throw new Error(`expected a status read at ${at}, got ${woke.kind}`);
  expect(woke.record.used.statusRequests).toBe(record.used.statusRequests + 1);
  expect(woke.record.schedule.reservedAtMs).toBe(at);
  return check(record, afterStatus(woke.record, answer(at + 10), ctx(at + 10, c)));
}

/** A record accepted at T0 + 1 s with job `job_7ad2` (through the create step), first poll scheduled. */
function acceptedRecord(policy: PollPolicyInput = FAST): OperationRecord {
  const r0 = newRecord(policy);
  const reserved = reserveCreateAttempt(r0, ctx(T0 + 500));
  if (reserved.kind !== 'reserved') throw new Error('create not reserved');
  return check(r0, afterCreate(reserved.record, createObs(T0 + 1000), ctx(T0 + 1000)));
}

/** A record observing `running`, with no reservation open; its next poll is due at `nextPollAtMs`. */
function observing(policy: PollPolicyInput = FAST): OperationRecord {
  const a = acceptedRecord(policy);
  return poll(a, a.schedule.nextPollAtMs!, running);
}

/** A record in `cancelling`: cancel requested by alice and answered 202. */
function cancelling(policy: PollPolicyInput = FAST): OperationRecord {
  const o = observing(policy);
  const at = o.schedule.nextPollAtMs! - 1;
  const requested = check(
    o,
    notRefused(requestCancel(o, { requestedBy: 'alice@example.com', reason: 'no longer needed' }, ctx(at))),
  );
  return check(requested, afterCancel(requested, cancelObs(at + 5), ctx(at + 5)));
}

/** A record escalated for request_budget_exhausted (budget 2: two polls of `running`, then the wake-up check). */
function budgetEscalated(): OperationRecord {
  let r = observing({ ...FAST, maxStatusRequests: 2 });
  r = poll(r, r.schedule.nextPollAtMs!, running);
  expect(r.localState).toBe('escalated');
  return r;
}

function runEntries(steps: StepEntry[][]): number[] {
  return steps.flat().map((e) => e.sequence);
}

// ---------------------------------------------------------------------------------------------------------

describe('happy path (C2, P3, B2, P6, P9, R1, S1)', () => {
  it('C2, P3, B2, S1: create 202 -> accepted with Retry-After honoured -> reserve -> running -> success -> collect -> succeeded, entries contiguous', () => {
    const all: StepEntry[][] = [];
    const r0 = newRecord(FAST);
    expect(nextCommand(r0, T0)).toEqual({ kind: 'create' });
    const reserved = reserveCreateAttempt(r0, ctx(T0 + 10));
    if (reserved.kind !== 'reserved') throw new Error('expected reserved');
    expect(reserved.record.used.createAttempts).toBe(1);

    const created = afterCreate(reserved.record, createObs(T0 + 100, { retryAfter: '30' }), ctx(T0 + 100));
    let r = check(reserved.record, created);
    all.push(created.entries);
    expect(r.localState).toBe('accepted');
    expect(r.jobId).toBe('job_7ad2');
    expect(kinds(created.entries)).toEqual(['observation', 'create_pending->accepted']);
    // P3: the Retry-After of the create answer is a minimum for the first poll.
    expect(r.schedule).toEqual({ nextPollAtMs: T0 + 100 + 30_000, delaySource: 'provider_retry_after' });
    // T3: the create observation carries the controller's decision.
    expect(created.entries[0]!.body).toMatchObject({
      kind: 'observation',
      action: 'create',
      httpStatus: 202,
      headers: { 'retry-after': '30' },
      decision: 'wait',
      nextPollAt: new Date(T0 + 30_100).toISOString(),
      delaySource: 'provider_retry_after',
    });
    expect(nextCommand(r, T0 + 200)).toEqual({ kind: 'wait', untilMs: T0 + 30_100 });
    expect(onWake(r, ctx(T0 + 30_099))).toEqual({ kind: 'not_yet', atMs: T0 + 30_100 });

    const woke = onWake(r, ctx(T0 + 30_100));
    if (woke.kind !== 'read_status') throw new Error('expected read_status');
    // B2: the counter is incremented before the request is sent, and persisted in the record.
    expect(woke.record.used.statusRequests).toBe(1);
    const firstAnswer = afterStatus(woke.record, running(T0 + 30_200, { progress: 1 }), ctx(T0 + 30_200));
    r = check(woke.record, firstAnswer);
    all.push(firstAnswer.entries);
    // P8: progress 1 is recorded, never completion.
    expect(r.localState).toBe('observing');
    expect(r.remote.progress).toBe(1);
    expect(nextCommand(r, r.schedule.nextPollAtMs!)).toEqual({ kind: 'read_status' });

    const woke2 = onWake(r, ctx(r.schedule.nextPollAtMs!));
    if (woke2.kind !== 'read_status') throw new Error('expected read_status');
    const success = afterStatus(
      woke2.record,
      done(woke2.record.schedule.reservedAtMs! + 50),
      ctx(woke2.record.schedule.reservedAtMs! + 50),
    );
    r = check(woke2.record, success);
    all.push(success.entries);
    // P9: the status read is a read; collection is a separate action.
    expect(r.localState).toBe('result_collecting');
    expect(r.result).toBeNull();
    const at = woke2.record.schedule.reservedAtMs! + 100;
    expect(nextCommand(r, at)).toEqual({ kind: 'collect' });

    const collected = afterCollect(r, collectObs(at), VALID, ctx(at));
    r = check(r, collected);
    all.push(collected.entries);
    expect(kinds(collected.entries)).toEqual(['observation', 'artifact', 'result_collecting->succeeded']);
    expect(collected.entries[0]!.body).toMatchObject({ action: 'collect', decision: 'stop' });
    expect(r.localState).toBe('succeeded');
    expect(r.result?.validation).toBe('valid');
    expect(nextCommand(r, at)).toEqual({ kind: 'finished' });
    expect(r.used.statusRequests).toBe(2);
    // The whole run is one contiguous journal after the intent (1) and the first transition (2).
    const seqs = runEntries(all);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => 3 + i));
    expect(operationSummary(r)).toMatchObject({
      localState: 'succeeded',
      jobId: 'job_7ad2',
      statusRequestsUsed: 2,
      escalation: null,
      result: VALID.result,
    });
  });

  it('C3: a synchronous success (200 with the result) goes to result collection under the same operation, then succeeds', () => {
    const r0 = newRecord(FAST);
    const sync = afterCreate(
      r0,
      createObs(T0 + 100, {
        httpStatus: 200,
        remoteJobId: undefined,
        remoteState: 'done',
        category: 'success',
        resultReference: { inline: { total: 3 } },
      }),
      ctx(T0 + 100),
    );
    let r = check(r0, sync);
    expect(r.localState).toBe('result_collecting');
    expect(r.operationId).toBe(r0.operationId);
    expect(nextCommand(r, T0 + 100)).toEqual({ kind: 'collect' });
    r = check(r, afterCollect(r, collectObs(T0 + 200), VALID, ctx(T0 + 200)));
    expect(r.localState).toBe('succeeded');
  });

  it('S1, R4: a collected result that failed validation is never succeeded; accepting it is a recorded human decision (A1)', () => {
    const a = acceptedRecord();
    let r = poll(a, a.schedule.nextPollAtMs!, done);
    const at = r.journal.observations.at(-1)!.atMs + 5;
    r = check(r, afterCollect(r, collectObs(at), INVALID, ctx(at)));
    expect(r.localState).toBe('escalated');
    expect(r.escalation?.reason).toBe('result_validation_failed');
    expect(optionsOf(r)).toEqual(['accept_result', 'retry_collect', 'close', 'inspect_provider_console']);
    const accepted = notRefused(
      applyDecision(
        r,
        { option: 'accept_result', approvedBy: 'bob@example.com', reason: 'checksum field known to be wrong' },
        ctx(at + 10),
      ),
    );
    r = check(r, accepted);
    expect(kinds(accepted.entries)).toEqual([
      'decision',
      'escalated->result_collecting',
      'result_collecting->succeeded',
    ]);
    expect(r.localState).toBe('succeeded');
    expect(r.result).toMatchObject({ validation: 'invalid', acceptedBy: 'bob@example.com' });
    expect(nextCommand(r, at + 10)).toEqual({ kind: 'finished' });
  });

  it.each([
    [
      'R4: a collect answered 404 is result_unavailable, never succeeded',
      collectObs(0, { httpStatus: 404 }),
      { repeatableCollect: true },
    ],
    [
      'R4, R5: a transient collect failure is not retried when collecting is not safe to repeat',
      collectObs(0, { transport: 'ambiguous', httpStatus: undefined }),
      { repeatableCollect: false },
    ],
  ])('%s', (_t, o, caps) => {
    const a = acceptedRecord();
    let r = poll(a, a.schedule.nextPollAtMs!, done);
    const at = r.journal.observations.at(-1)!.atMs + 5;
    const step = afterCollect(r, { ...o, receivedAtMs: at }, {}, ctx(at, { capabilities: { cancel: true, ...caps } }));
    r = check(r, step);
    expect(kinds(step.entries)).toEqual([
      'observation',
      'result_collecting->result_unavailable',
      'result_unavailable->escalated',
      'escalation',
    ]);
    expect(r.localState).toBe('escalated');
    expect(r.result).toBeNull();
  });

  it('R5: a transient collect failure is retried after a backoff when collecting is safe to repeat', () => {
    const a = acceptedRecord();
    let r = poll(a, a.schedule.nextPollAtMs!, done);
    const at = r.journal.observations.at(-1)!.atMs + 5;
    r = check(r, afterCollect(r, collectObs(at, { httpStatus: 503 }), {}, ctx(at)));
    expect(r.localState).toBe('result_collecting');
    expect(r.used.transportFailures).toBe(1);
    expect(r.schedule.nextPollAtMs).toBeGreaterThan(at);
    expect(nextCommand(r, at)).toEqual({ kind: 'wait', untilMs: r.schedule.nextPollAtMs });
    expect(nextCommand(r, r.schedule.nextPollAtMs!)).toEqual({ kind: 'collect' });
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('create and idempotency (C2, I3, U1-U4, H4)', () => {
  const ambiguous: [string, Partial<Observation>][] = [
    [
      'a lost response (transport ambiguous)',
      { transport: 'ambiguous', httpStatus: undefined, remoteJobId: undefined, errorCategory: 'timeout_after_send' },
    ],
    ['HTTP 502', { httpStatus: 502, remoteJobId: undefined }],
    ['an answer cut off at the size limit', { transport: 'body_too_large', httpStatus: 202, remoteJobId: undefined }],
  ];
  const methods: ReconciliationMethod[] = ['same_token_resend', 'list_by_client_reference', 'lookup_by_token'];

  it.each(ambiguous.flatMap(([what, o]) => methods.map((m) => [what, m, o] as const)))(
    'U1, U2: %s on create -> create_unknown -> reconciliation by %s',
    (_w, method, o) => {
      const r0 = newRecord(FAST);
      const step = afterCreate(r0, createObs(T0 + 100, o), ctx(T0 + 100, { reconciliation: method }));
      const r = check(r0, step);
      expect(kinds(step.entries)).toEqual([
        'observation',
        'create_pending->create_unknown',
        'create_unknown->reconciliation',
      ]);
      expect(r.localState).toBe('reconciliation');
      // H5: a lost answer and a 5xx count against the transport budget; a cut-off answer did arrive.
      expect(r.used.transportFailures).toBe(o.transport === 'body_too_large' ? 0 : 1);
      expect(r.schedule.nextPollAtMs).toBeGreaterThan(T0 + 100);
      expect(r.schedule.nextPollAtMs).toBeLessThanOrEqual(CREATE_DEADLINE);
      // Re-sending create with the same token is a create request: it reserves a create attempt first (B2, I3).
      expect(nextCommand(r, r.schedule.nextPollAtMs!, method)).toEqual({
        kind: 'reconcile',
        reservesCreateAttempt: method === 'same_token_resend',
      });
    },
  );

  it.each(ambiguous)(
    'U2: %s on create with no reconciliation method escalates create_unknown (at-most-once cannot be proven)',
    (_w, o) => {
      const r0 = newRecord(FAST);
      const step = afterCreate(r0, createObs(T0 + 100, o), ctx(T0 + 100, { reconciliation: 'none' }));
      const r = check(r0, step);
      expect(kinds(step.entries)).toEqual([
        'observation',
        'create_pending->create_unknown',
        'create_unknown->escalated',
        'escalation',
      ]);
      expect(r.escalation?.reason).toBe('create_unknown');
      expect(r.escalation?.message.detail).toMatch(/at-most-once/);
      // E3: the create carries no token and is not idempotent: re-sending it could start a second job.
      expect(optionsOf(r)).toEqual(['close', 'inspect_provider_console']);
      expect(nextCommand(r, T0 + 200).kind).toBe('await_decision');
      const withToken = afterCreate(
        r0,
        createObs(T0 + 100, o),
        ctx(T0 + 100, { reconciliation: 'none', capabilities: { ...CAPS, sameTokenResend: true } }),
      );
      expect(optionsOf(check(r0, withToken))).toEqual(['retry_create_same_token', 'close', 'inspect_provider_console']);
    },
  );

  it.each([
    // Nothing ever reached the provider: the deadline passed, it is not the provider's failure.
    [
      'a request that never left (not_sent)',
      {
        transport: 'not_sent',
        httpStatus: undefined,
        remoteJobId: undefined,
        errorCategory: 'connect_refused',
      } as Partial<Observation>,
      'deadline_exceeded',
    ],
    [
      'HTTP 429 without Retry-After',
      { httpStatus: 429, remoteJobId: undefined } as Partial<Observation>,
      'provider_failure',
    ],
  ])('I3: %s is retried with the same token within the create deadline, then stops after it (U4)', (_w, o, reason) => {
    let r = newRecord(FAST);
    const token = r.idempotencyToken;
    let at = T0 + 100;
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(nextCommand(r, at)).toEqual({ kind: 'create' });
      const reserved = reserveCreateAttempt(r, ctx(at));
      if (reserved.kind !== 'reserved') throw new Error('expected reserved');
      expect(reserved.record.used.createAttempts).toBe(attempt);
      r = check(reserved.record, afterCreate(reserved.record, createObs(at + 10, o), ctx(at + 10)));
      expect(r.localState).toBe('create_pending');
      expect(r.idempotencyToken).toBe(token);
      expect(r.schedule.nextPollAtMs).toBeGreaterThan(at + 10);
      expect(nextCommand(r, at + 11).kind).toBe('wait');
      at = r.schedule.nextPollAtMs!;
    }
    const late = reserveCreateAttempt(r, ctx(CREATE_DEADLINE));
    if (late.kind !== 'stopped') throw new Error('expected a stop at the create deadline');
    const stopped = check(r, late.step);
    expect(stopped.localState).toBe('escalated');
    expect(stopped.escalation?.reason).toBe(reason);
    expect(stopped.used.createAttempts).toBe(3);
    expect(optionsOf(stopped)).not.toContain('extend');
    expect(optionsOf(stopped)).not.toContain('cancel_at_provider');
  });

  it('U4: a create reserved but never sent (its worker died) ends at the create deadline as one never reserved: deadline_exceeded', () => {
    const r0 = newRecord(FAST);
    const reserved = reserveCreateAttempt(r0, ctx(T0 + 100));
    if (reserved.kind !== 'reserved') throw new Error('expected reserved');
    const late = reserveCreateAttempt(reserved.record, ctx(CREATE_DEADLINE));
    if (late.kind !== 'stopped') throw new Error('expected a stop at the create deadline');
    const never = reserveCreateAttempt(r0, ctx(CREATE_DEADLINE));
    if (never.kind !== 'stopped') throw new Error('expected a stop at the create deadline');
    expect(late.step.record.escalation?.reason).toBe('deadline_exceeded');
    expect(never.step.record.escalation?.reason).toBe('deadline_exceeded');
    expect(late.step.record.escalation?.message.detail).toContain('before any create request reached the provider');
  });

  it('I3, U4: a 429 whose Retry-After reaches past the create deadline stops instead of waiting past it', () => {
    const r0 = newRecord(FAST);
    const r = check(
      r0,
      afterCreate(
        r0,
        createObs(T0 + 100, { httpStatus: 429, remoteJobId: undefined, retryAfter: '600' }),
        ctx(T0 + 100),
      ),
    );
    expect(r.localState).toBe('escalated');
    expect(r.escalation?.message.detail).toMatch(/create deadline/);
  });

  it('H1: persistent 429s on create escalate as rate_limited', () => {
    let r = newRecord({ ...FAST, maxRateLimited: 2 });
    r = check(r, afterCreate(r, createObs(T0 + 100, { httpStatus: 429, remoteJobId: undefined }), ctx(T0 + 100)));
    expect(r.localState).toBe('create_pending');
    const at = r.schedule.nextPollAtMs!;
    r = check(r, afterCreate(r, createObs(at, { httpStatus: 429, remoteJobId: undefined }), ctx(at)));
    expect(r.escalation?.reason).toBe('rate_limited');
    expect(r.used.rateLimited).toBe(2);
  });

  it.each([
    ['H4: 401', 401, 'authorization_denied', ['close', 'inspect_provider_console']],
    ['H4: 403', 403, 'authorization_denied', ['close', 'inspect_provider_console']],
    [
      'C2: 422 (the provider refused our request: request_rejected, not a provider failure)',
      422,
      'request_rejected',
      ['retry_create_same_token', 'close', 'inspect_provider_console'],
    ],
    [
      'C2: 400 (request_rejected)',
      400,
      'request_rejected',
      ['retry_create_same_token', 'close', 'inspect_provider_console'],
    ],
  ])('%s on create stops at once and escalates', (_t, status, reason, options) => {
    const r0 = newRecord(FAST);
    const step = afterCreate(
      r0,
      createObs(T0 + 100, { httpStatus: status, remoteJobId: undefined, providerError: { code: 'invalid' } }),
      ctx(T0 + 100),
    );
    const r = check(r0, step);
    expect(kinds(step.entries)).toEqual(['observation', 'create_pending->escalated', 'escalation']);
    expect(step.entries[0]!.body).toMatchObject({ decision: 'escalate' });
    expect(r.escalation?.reason).toBe(reason);
    expect(optionsOf(r)).toEqual(options);
    expect(r.jobId).toBeUndefined();
    expect(nextCommand(r, T0 + 200).kind).toBe('await_decision');
  });

  it('V1, C2: a 2xx create answer naming only a poll URL is an acceptance: the job is known by its poll URL', () => {
    const r0 = newRecord(FAST);
    const url = 'https://api.example.test/operations/abc';
    const r = check(
      r0,
      afterCreate(
        r0,
        createObs(T0 + 100, { remoteJobId: undefined, statusUrl: url, pollReading: 'monitor' }),
        ctx(T0 + 100),
      ),
    );
    expect(r.localState).toBe('accepted');
    expect(r.jobId).toBeUndefined();
    expect(r.remote).toMatchObject({ statusUrl: url, pollReading: 'monitor' });
    expect(nextCommand(r, r.schedule.nextPollAtMs!).kind).toBe('read_status');
  });

  it('C2: a 2xx create answer that names no job is not an acceptance: create_unknown escalation', () => {
    const r0 = newRecord(FAST);
    const r = check(
      r0,
      afterCreate(r0, createObs(T0 + 100, { remoteJobId: undefined, statusUrl: undefined }), ctx(T0 + 100)),
    );
    expect(r.localState).toBe('escalated');
    expect(r.escalation?.reason).toBe('create_unknown');
    expect(r.jobId).toBeUndefined();
  });

  it('C2: a 2xx create answer that named a job but could not be used says which job, never that it named none', () => {
    const r0 = newRecord(FAST);
    const r = check(
      r0,
      afterCreate(
        r0,
        createObs(T0 + 100, { statusUrl: undefined, parseProblem: 'field state is not a string' }),
        ctx(T0 + 100),
      ),
    );
    expect(r.escalation?.reason).toBe('create_unknown');
    expect(r.escalation?.message.detail).toContain('named job job_7ad2');
    expect(r.escalation?.message.detail).toContain('field state is not a string');
    expect(r.escalation?.message.detail).not.toContain('names no usable job');
  });

  it('U3: the same token answered with a second, different job ID escalates job_id_conflict and keeps both IDs', () => {
    const r0 = newRecord(FAST);
    // The first answer named job_A but could not be used (a parse problem): it is kept as a remote fact.
    let r = check(
      r0,
      afterCreate(
        r0,
        createObs(T0 + 100, { remoteJobId: 'job_A', parseProblem: 'statusUrl: not a URL' }),
        ctx(T0 + 100),
      ),
    );
    expect(r.escalation?.reason).toBe('create_unknown');
    expect(r.remote.jobIds).toEqual(['job_A']);
    // A human authorises a same-token re-send; it answers with another job.
    r = check(
      r,
      notRefused(
        applyDecision(
          r,
          { option: 'retry_create_same_token', approvedBy: 'alice@example.com', reason: 'find out' },
          ctx(T0 + 200),
        ),
      ),
    );
    expect(r.localState).toBe('reconciliation');
    const step = afterReconcile(r, reconcileObs(T0 + 300, { remoteJobId: 'job_B' }), ctx(T0 + 300));
    const conflict = check(r, step);
    expect(conflict.localState).toBe('escalated');
    expect(conflict.escalation?.reason).toBe('job_id_conflict');
    expect(conflict.remote.jobIds).toEqual(['job_A', 'job_B']);
    expect(conflict.escalation?.message.providerJobIds).toEqual(['job_A', 'job_B']);
    expect(conflict.jobId).toBeUndefined();
    // U3: automation stops; a human may adopt one of the two, never gets another create.
    expect(optionsOf(conflict)).toEqual(['adopt_job', 'close', 'inspect_provider_console']);
    const adopted = check(
      conflict,
      notRefused(
        applyDecision(
          conflict,
          { option: 'adopt_job', jobId: 'job_B', approvedBy: 'alice@example.com', reason: 'job_A was never started' },
          ctx(T0 + 400),
        ),
      ),
    );
    expect(adopted).toMatchObject({ localState: 'observing', jobId: 'job_B' });
    expect(nextCommand(adopted, T0 + 400)).toEqual({ kind: 'read_status' });
  });

  it('U3: a create answer with a job ID different from one already reported escalates job_id_conflict', () => {
    const r0 = { ...newRecord(FAST), remote: { jobIds: ['job_A'] } };
    const r = check(r0, afterCreate(r0, createObs(T0 + 100, { remoteJobId: 'job_B' }), ctx(T0 + 100)));
    expect(r.escalation?.reason).toBe('job_id_conflict');
    expect(r.remote.jobIds).toEqual(['job_A', 'job_B']);
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('reconciliation (U2, U4)', () => {
  function reconciling(): OperationRecord {
    const r0 = newRecord(FAST);
    return check(
      r0,
      afterCreate(
        r0,
        createObs(T0 + 100, { transport: 'ambiguous', httpStatus: undefined, remoteJobId: undefined }),
        ctx(T0 + 100),
      ),
    );
  }

  it('U2: a match means the provider has our job: accepted, first poll scheduled', () => {
    const r = reconciling();
    const step = afterReconcile(r, reconcileObs(T0 + 5_000, { remoteJobId: 'job_7ad2' }), ctx(T0 + 5_000));
    const a = check(r, step);
    expect(kinds(step.entries)).toEqual(['observation', 'reconciliation->accepted']);
    expect(a).toMatchObject({ localState: 'accepted', jobId: 'job_7ad2', acceptedAtMs: T0 + 5_000 });
    expect(a.schedule.nextPollAtMs).toBeGreaterThan(T0 + 5_000);
    expect(a.schedule.delaySource).toBe('local_backoff');
  });

  it.each([
    ['404', { httpStatus: 404 }],
    ['an empty 200', { httpStatus: 200 }],
  ])('U2, U4: no job (%s) before the create deadline: look again later, never after the create deadline', (_t, o) => {
    const r = reconciling();
    const later = check(r, afterReconcile(r, reconcileObs(T0 + 5_000, o), ctx(T0 + 5_000)));
    expect(later.localState).toBe('reconciliation');
    expect(later.schedule.nextPollAtMs).toBeGreaterThan(T0 + 5_000);
    expect(later.schedule.nextPollAtMs).toBeLessThanOrEqual(CREATE_DEADLINE);
  });

  it.each([
    ['404', { httpStatus: 404 }],
    ['an empty 200', { httpStatus: 200 }],
  ])('U2, M2: no job (%s) after the create deadline: failed, a remote fact', (_t, o) => {
    const r = reconciling();
    const step = afterReconcile(r, reconcileObs(CREATE_DEADLINE + 1, o), ctx(CREATE_DEADLINE + 1));
    const f = check(r, step);
    expect(kinds(step.entries)).toEqual(['observation', 'reconciliation->failed']);
    expect(f.localState).toBe('failed');
    expect(nextCommand(f, CREATE_DEADLINE + 2)).toEqual({ kind: 'finished' });
  });

  it('I3, U2: a poll policy slower than the create window does not use it up: a lost create is looked up and sent again with the same token before the create deadline', () => {
    for (const method of ['list_by_client_reference', 'same_token_resend'] as const) {
      const hourly: PollPolicyInput = { ...FAST, baseDelayMs: 3_600_000, maxDelayMs: 3_600_000 };
      const r0 = newRecord(hourly);
      const lost = createObs(T0 + 100, { transport: 'ambiguous', httpStatus: undefined, remoteJobId: undefined });
      const r = check(r0, afterCreate(r0, lost, ctx(T0 + 100, { reconciliation: method })));
      expect(r.localState).toBe('reconciliation');
      // The hourly backoff would land past the create deadline: the next call is brought into the window's middle.
      const firstAt = r.schedule.nextPollAtMs!;
      expect(firstAt).toBe(T0 + 100 + Math.floor((CREATE_DEADLINE - T0 - 100) / 2));
      expect(r.schedule.delaySource).toBe('local_backoff');
      expect(nextCommand(r, firstAt, method)).toEqual({
        kind: 'reconcile',
        reservesCreateAttempt: method === 'same_token_resend',
      });
      if (method === 'same_token_resend') continue;
      // The lookup finds no job: the create is sent again, again inside the window, never after it.
      const noJob = check(
        r,
        afterReconcile(r, reconcileObs(firstAt, { httpStatus: 404 }), ctx(firstAt, { reconciliation: method })),
      );
      expect(noJob.localState).toBe('reconciliation');
      const resendAt = noJob.schedule.nextPollAtMs!;
      expect(resendAt).toBeGreaterThan(firstAt);
      expect(resendAt).toBeLessThan(CREATE_DEADLINE);
      expect(nextCommand(noJob, resendAt, method)).toEqual({ kind: 'reconcile', reservesCreateAttempt: true });
    }
  });

  it('I3, P3: a Retry-After reaching past the create deadline is never brought forward: a human decides (create_unknown)', () => {
    const r = reconciling();
    const retryAfter = String((CREATE_DEADLINE - T0) / 1000 + 60);
    const step = afterReconcile(r, reconcileObs(T0 + 5_000, { httpStatus: 503, retryAfter }), ctx(T0 + 5_000));
    const e = check(r, step);
    expect(e.localState).toBe('escalated');
    expect(e.escalation?.reason).toBe('create_unknown');
    expect(nextCommand(e, T0 + 6_000).kind).toBe('await_decision');
  });

  it('U2, H4: 401 on reconciliation escalates authorization_denied', () => {
    const r = reconciling();
    const e = check(r, afterReconcile(r, reconcileObs(T0 + 5_000, { httpStatus: 401 }), ctx(T0 + 5_000)));
    expect(e.escalation?.reason).toBe('authorization_denied');
  });

  it('U2, S5: reconciliation failures past the create deadline escalate create_unknown', () => {
    const r = reconciling();
    const e = check(
      r,
      afterReconcile(r, reconcileObs(CREATE_DEADLINE + 1, { httpStatus: 503 }), ctx(CREATE_DEADLINE + 1)),
    );
    expect(e.escalation?.reason).toBe('create_unknown');
    expect(optionsOf(e)).not.toContain('extend');
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('status reads (P1-P8, H1-H5, S1-S5) end to end through onWake/afterStatus', () => {
  it.each([
    [
      'H1: 429 with Retry-After waits at least that long',
      { httpStatus: 429, retryAfter: '45' },
      45_000,
      'provider_retry_after',
    ],
    [
      'H1: 503 with Retry-After seconds waits at least that long',
      { httpStatus: 503, retryAfter: '20' },
      20_000,
      'provider_retry_after',
    ],
    [
      'H1: 503 with Retry-After as an HTTP-date waits until that date',
      { httpStatus: 503, retryAfter: 'DATE+90' },
      90_000,
      'provider_retry_after',
    ],
    [
      'P3: a valid poll_after_seconds hint is used',
      { remoteState: 'running', category: 'pending', hints: { pollAfterSeconds: 7 } },
      7_000,
      'provider_poll_hint',
    ],
  ] as const)('%s', (_t, o, minDelayMs, source) => {
    const r = observing();
    const at = r.schedule.nextPollAtMs!;
    const answered = at + 10;
    const retryAfter =
      'retryAfter' in o && o.retryAfter.startsWith('DATE+')
        ? new Date(answered + 90_000).toUTCString()
        : 'retryAfter' in o
          ? o.retryAfter
          : undefined;
    const after = poll(r, at, (t) => statusObs(t, { ...o, ...(retryAfter !== undefined ? { retryAfter } : {}) }));
    expect(after.localState).toBe('observing');
    expect(after.schedule.delaySource).toBe(source);
    // HTTP-dates have second precision.
    expect(after.schedule.nextPollAtMs).toBeGreaterThanOrEqual(answered + minDelayMs - 1_000);
    expect(after.journal.observations.at(-1)!.body).toMatchObject({ delaySource: source, decision: 'wait' });
  });

  it('H1: 429 without Retry-After increases the delay sharply; a storm escalates rate_limited', () => {
    let r = observing({ ...FAST, maxRateLimited: 3 });
    const delays: number[] = [];
    for (let i = 0; i < 2; i++) {
      const at = r.schedule.nextPollAtMs!;
      r = poll(r, at, (t) => statusObs(t, { httpStatus: 429 }));
      expect(r.localState).toBe('observing');
      delays.push(r.schedule.nextPollAtMs! - (at + 10));
    }
    expect(delays[0]).toBeGreaterThan(FAST.maxDelayMs! / 2);
    expect(r.used.consecutiveRateLimited).toBe(2);
    r = poll(r, r.schedule.nextPollAtMs!, (t) => statusObs(t, { httpStatus: 429 }));
    expect(r.escalation?.reason).toBe('rate_limited');
    expect(r.used.rateLimited).toBe(3);
  });

  it.each([
    [
      'H3: a 404 inside the consistency window after acceptance waits (still accepted: no state was read)',
      1_000,
      'accepted',
    ],
    ['H3: a 404 after the consistency window escalates with the job ID and timestamps', 60_000, 'escalated'],
  ])('%s', (_t, sinceAcceptMs, state) => {
    const a = acceptedRecord({ ...FAST, baseDelayMs: 500, maxDelayMs: 500 });
    const at = T0 + 1_000 + sinceAcceptMs;
    const r = poll(a, at, (t) => statusObs(t, { httpStatus: 404 }));
    expect(r.localState).toBe(state);
    if (state === 'accepted') expect(r.schedule.nextPollAtMs).toBeGreaterThan(at);
    if (state === 'escalated') {
      expect(r.escalation?.reason).toBe('provider_failure');
      expect(r.escalation?.message.detail).toMatch(/job_7ad2/);
      expect(r.escalation?.message.detail).toMatch(/accepted at 2026-11-29T10:00:01/);
    }
  });

  it.each([
    ['H4: 401', 401],
    ['H4: 403', 403],
  ])('%s on a status read stops at once: authorization_denied, no retry offered', (_t, status) => {
    const r = observing();
    const e = poll(r, r.schedule.nextPollAtMs!, (t) => statusObs(t, { httpStatus: status }));
    expect(e.escalation?.reason).toBe('authorization_denied');
    expect(optionsOf(e)).toEqual(['close', 'inspect_provider_console']);
    expect(nextCommand(e, e.escalation!.raisedAtMs + 1).kind).toBe('await_decision');
  });

  it.each([
    ['H5: a 5xx', { httpStatus: 500, providerRequestId: 'req-9' }],
    ['H5: a network error after sending', { transport: 'ambiguous', httpStatus: undefined, errorCategory: 'reset' }],
    ['H5: a request that never left', { transport: 'not_sent', httpStatus: undefined, errorCategory: 'dns' }],
  ] as const)('%s counts against the transport-failure budget; S5 stops when it is spent', (_t, o) => {
    let r = observing({ ...FAST, maxTransportFailures: 2 });
    r = poll(r, r.schedule.nextPollAtMs!, (t) => statusObs(t, o));
    expect(r.localState).toBe('observing');
    expect(r.used.transportFailures).toBe(1);
    r = poll(r, r.schedule.nextPollAtMs!, (t) => statusObs(t, o));
    expect(r.localState).toBe('escalated');
    expect(r.escalation?.reason).toBe('provider_failure');
    expect(r.escalation?.message.detail).toMatch(/S5/);
  });

  it.each([
    ['S2: a terminal failure', { remoteState: 'failed', category: 'failure', providerError: { code: 'E42' } }],
    ['S2, P1: an expired job', { remoteState: 'expired', category: 'expired' }],
  ] as const)('%s ends in failed (a remote fact) with zero further commands', (_t, o) => {
    const r = observing();
    const f = poll(r, r.schedule.nextPollAtMs!, (t) => statusObs(t, o));
    expect(f.localState).toBe('failed');
    // The provider's error, where it gave one, is kept for the caller.
    expect(operationSummary(f).providerError).toEqual('providerError' in o ? o.providerError : undefined);
    expect(nextCommand(f, RESULT_DEADLINE + 1)).toEqual({ kind: 'finished' });
  });

  it('P1, S2: a state outside the table escalates unknown_state with zero further commands that send', () => {
    const r = observing();
    const e = poll(r, r.schedule.nextPollAtMs!, (t) =>
      statusObs(t, { remoteState: 'frobnicating', category: 'unknown' }),
    );
    expect(e.escalation?.reason).toBe('unknown_state');
    expect(e.remote.state).toBe('frobnicating');
    for (const at of [e.escalation!.raisedAtMs, RESULT_DEADLINE + 1])
      expect(nextCommand(e, at).kind).toBe('await_decision');
    expect(onWake(e, ctx(RESULT_DEADLINE - 1)).kind).toBe('stopped');
  });

  it('P7: success without the required result reference is not ready: escalated, never collected', () => {
    const r = observing();
    const e = poll(r, r.schedule.nextPollAtMs!, (t) => statusObs(t, { remoteState: 'succeeded', category: 'success' }));
    expect(e.localState).toBe('escalated');
    expect(e.escalation?.reason).toBe('unknown_state');
    expect(e.escalation?.message.detail).toMatch(/P7/);
    expect(nextCommand(e, e.escalation!.raisedAtMs).kind).toBe('await_decision');
  });

  it("P7: running after the job's own reported expiry escalates", () => {
    const r = observing();
    const e = poll(r, r.schedule.nextPollAtMs!, (t) => running(t, { expiresAt: new Date(t - 1_000).toISOString() }));
    expect(e.escalation?.reason).toBe('unknown_state');
  });

  it('P5, S3: on waking after the deadline, the deadline is checked first: no request is reserved', () => {
    const r = observing();
    const woke = onWake(r, ctx(RESULT_DEADLINE));
    if (woke.kind !== 'stopped') throw new Error('expected stopped');
    const e = check(r, woke.step);
    expect(kinds(woke.step.entries)).toEqual([
      'observing->result_timed_out',
      'result_timed_out->escalated',
      'escalation',
    ]);
    expect(e.used.statusRequests).toBe(r.used.statusRequests);
    expect(e.escalation?.reason).toBe('deadline_exceeded');
  });

  it('S3: an answer arriving after the deadline stops even if the state just changed to success', () => {
    const r = observing();
    const woke = onWake(r, ctx(RESULT_DEADLINE - 100));
    if (woke.kind !== 'read_status') throw new Error('expected read_status');
    const e = check(woke.record, afterStatus(woke.record, done(RESULT_DEADLINE + 1), ctx(RESULT_DEADLINE + 1)));
    expect(e.localState).toBe('escalated');
    expect(e.escalation?.reason).toBe('deadline_exceeded');
    expect(e.result).toBeNull();
  });

  it('P5: a wake-up long after the planned time sends exactly one request; a second wake-up with it open sends none', () => {
    const r = observing();
    const late = r.schedule.nextPollAtMs! + 600_000;
    const woke = onWake(r, ctx(late));
    if (woke.kind !== 'read_status') throw new Error('expected read_status');
    expect(woke.record.used.statusRequests).toBe(r.used.statusRequests + 1);
    expect(onWake(woke.record, ctx(late + 1))).toEqual({ kind: 'not_yet', atMs: late + 1 });
  });

  it('S4, B2: the budget is checked before scheduling: the last allowed answer escalates and no request exceeds the budget', () => {
    const e = budgetEscalated();
    expect(e.escalation?.reason).toBe('request_budget_exhausted');
    expect(e.used.statusRequests).toBe(2);
    expect(e.budgets.maxStatusRequests).toBe(2);
    const woke = onWake({ ...e, localState: 'observing', escalation: null }, ctx(e.escalation!.raisedAtMs + 1));
    expect(woke.kind).toBe('stopped');
  });

  it('P6: a 200 saying running says nothing about success', () => {
    const r = observing();
    const again = poll(r, r.schedule.nextPollAtMs!, (t) => running(t, { progress: 0.99 }));
    expect(again.localState).toBe('observing');
    expect(again.result).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('cancellation (X1-X3, M2)', () => {
  it.each([
    [
      'the adapter has no cancel endpoint',
      () => observing(),
      { cancel: false, repeatableCollect: true },
      'ASYNCJOB_ERR_CANCEL_UNSUPPORTED',
    ],
    [
      'a cancel was already requested (never twice, X3)',
      () => cancelling(),
      CAPS,
      'ASYNCJOB_ERR_CANCEL_ALREADY_REQUESTED',
    ],
    ['no job exists yet', () => newRecord(FAST), CAPS, 'ASYNCJOB_ERR_CANCEL_NOT_ALLOWED'],
    [
      'the operation is escalated (a decision cancels)',
      () => budgetEscalated(),
      CAPS,
      'ASYNCJOB_ERR_CANCEL_NOT_ALLOWED',
    ],
  ])('X1: a cancel is refused when %s', (_t, make, capabilities, code) => {
    const r = make();
    const refused = requestCancel(
      r,
      { requestedBy: 'alice@example.com', reason: 'stop' },
      ctx(T0 + 50_000, { capabilities }),
    );
    expect(refused).toMatchObject({ kind: 'refused', code });
  });

  it('X5: a cancel refused only because no job is known yet waits for the job; one refused for any other reason does not', () => {
    const intent = { requestedBy: 'alice@example.com', reason: 'stop' };
    const at = ctx(T0 + 50_000);
    for (const localState of ['create_pending', 'create_unknown', 'reconciliation'] as const) {
      const r = { ...newRecord(FAST), localState };
      const refused = requestCancel(r, intent, at);
      expect(isRefusal(refused) && cancelWaitsForJob(r, refused)).toBe(true);
    }
    const escalated = budgetEscalated();
    const notAllowed = requestCancel(escalated, intent, at);
    expect(isRefusal(notAllowed) && cancelWaitsForJob(escalated, notAllowed)).toBe(false);
    const noEndpoint = requestCancel(
      newRecord(FAST),
      intent,
      ctx(T0 + 50_000, { capabilities: { cancel: false, repeatableCollect: true } }),
    );
    expect(isRefusal(noEndpoint) && cancelWaitsForJob(newRecord(FAST), noEndpoint)).toBe(false);
  });

  it('X1, M2: the intent (who, why, expected effect) is recorded before any cancel call', () => {
    const r = observing();
    const at = r.schedule.nextPollAtMs! - 1;
    const step = notRefused(
      requestCancel(
        r,
        { requestedBy: 'alice@example.com', reason: 'budget cut', expectedEffect: 'the job stops, no charge' },
        ctx(at),
      ),
    );
    const c = check(r, step);
    expect(kinds(step.entries)).toEqual(['observing->cancel_requested']);
    expect(step.entries[0]).toMatchObject({
      actor: 'alice@example.com',
      body: { cause: 'cancel_request', reason: expect.stringContaining('budget cut') },
    });
    expect(c.cancel).toMatchObject({
      requestedBy: 'alice@example.com',
      reason: 'budget cut',
      expectedEffect: 'the job stops, no charge',
      requestedAtMs: at,
    });
    expect(c.cancel?.sentAtMs).toBeUndefined();
    // M2: ours, not the provider's.
    expect(c.remote.state).toBe('running');
    expect(c.deadlines.cancelDeadlineMs).toBe(at + FAST.cancelDeadlineMs!);
    expect(nextCommand(c, at)).toEqual({ kind: 'cancel' });
  });

  it.each([
    ['202', 202],
    ['409 (already final)', 409],
  ])('X1, X2: a cancel answered %s moves to cancelling and the status loop goes on', (_t, status) => {
    const r = observing();
    const at = r.schedule.nextPollAtMs! - 1;
    const req = check(r, notRefused(requestCancel(r, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
    const c = check(req, afterCancel(req, cancelObs(at + 5, { httpStatus: status }), ctx(at + 5)));
    expect(c.localState).toBe('cancelling');
    expect(c.cancel?.sentAtMs).toBe(at + 5);
    expect(nextCommand(c, c.schedule.nextPollAtMs!)).toEqual({ kind: 'read_status' });
  });

  it("X1, M2: a 409 stating the job's final view records that view and confirms it with a status read at once", () => {
    const r = observing();
    const at = r.schedule.nextPollAtMs! - 1;
    const req = check(r, notRefused(requestCancel(r, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
    const c = check(
      req,
      afterCancel(
        req,
        cancelObs(at + 5, { httpStatus: 409, remoteState: 'succeeded', category: 'success' }),
        ctx(at + 5),
      ),
    );
    expect(c.localState).toBe('cancelling');
    expect(c.remote).toMatchObject({ state: 'succeeded', category: 'success' });
    expect(c.schedule.nextPollAtMs).toBe(at + 5);
    // M1: the cancel answer is not a status read: success still needs one with its result reference.
    const s = poll(c, c.schedule.nextPollAtMs!, done);
    expect(s.localState).toBe('cancelling');
    expect(nextCommand(s, s.journal.observations.at(-1)!.atMs)).toEqual({ kind: 'collect' });
  });

  it('M1, X2: status cancelled after the cancel -> cancelled (the provider said so)', () => {
    const c = cancelling();
    const done2 = poll(c, c.schedule.nextPollAtMs!, (t) =>
      statusObs(t, { remoteState: 'cancelled', category: 'cancelled' }),
    );
    expect(done2.localState).toBe('cancelled');
    expect(nextCommand(done2, done2.journal.observations.at(-1)!.atMs)).toEqual({ kind: 'finished' });
  });

  it('X2, F3: a success that crossed its commit point during the cancel is collected and reported as succeeded', () => {
    const c = cancelling();
    const s = poll(c, c.schedule.nextPollAtMs!, done);
    expect(s.localState).toBe('cancelling');
    const at = s.journal.observations.at(-1)!.atMs + 1;
    expect(nextCommand(s, at)).toEqual({ kind: 'collect' });
    const step = afterCollect(s, collectObs(at), VALID, ctx(at));
    const r = check(s, step);
    expect(kinds(step.entries)).toEqual(['observation', 'artifact', 'cancelling->succeeded']);
    expect(r.localState).toBe('succeeded');
    expect(r.cancel?.requestedBy).toBe('alice@example.com');
  });

  it('X2: a failure reported during the cancel ends in failed', () => {
    const c = cancelling();
    const f = poll(c, c.schedule.nextPollAtMs!, (t) => statusObs(t, { remoteState: 'failed', category: 'failure' }));
    expect(f.localState).toBe('failed');
  });

  it('X3: no confirmation before the cancel deadline -> cancellation_unconfirmed escalation with job and trace, no second cancel offered', () => {
    const c = cancelling();
    const woke = onWake(c, ctx(c.deadlines.cancelDeadlineMs!));
    if (woke.kind !== 'stopped') throw new Error('expected stopped');
    const e = check(c, woke.step);
    expect(kinds(woke.step.entries)).toEqual([
      'cancelling->cancellation_unconfirmed',
      'cancellation_unconfirmed->escalated',
      'escalation',
    ]);
    expect(e.escalation?.reason).toBe('cancellation_unconfirmed');
    expect(e.escalation?.message).toMatchObject({ providerJobIds: ['job_7ad2'], traceId: 'trace-1' });
    expect(optionsOf(e)).not.toContain('cancel_at_provider');
    // An extension keeps waiting for the confirmation of the cancel already sent (X3).
    const x = check(
      e,
      notRefused(
        applyDecision(
          e,
          {
            option: 'extend',
            extendMs: 60_000,
            extraStatusRequests: 2,
            approvedBy: 'bob@example.com',
            reason: 'provider is slow',
          },
          ctx(c.deadlines.cancelDeadlineMs! + 10),
        ),
      ),
    );
    expect(x.localState).toBe('cancelling');
    expect(x.deadlines.cancelDeadlineMs).toBe(c.deadlines.cancelDeadlineMs! + 10 + 60_000);
  });

  it.each([
    ['a lost answer', { transport: 'ambiguous', httpStatus: undefined, errorCategory: 'timeout_after_send' }],
    ['a 500', { httpStatus: 500 }],
    ['a 502 from a gateway', { httpStatus: 502 }],
  ] as const)('X3: a cancel that may have arrived (%s) is never re-sent', (_t, o) => {
    const r = observing();
    const at = r.schedule.nextPollAtMs! - 1;
    const req = check(r, notRefused(requestCancel(r, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
    const e = check(req, afterCancel(req, cancelObs(at + 5, o), ctx(at + 5)));
    expect(e.escalation?.reason).toBe('cancellation_unconfirmed');
    expect(e.cancel?.sentAtMs).toBe(at + 5);
    expect(optionsOf(e)).not.toContain('cancel_at_provider');
    expect(requestCancel(e, { requestedBy: 'carol@example.com', reason: 'again' }, ctx(at + 6))).toMatchObject({
      kind: 'refused',
    });
    const x = check(
      e,
      notRefused(
        applyDecision(
          e,
          {
            option: 'extend',
            extendMs: 60_000,
            extraStatusRequests: 2,
            approvedBy: 'bob@example.com',
            reason: 'see if it stopped',
          },
          ctx(at + 10),
        ),
      ),
    );
    expect(x.localState).toBe('cancelling');
    expect(nextCommand(x, at + 10)).toEqual({ kind: 'read_status' });
  });

  it.each([
    ['a 2xx answer that cannot be read', { httpStatus: 202, parseProblem: 'not JSON' }, 'cancellation_unconfirmed'],
    ['HTTP 404', { httpStatus: 404 }, 'cancellation_unconfirmed'],
    ['HTTP 403 (H4)', { httpStatus: 403 }, 'authorization_denied'],
  ] as const)(
    'X3: a cancel that reached the provider (%s) is recorded as sent and never offered again',
    (_t, o, reason) => {
      const r = observing();
      const at = r.schedule.nextPollAtMs! - 1;
      const req = check(r, notRefused(requestCancel(r, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
      const e = check(req, afterCancel(req, cancelObs(at + 5, o), ctx(at + 5)));
      expect(e.escalation?.reason).toBe(reason);
      expect(e.cancel?.sentAtMs).toBe(at + 5);
      expect(optionsOf(e)).not.toContain('cancel_at_provider');
    },
  );

  it.each([
    ['HTTP 429', { httpStatus: 429, retryAfter: '7' }],
    ['HTTP 503', { httpStatus: 503, retryAfter: '7' }],
  ] as const)(
    'H1, X3: a cancel answered %s did not take effect: the intent stays unsent and the one call is made again after Retry-After',
    (_t, o) => {
      const r = observing();
      const at = r.schedule.nextPollAtMs! - 1;
      const req = check(r, notRefused(requestCancel(r, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
      const e = check(req, afterCancel(req, cancelObs(at + 5, o), ctx(at + 5)));
      expect(e.localState).toBe('cancel_requested');
      expect(e.escalation).toBeNull();
      expect(e.cancel?.sentAtMs).toBeUndefined();
      expect(e.schedule.nextPollAtMs).toBeGreaterThanOrEqual(at + 5 + 7_000);
      expect(nextCommand(e, e.schedule.nextPollAtMs!)).toEqual({ kind: 'cancel' });
      const accepted = check(
        e,
        afterCancel(e, cancelObs(e.schedule.nextPollAtMs! + 5), ctx(e.schedule.nextPollAtMs! + 5)),
      );
      expect(accepted.localState).toBe('cancelling');
    },
  );

  it('H1: a cancel answered 429 again and again stops at the 429 budget, still unsent', () => {
    let e = observing({ ...FAST, cancelDeadlineMs: 3_600_000 });
    let at = e.schedule.nextPollAtMs! - 1;
    e = check(e, notRefused(requestCancel(e, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
    for (let i = 0; i < 100 && e.localState === 'cancel_requested'; i++) {
      at = Math.max(at + 1, e.schedule.nextPollAtMs ?? at + 1);
      e = check(e, afterCancel(e, cancelObs(at, { httpStatus: 429 }), ctx(at)));
    }
    expect(e.escalation?.reason).toBe('rate_limited');
    expect(e.used.consecutiveRateLimited).toBe(e.budgets.maxRateLimited);
    expect(e.cancel?.sentAtMs).toBeUndefined();
  });

  it.each([501, 405])(
    'X1: a cancel answered %i means the provider does not support cancel for this job: escalated saying so, never retried',
    (status) => {
      const r = observing();
      const at = r.schedule.nextPollAtMs! - 1;
      const req = check(r, notRefused(requestCancel(r, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
      const e = check(req, afterCancel(req, cancelObs(at + 5, { httpStatus: status }), ctx(at + 5)));
      expect(e.localState).toBe('escalated');
      expect(e.escalation?.reason).toBe('cancellation_unconfirmed');
      expect(e.escalation?.message.detail).toContain('the provider does not support cancel for this job');
      expect(e.escalation?.message.detail).toContain(`HTTP ${status}`);
      expect(e.escalation?.message.detail).not.toContain('no usable answer');
      // Never retried: the call is recorded as sent, never offered or accepted again.
      expect(e.cancel?.sentAtMs).toBe(at + 5);
      expect(nextCommand(e, at + 10).kind).toBe('await_decision');
      expect(optionsOf(e)).not.toContain('cancel_at_provider');
      expect(requestCancel(e, { requestedBy: 'carol@example.com', reason: 'again' }, ctx(at + 6))).toMatchObject({
        kind: 'refused',
      });
    },
  );

  it('X1: a cancel refused before sending (no credential) escalates; a human may still authorise the one call', () => {
    const r = observing();
    const at = r.schedule.nextPollAtMs! - 1;
    const req = check(r, notRefused(requestCancel(r, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
    const e = check(
      req,
      afterCancel(
        req,
        cancelObs(at + 5, { transport: 'refused', httpStatus: undefined, errorCategory: 'credential_unavailable' }),
        ctx(at + 5),
      ),
    );
    expect(e.escalation?.reason).toBe('provider_failure');
    expect(e.cancel?.sentAtMs).toBeUndefined();
    expect(optionsOf(e)).toContain('cancel_at_provider');
    const again = check(
      e,
      notRefused(
        applyDecision(
          e,
          { option: 'cancel_at_provider', approvedBy: 'bob@example.com', reason: 'credential restored' },
          ctx(at + 100),
        ),
      ),
    );
    expect(nextCommand(again, at + 100)).toEqual({ kind: 'cancel' });
  });

  it('X1, X3: a cancel that could never be sent before the cancel deadline escalates; nothing is unconfirmed, a new cancel may be authorised', () => {
    const r = observing();
    const at = r.schedule.nextPollAtMs! - 1;
    const req = check(r, notRefused(requestCancel(r, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
    const deadline = req.deadlines.cancelDeadlineMs!;
    const e = check(
      req,
      afterCancel(
        req,
        cancelObs(deadline, { transport: 'not_sent', httpStatus: undefined, errorCategory: 'dns' }),
        ctx(deadline),
      ),
    );
    expect(e.escalation?.reason).toBe('provider_failure');
    expect(e.cancel?.sentAtMs).toBeUndefined();
    expect(optionsOf(e)).toContain('cancel_at_provider');
    const x = check(
      e,
      notRefused(
        applyDecision(
          e,
          {
            option: 'extend',
            extendMs: 60_000,
            extraStatusRequests: 2,
            approvedBy: 'bob@example.com',
            reason: 'keep watching',
          },
          ctx(deadline + 10),
        ),
      ),
    );
    expect(x.localState).toBe('observing');
    const again = check(
      x,
      notRefused(requestCancel(x, { requestedBy: 'carol@example.com', reason: 'stop, really' }, ctx(deadline + 20))),
    );
    expect(again.localState).toBe('cancel_requested');
    expect(again.cancel).toMatchObject({ requestedBy: 'carol@example.com', requestedAtMs: deadline + 20 });
    expect(again.deadlines.cancelDeadlineMs).toBe(deadline + 20 + FAST.cancelDeadlineMs!);
  });

  it('X3, B2: a cancel activity that failed (the call may have arrived) is never re-sent', () => {
    const r = observing();
    const at = r.schedule.nextPollAtMs! - 1;
    const req = check(r, notRefused(requestCancel(r, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
    const step = afterActivityFailure(req, 'cancel', 'activity StartToClose timeout', ctx(at + 100));
    const e = check(req, step);
    expect(kinds(step.entries)).toEqual(['observation', 'cancel_requested->escalated', 'escalation']);
    expect(e.escalation?.reason).toBe('cancellation_unconfirmed');
    expect(optionsOf(e)).not.toContain('cancel_at_provider');
    expect(nextCommand(e, at + 100).kind).toBe('await_decision');
  });

  it('X1: a cancel that never left is sent again as the same single call', () => {
    const r = observing();
    const at = r.schedule.nextPollAtMs! - 1;
    const req = check(r, notRefused(requestCancel(r, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
    const again = check(
      req,
      afterCancel(
        req,
        cancelObs(at + 5, { transport: 'not_sent', httpStatus: undefined, errorCategory: 'connect_refused' }),
        ctx(at + 5),
      ),
    );
    expect(again.localState).toBe('cancel_requested');
    expect(again.cancel?.sentAtMs).toBeUndefined();
    expect(nextCommand(again, again.schedule.nextPollAtMs!)).toEqual({ kind: 'cancel' });
  });

  it('X3: over random cancel answers, one that may have taken effect is never sent again; one that certainly did not is sent again until one lands or a bound stops it', () => {
    /** One cancel call's fate: an answer, a request that never left or was refused by us, or a failed activity. */
    const fate = fc.record({
      kind: fc.constantFrom('response', 'response', 'response', 'not_sent', 'refused', 'ambiguous', 'maybe', 'nothing'),
      httpStatus: fc.constantFrom(200, 202, 409, 429, 429, 503, 503, 500, 502, 400, 404),
      retryAfter: fc.constantFrom(undefined, undefined, '1'),
    });
    let sentAgain = 0;
    fc.assert(
      fc.property(fc.array(fate, { minLength: 1, maxLength: 12 }), (fates) => {
        const o = observing({ ...FAST, maxTransportFailures: 4, maxRateLimited: 3 });
        let now = o.schedule.nextPollAtMs! - 1;
        let r = check(o, notRefused(requestCancel(o, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(now))));
        let mayHaveTakenEffect = false;
        let withoutEffect = 0;
        for (const f of fates) {
          let cmd = nextCommand(r, now);
          while (cmd.kind === 'wait') {
            now = Math.max(now + 1, cmd.untilMs);
            cmd = nextCommand(r, now);
          }
          if (cmd.kind !== 'cancel') {
            // Not sent again: because one may have taken effect, or a bound stopped it (escalated, never silently).
            expect(mayHaveTakenEffect || r.localState === 'escalated').toBe(true);
            return;
          }
          expect(mayHaveTakenEffect).toBe(false);
          if (withoutEffect > 0) sentAgain++;
          const at = now + 10;
          const certainlyNoEffect =
            f.kind === 'nothing' ||
            f.kind === 'not_sent' ||
            f.kind === 'refused' ||
            (f.kind === 'response' && (f.httpStatus === 429 || f.httpStatus === 503));
          if (certainlyNoEffect) withoutEffect++;
          else mayHaveTakenEffect = true;
          r =
            f.kind === 'maybe' || f.kind === 'nothing'
              ? check(r, afterActivityFailure(r, 'cancel', 'worker lost', ctx(at), f.kind))
              : check(
                  r,
                  afterCancel(
                    r,
                    cancelObs(at, {
                      transport: f.kind,
                      ...(f.kind === 'response' ? { httpStatus: f.httpStatus } : { httpStatus: undefined }),
                      ...(f.retryAfter !== undefined ? { retryAfter: f.retryAfter } : {}),
                    }),
                    ctx(at),
                  ),
                );
          now = at;
        }
      }),
      { numRuns: 400, seed: 4321 },
    );
    // The re-send is exercised, not only allowed.
    expect(sentAgain).toBeGreaterThan(20);
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('provider conventions (V1, S2, E1)', () => {
  it('S2, X2: a provider\'s own "cancelled" with no cancel requested here ends failed (provider_cancelled), not an open escalation', () => {
    const o = observing();
    const r = poll(o, o.schedule.nextPollAtMs!, (t) =>
      statusObs(t, {
        remoteState: 'Canceled',
        category: 'cancelled',
        providerError: { code: 'UserCanceled', message: 'canceled in the portal' },
      }),
    );
    expect(r.localState).toBe('failed');
    expect(r.escalation).toBeNull();
    expect(r.journal.transitions.at(-1)?.body.reason).toContain('provider_cancelled');
    expect(r.journal.transitions.at(-1)?.body.reason).toContain('UserCanceled: canceled in the portal');
    expect(operationSummary(r).providerError).toEqual({ code: 'UserCanceled', message: 'canceled in the portal' });
  });

  it("E1: a 4xx on a status read is our request refused (request_rejected, with the provider's message), not a provider failure", () => {
    const o = observing();
    const r = poll(o, o.schedule.nextPollAtMs!, (t) =>
      statusObs(t, {
        httpStatus: 400,
        errorCategory: 'http_4xx',
        providerError: { message: 'api-version is missing' },
      }),
    );
    expect(r.escalation?.reason).toBe('request_rejected');
    expect(r.escalation?.message.detail).toContain('api-version is missing');
    expect(r.journal.observations.at(-1)?.body.providerError).toEqual({ message: 'api-version is missing' });
  });

  it('V1: a pending answer naming a new poll URL moves polling there; the first one named stays until then', () => {
    const a = acceptedRecord();
    expect(a.remote.statusUrl).toBe('https://api.example.test/jobs/job_7ad2');
    const moved = poll(a, a.schedule.nextPollAtMs!, (t) =>
      running(t, { statusUrl: 'https://api.example.test/jobs/job_7ad2/next' }),
    );
    expect(moved.remote.statusUrl).toBe('https://api.example.test/jobs/job_7ad2/next');
    expect(moved.journal.observations.at(-1)?.body.pollUrl).toBe('https://api.example.test/jobs/job_7ad2/next');
  });
});

describe('escalations and decisions (E1, E2, A1, A2)', () => {
  it('A2: extend adds bounded time and checks without resetting counters', () => {
    const e = budgetEscalated();
    const at = e.escalation!.raisedAtMs + 1_000;
    const step = notRefused(
      applyDecision(
        e,
        {
          option: 'extend',
          extendMs: 300_000,
          extraStatusRequests: 4,
          approvedBy: 'bob@example.com',
          reason: 'job is large',
        },
        ctx(at),
      ),
    );
    const x = check(e, step);
    expect(kinds(step.entries)).toEqual(['decision', 'escalated->observing']);
    expect(step.entries[0]).toMatchObject({
      actor: 'bob@example.com',
      body: { kind: 'decision', accepted: true, bounds: { extendMs: 300_000, extraStatusRequests: 4 } },
    });
    expect(x.used).toEqual(e.used);
    expect(x.budgets.maxStatusRequests).toBe(6);
    expect(x.deadlines.resultDeadlineMs).toBe(RESULT_DEADLINE + 300_000);
    expect(x.authorisation.approvals.at(-1)).toMatchObject({ approvedBy: 'bob@example.com', option: 'extend' });
    expect(x.schedule).toEqual({ nextPollAtMs: at, delaySource: 'manual_extension' });
    // Polling resumes within the new bounds: exactly four more requests.
    let r = x;
    let sent = 0;
    while (r.localState === 'observing') {
      r = poll(r, r.schedule.nextPollAtMs!, running);
      sent++;
    }
    expect(sent).toBe(4);
    expect(r.used.statusRequests).toBe(6);
    expect(r.escalation?.reason).toBe('request_budget_exhausted');
  });

  it.each([
    [
      'A2: an option that was not offered',
      { option: 'retry_create_same_token', approvedBy: 'bob@example.com', reason: 'try' },
      'ASYNCJOB_ERR_OPTION_NOT_OFFERED',
      1_000,
    ],
    [
      'A2: an extension beyond the offered bounds',
      { option: 'extend', extendMs: 10_000_000, extraStatusRequests: 4, approvedBy: 'bob@example.com', reason: 'x' },
      'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS',
      1_000,
    ],
    [
      'A2: a decision after the decision deadline',
      { option: 'close', approvedBy: 'bob@example.com', reason: 'late' },
      'ASYNCJOB_ERR_DECISION_TOO_LATE',
      FAST.decisionDeadlineMs! + 1,
    ],
  ] as const)('%s is refused, and recordRejectedDecision records who tried what', (_t, decision, code, afterMs) => {
    const e = budgetEscalated();
    const at = e.escalation!.raisedAtMs + afterMs;
    const refusal = applyDecision(e, decision as Decision, ctx(at));
    if (!('kind' in refusal) || refusal.kind !== 'refused') throw new Error('expected a refusal');
    expect(refusal.code).toBe(code);
    const step = recordRejectedDecision(e, decision, refusal, ctx(at));
    const r = check(e, step);
    expect(step.entries).toHaveLength(1);
    expect(step.entries[0]!.body).toMatchObject({
      kind: 'decision',
      decision: decision.option,
      approvedBy: 'bob@example.com',
      accepted: false,
      rejectionReason: expect.stringContaining(code),
    });
    expect(r.localState).toBe('escalated');
    expect(r.budgets).toEqual(e.budgets);
  });

  it('A2: a rejected decision with missing fields is still recorded, with placeholders', () => {
    const e = budgetEscalated();
    const step = recordRejectedDecision(
      e,
      { option: 42 },
      { kind: 'refused', code: 'ASYNCJOB_ERR_DECISION_INCOMPLETE', message: 'approvedBy: required' },
      ctx(T0 + 100_000),
    );
    check(e, step);
    expect(step.entries[0]!.body).toMatchObject({ decision: '(none)', approvedBy: '(unknown)', accepted: false });
  });

  it('A2: a decision with no open escalation is refused', () => {
    expect(
      applyDecision(observing(), { option: 'close', approvedBy: 'bob@example.com', reason: 'x' }, ctx(T0 + 10_000)),
    ).toMatchObject({ kind: 'refused', code: 'ASYNCJOB_ERR_NO_OPEN_ESCALATION' });
  });

  it('A2: close ends the operation; inspect_provider_console is recorded and changes nothing', () => {
    const e = budgetEscalated();
    const at = e.escalation!.raisedAtMs + 10;
    const look = notRefused(
      applyDecision(
        e,
        { option: 'inspect_provider_console', approvedBy: 'bob@example.com', reason: 'looking' },
        ctx(at),
      ),
    );
    const l = check(e, look);
    expect(kinds(look.entries)).toEqual(['decision']);
    expect(l.localState).toBe('escalated');
    const closed = check(
      l,
      notRefused(applyDecision(l, { option: 'close', approvedBy: 'bob@example.com', reason: 'done' }, ctx(at + 1))),
    );
    expect(closed.localState).toBe('closed');
    expect(nextCommand(closed, at + 1)).toEqual({ kind: 'finished' });
  });

  it('A1, X1: cancel_at_provider from an escalation records the intent and leads to the one cancel call', () => {
    const e = budgetEscalated();
    const at = e.escalation!.raisedAtMs + 10;
    const c = check(
      e,
      notRefused(
        applyDecision(e, { option: 'cancel_at_provider', approvedBy: 'bob@example.com', reason: 'too long' }, ctx(at)),
      ),
    );
    expect(c.localState).toBe('cancel_requested');
    expect(c.cancel).toEqual({
      requestedBy: 'bob@example.com',
      reason: 'too long',
      expectedEffect: 'the provider stops the job',
      requestedAtMs: at,
    });
    expect(c.deadlines.cancelDeadlineMs).toBe(at + FAST.cancelDeadlineMs!);
    expect(nextCommand(c, at)).toEqual({ kind: 'cancel' });
    const sent = check(c, afterCancel(c, cancelObs(at + 5), ctx(at + 5)));
    expect(sent.localState).toBe('cancelling');
    expect(sent.cancel?.sentAtMs).toBe(at + 5);
    // X3: the cancel deadline, not the result deadline, bounds the wait for the confirmation.
    const woke = onWake(sent, ctx(at + FAST.cancelDeadlineMs!));
    expect(woke.kind === 'stopped' && woke.step.record.escalation?.reason).toBe('cancellation_unconfirmed');
  });

  it('E2: decisionDeadlinePassed records that no decision came, only once the deadline passed', () => {
    const e = budgetEscalated();
    const early = decisionDeadlinePassed(e, ctx(e.escalation!.decisionDeadlineMs - 1));
    expect(early.entries).toEqual([]);
    expect(early.record).toBe(e);
    const step = decisionDeadlinePassed(e, ctx(e.escalation!.decisionDeadlineMs));
    const r = check(e, step);
    expect(step.entries).toHaveLength(1);
    expect(step.entries[0]!.body).toMatchObject({
      kind: 'decision',
      decision: 'none',
      accepted: false,
      rejectionReason: 'ASYNCJOB_ERR_DECISION_TOO_LATE',
    });
    expect(r.localState).toBe('escalated');
    expect(decisionDeadlinePassed(observing(), ctx(RESULT_DEADLINE)).entries).toEqual([]);
  });

  function createPhaseEscalations(): [string, () => OperationRecord][] {
    const fresh = () => newRecord(FAST);
    const viaCreate =
      (o: Partial<Observation>, c: Partial<StepContext> = {}, at = T0 + 100) =>
      () => {
        const r = fresh();
        return check(r, afterCreate(r, createObs(at, o), ctx(at, c)));
      };
    return [
      [
        'ambiguous create with no reconciliation method',
        viaCreate(
          { transport: 'ambiguous', httpStatus: undefined, remoteJobId: undefined },
          { reconciliation: 'none' },
        ),
      ],
      ['a 2xx create answer without a job', viaCreate({ remoteJobId: undefined, statusUrl: undefined })],
      ['a 422 create answer', viaCreate({ httpStatus: 422, remoteJobId: undefined })],
      ['a 429 past the create deadline', viaCreate({ httpStatus: 429, remoteJobId: undefined, retryAfter: '3600' })],
      [
        'the create deadline at the create wake-up',
        () => {
          const r = fresh();
          const s = reserveCreateAttempt(r, ctx(CREATE_DEADLINE));
          if (s.kind !== 'stopped') throw new Error('expected stopped');
          return check(r, s.step);
        },
      ],
      [
        'a create activity failure with no reconciliation method',
        () => {
          const r = fresh();
          return check(r, afterActivityFailure(r, 'create', 'worker lost', ctx(T0 + 100, { reconciliation: 'none' })));
        },
      ],
      [
        'reconcile activity failures spending the transport budget',
        () => {
          const r = viaCreate({ transport: 'ambiguous', httpStatus: undefined, remoteJobId: undefined })();
          return check(
            r,
            afterActivityFailure(
              { ...r, budgets: { ...r.budgets, maxTransportFailures: 2 } },
              'reconcile',
              'worker lost',
              ctx(T0 + 5_000),
            ),
          );
        },
      ],
      [
        'a lost create answer at the create deadline with same-token re-sending (I3)',
        viaCreate({ transport: 'ambiguous', httpStatus: undefined, remoteJobId: undefined }, {}, CREATE_DEADLINE),
      ],
      [
        'several jobs matching the operation on reconciliation (U3)',
        () => {
          const r = viaCreate(
            { transport: 'ambiguous', httpStatus: undefined, remoteJobId: undefined },
            { reconciliation: 'list_by_client_reference' },
          )();
          return check(
            r,
            afterReconcile(
              r,
              reconcileObs(T0 + 5_000, { errorCategory: 'multiple_matches' }),
              ctx(T0 + 5_000, { reconciliation: 'list_by_client_reference' }),
            ),
          );
        },
      ],
      [
        'reconciliation failing past the create deadline',
        () => {
          const r = viaCreate({ httpStatus: 504, remoteJobId: undefined })();
          return check(
            r,
            afterReconcile(r, reconcileObs(CREATE_DEADLINE + 1, { httpStatus: 503 }), ctx(CREATE_DEADLINE + 1)),
          );
        },
      ],
    ];
  }

  it.each(createPhaseEscalations())(
    'E2, U2: a create-phase escalation (%s) never offers extend or cancel_at_provider',
    (_t, make) => {
      const e = make();
      expect(e.localState).toBe('escalated');
      expect(e.jobId).toBeUndefined();
      expect(optionsOf(e)).not.toContain('extend');
      expect(optionsOf(e)).not.toContain('cancel_at_provider');
      // U3: a job ID conflict stops automation: a human adopts one of the jobs or closes, never another create.
      // E3: after an ambiguous create, re-sending a create without a token (no reconciliation here) is never offered.
      if (e.escalation?.reason === 'job_id_conflict' || _t.includes('no reconciliation method'))
        expect(optionsOf(e)).not.toContain('retry_create_same_token');
      else expect(optionsOf(e)).toContain('retry_create_same_token');
      const refused = applyDecision(
        e,
        { option: 'extend', extendMs: 1_000, extraStatusRequests: 1, approvedBy: 'bob@example.com', reason: 'x' },
        ctx(e.escalation!.raisedAtMs + 1),
      );
      // E3: refused naming what is missing: no job to go on reading. A reason that would offer extend with a job
      // says it cannot act; one that never offers it says so, and what is missing too.
      const offersExtend = OPTIONS_BY_REASON[e.escalation!.reason].includes('extend');
      expect(refused).toMatchObject({
        kind: 'refused',
        code: offersExtend ? 'ASYNCJOB_ERR_OPTION_NOT_EXECUTABLE' : 'ASYNCJOB_ERR_OPTION_NOT_OFFERED',
      });
      expect((refused as { message?: string }).message).toContain('provider_job');
    },
  );

  it('U2, I3: retry_create_same_token leads to reconciliation with a fresh bounded create window', () => {
    const r = newRecord(FAST);
    const e = check(
      r,
      afterCreate(
        r,
        createObs(T0 + 100, { httpStatus: 429, remoteJobId: undefined, retryAfter: '3600' }),
        ctx(T0 + 100),
      ),
    );
    const at = CREATE_DEADLINE + 60_000;
    const step = notRefused(
      applyDecision(
        e,
        { option: 'retry_create_same_token', approvedBy: 'bob@example.com', reason: 'provider back' },
        ctx(at),
      ),
    );
    const x = check(e, step);
    expect(kinds(step.entries)).toEqual(['decision', 'escalated->reconciliation']);
    expect(x.localState).toBe('reconciliation');
    expect(x.deadlines.createDeadlineMs).toBe(at + FAST.extensionMs!);
    expect(x.idempotencyToken).toBe(r.idempotencyToken);
    // This adapter reconciles by re-sending with the same token: a create attempt is reserved first (B2, I3).
    expect(nextCommand(x, at, 'same_token_resend')).toEqual({ kind: 'reconcile', reservesCreateAttempt: true });
    // Inside the new window, "no job" means look again; after it, failed.
    const again = check(x, afterReconcile(x, reconcileObs(at + 1_000, { httpStatus: 404 }), ctx(at + 1_000)));
    expect(again.localState).toBe('reconciliation');
    expect(again.schedule.nextPollAtMs).toBeLessThanOrEqual(x.deadlines.createDeadlineMs);
    const gone = check(
      again,
      afterReconcile(
        again,
        reconcileObs(x.deadlines.createDeadlineMs, { httpStatus: 404 }),
        ctx(x.deadlines.createDeadlineMs),
      ),
    );
    expect(gone.localState).toBe('failed');
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('webhook hints (W1)', () => {
  it('W1: a hint moves the next poll to now in a polling state, changes no remote fact and never succeeds on its own', () => {
    const r = observing();
    const at = r.schedule.nextPollAtMs! - 500;
    const step = applyWebhookHint(
      r,
      { eventId: 'evt-1', remoteJobId: 'job_7ad2', state: 'succeeded', receivedAtMs: at },
      ctx(at),
    );
    const h = check(r, step);
    expect(kinds(step.entries)).toEqual(['observation']);
    expect(step.entries[0]!.body).toMatchObject({
      action: 'webhook',
      decision: 'read_status_now',
      delaySource: 'webhook_hint',
    });
    expect(h.localState).toBe('observing');
    expect(h.remote).toEqual(r.remote);
    expect(h.result).toBeNull();
    expect(h.schedule).toEqual({ nextPollAtMs: at, delaySource: 'webhook_hint' });
    expect(nextCommand(h, at)).toEqual({ kind: 'read_status' });
    // The early read is the one that decides.
    const s = poll(h, at, done);
    expect(s.localState).toBe('result_collecting');
  });

  it.each([
    ['create_pending', () => newRecord(FAST)],
    ['escalated', () => budgetEscalated()],
    [
      'result_collecting',
      () => {
        const a = acceptedRecord();
        return poll(a, a.schedule.nextPollAtMs!, done);
      },
    ],
  ])('W1: in %s a hint is only noted', (_t, make) => {
    const r = make();
    const at = T0 + 20_000;
    const step = applyWebhookHint(
      r,
      { eventId: 'evt-2', remoteJobId: 'job_7ad2', state: 'succeeded', receivedAtMs: at },
      ctx(at),
    );
    const h = check(r, step);
    expect(step.entries[0]!.body).toMatchObject({ decision: 'noted' });
    expect(h.localState).toBe(r.localState);
    expect(h.schedule).toEqual(r.schedule);
    expect(h.remote).toEqual(r.remote);
  });

  it('W1, P3: a hint never cuts short a Retry-After the provider asked for', () => {
    let r = observing();
    r = poll(r, r.schedule.nextPollAtMs!, (t) => statusObs(t, { httpStatus: 503, retryAfter: '120' }));
    const at = r.schedule.nextPollAtMs! - 60_000;
    const h = check(r, applyWebhookHint(r, { eventId: 'evt-3', receivedAtMs: at }, ctx(at)));
    expect(h.schedule).toEqual(r.schedule);
  });

  it('W1, H1: a hint never cuts short the backoff after a 429; after the next answer that got through it wakes again', () => {
    let r = observing();
    r = poll(r, r.schedule.nextPollAtMs!, (t) => statusObs(t, { httpStatus: 429 }));
    expect(r.used.consecutiveRateLimited).toBe(1);
    const at = r.schedule.nextPollAtMs! - 1_000;
    const h = check(r, applyWebhookHint(r, { eventId: 'evt-429', receivedAtMs: at }, ctx(at)));
    expect(h.schedule).toEqual(r.schedule);
    expect(webhookMovesReadToNow(r, at)).toBe(false);
    r = poll(r, r.schedule.nextPollAtMs!, running);
    const later = r.schedule.nextPollAtMs! - 1_000;
    const woken = check(r, applyWebhookHint(r, { eventId: 'evt-ok', receivedAtMs: later }, ctx(later)));
    expect(woken.schedule).toEqual({ nextPollAtMs: later, delaySource: 'webhook_hint' });
  });

  it('W1, U3: a hint naming another job wakes nothing and adds no job ID', () => {
    const r = observing();
    const at = r.schedule.nextPollAtMs! - 500;
    const h = check(
      r,
      applyWebhookHint(
        r,
        { eventId: 'evt-4', remoteJobId: 'job_forged', state: 'succeeded', receivedAtMs: at },
        ctx(at),
      ),
    );
    expect(h.schedule).toEqual(r.schedule);
    expect(h.remote.jobIds).toEqual(['job_7ad2']);
  });
});

// ---------------------------------------------------------------------------------------------------------

/** The step journalled one observation of a failed activity, with `fields`, and planned the call again. */
function expectOneRetriedFailure(step: StepResult, fields: Record<string, unknown>): void {
  expect(kinds(step.entries)).toEqual(['observation']);
  expect(step.entries[0]!.body).toMatchObject({ ...fields, errorCategory: 'activity_failed', decision: 'retry' });
}

describe('activity failures (B2, S5)', () => {
  it('B2: a status activity that failed keeps its reservation counted and is planned again after a backoff', () => {
    const r = observing();
    const woke = onWake(r, ctx(r.schedule.nextPollAtMs!));
    if (woke.kind !== 'read_status') throw new Error('expected read_status');
    const at = r.schedule.nextPollAtMs! + 100;
    const step = afterActivityFailure(woke.record, 'status', 'worker lost', ctx(at));
    const f = check(woke.record, step);
    expectOneRetriedFailure(step, { action: 'status' });
    expect(f.used.statusRequests).toBe(woke.record.used.statusRequests);
    expect(f.used.transportFailures).toBe(woke.record.used.transportFailures + 1);
    expect(f.schedule.reservedAtMs).toBeUndefined();
    expect(f.schedule.nextPollAtMs).toBeGreaterThan(at);
    expect(f.schedule.delaySource).toBe('local_backoff');
    expect(f.remote).toEqual(woke.record.remote);
    expect(nextCommand(f, f.schedule.nextPollAtMs!)).toEqual({ kind: 'read_status' });
  });

  it('U1, U2: a create activity that failed may have sent the create: create_unknown, then reconciliation, never a blind re-send', () => {
    const r = newRecord(FAST);
    const reserved = reserveCreateAttempt(r, ctx(T0 + 10));
    if (reserved.kind !== 'reserved') throw new Error('expected reserved');
    const step = afterActivityFailure(
      reserved.record,
      'create',
      'worker lost after sending',
      ctx(T0 + 100, { reconciliation: 'lookup_by_token' }),
    );
    const f = check(reserved.record, step);
    expect(kinds(step.entries)).toEqual([
      'observation',
      'create_pending->create_unknown',
      'create_unknown->reconciliation',
    ]);
    expect(f.used.createAttempts).toBe(1);
    expect(nextCommand(f, f.schedule.nextPollAtMs!, 'lookup_by_token')).toEqual({
      kind: 'reconcile',
      reservesCreateAttempt: false,
    });
  });

  it('R5: a collect activity that failed is not repeated when collecting is not safe to repeat', () => {
    const a = acceptedRecord();
    const r = poll(a, a.schedule.nextPollAtMs!, done);
    const at = r.journal.observations.at(-1)!.atMs + 5;
    const step = afterActivityFailure(
      r,
      'collect',
      'timeout',
      ctx(at, { capabilities: { cancel: true, repeatableCollect: false } }),
    );
    const f = check(r, step);
    expect(kinds(step.entries)).toEqual([
      'observation',
      'result_collecting->result_unavailable',
      'result_unavailable->escalated',
      'escalation',
    ]);
    expect(f.result).toBeNull();
    expect(nextCommand(f, at).kind).toBe('await_decision');
    // Safe to repeat: planned again.
    const again = check(r, afterActivityFailure(r, 'collect', 'timeout', ctx(at)));
    expect(nextCommand(again, again.schedule.nextPollAtMs!)).toEqual({ kind: 'collect' });
  });

  it('B2, U1, X3, R5: a call the activity failed before writing sent nothing: a create, a cancel and a collect are sent again, none taken for one that may have arrived', () => {
    const r = newRecord(FAST);
    const reserved = reserveCreateAttempt(r, ctx(T0 + 10));
    if (reserved.kind !== 'reserved') throw new Error('expected reserved');
    const noSlot = 'nothing was sent: connect ECONNREFUSED 127.0.0.1:5432';
    const create = afterActivityFailure(reserved.record, 'create', noSlot, ctx(T0 + 100), 'nothing');
    const c = check(reserved.record, create);
    expectOneRetriedFailure(create, { action: 'create', transport: 'not_sent' });
    expect(c.localState).toBe('create_pending');
    expect(c.used.transportFailures).toBe(1);
    expect(nextCommand(c, c.schedule.nextPollAtMs!)).toMatchObject({ kind: 'create' });
    expect(reserveCreateAttempt(c, ctx(c.schedule.nextPollAtMs!)).kind).toBe('reserved');

    const o = observing();
    const at = o.schedule.nextPollAtMs! - 1;
    const req = check(o, notRefused(requestCancel(o, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at))));
    const cancel = check(req, afterActivityFailure(req, 'cancel', noSlot, ctx(at + 100), 'nothing'));
    expect(cancel.localState).toBe('cancel_requested');
    expect(cancel.cancel?.sentAtMs).toBeUndefined();
    expect(nextCommand(cancel, cancel.schedule.nextPollAtMs!)).toEqual({ kind: 'cancel' });

    const a = acceptedRecord();
    const collecting = poll(a, a.schedule.nextPollAtMs!, done);
    const when = collecting.journal.observations.at(-1)!.atMs + 5;
    const unsafe = ctx(when, { capabilities: { cancel: true, repeatableCollect: false } });
    const collect = check(collecting, afterActivityFailure(collecting, 'collect', noSlot, unsafe, 'nothing'));
    expect(nextCommand(collect, collect.schedule.nextPollAtMs!)).toEqual({ kind: 'collect' });
  });

  it('U2: a reconciliation the provider cannot do is never read as "no job"', () => {
    const r0 = newRecord(FAST);
    const r = check(
      r0,
      afterCreate(
        r0,
        createObs(T0 + 100, { transport: 'ambiguous', httpStatus: undefined, remoteJobId: undefined }),
        ctx(T0 + 100),
      ),
    );
    const e = check(
      r,
      afterReconcile(
        r,
        reconcileObs(CREATE_DEADLINE + 1, { errorCategory: 'reconcile_unsupported' }),
        ctx(CREATE_DEADLINE + 1),
      ),
    );
    expect(e.localState).toBe('escalated');
    expect(e.escalation?.reason).toBe('create_unknown');
  });

  it('S5: activity failures that spend the transport budget escalate provider_failure', () => {
    let r = observing({ ...FAST, maxTransportFailures: 2 });
    r = check(r, afterActivityFailure(r, 'status', 'boom', ctx(T0 + 50_000)));
    expect(r.localState).toBe('observing');
    r = check(r, afterActivityFailure(r, 'status', 'boom', ctx(T0 + 60_000)));
    expect(r.escalation?.reason).toBe('provider_failure');
    expect(r.escalation?.message.detail).toMatch(/S5/);
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('properties over random lifecycles (M3, B1, S1, S4)', () => {
  const w = <T>(...pairs: [number, T][]) =>
    fc.oneof(...pairs.map(([weight, value]) => ({ weight, arbitrary: fc.constant(value) })));
  const state = w<string>(
    [4, 'running'],
    [1, 'queued'],
    [3, 'succeeded'],
    [2, 'cancelled'],
    [1, 'failed'],
    [1, 'expired'],
    [1, 'weird'],
  );
  const categoryOf: Record<string, Observation['category']> = {
    queued: 'pending',
    running: 'pending',
    succeeded: 'success',
    failed: 'failure',
    cancelled: 'cancelled',
    expired: 'expired',
    weird: 'unknown',
  };
  // Mostly plausible answers, with every hostile kind present (F7, F8).
  const answer = fc.record({
    transport: w<Observation['transport']>(
      [16, 'response'],
      [1, 'not_sent'],
      [1, 'ambiguous'],
      [1, 'body_too_large'],
      [1, 'refused'],
    ),
    httpStatus: w<number>(
      [12, 200],
      [4, 202],
      [1, 201],
      [1, 401],
      [1, 404],
      [1, 409],
      [1, 422],
      [1, 429],
      [1, 500],
      [1, 503],
    ),
    state,
    withJob: w<string | undefined>([8, 'job_7ad2'], [1, 'job_other'], [1, undefined]),
    withResult: w([5, true], [1, false]),
    retryAfter: w<string | undefined>([12, undefined], [1, '1'], [1, '30'], [1, 'garbage'], [1, '-5']),
    parseProblem: w<string | undefined>([15, undefined], [1, 'not JSON']),
    collect: w<'valid' | 'invalid' | 'none'>([5, 'valid'], [1, 'invalid'], [1, 'none']),
    /**
     * The activity itself fails: after its request may have left (`maybe`: a worker lost, a timeout) or before it
     * wrote any (`nothing`: no send slot); nothing is observed (B2).
     */
    activityFails: w<false | FailedCallSent>([14, false], [1, 'maybe'], [1, 'nothing']),
    delayMs: fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0, max: 60_000 }) },
      { weight: 1, arbitrary: fc.integer({ min: 60_000, max: 1_200_000 }) },
    ),
  });
  type Answer = typeof answer extends fc.Arbitrary<infer T> ? T : never;
  const message = fc.oneof(
    fc.record({ kind: fc.constant('none' as const) }),
    fc.record({ kind: fc.constant('cancel' as const) }),
    fc.record({ kind: fc.constant('cancel' as const) }),
    fc.record({ kind: fc.constant('webhook' as const), job: fc.constantFrom('job_7ad2', 'job_other') }),
    fc.record({ kind: fc.constant('decide' as const), pick: fc.nat(), raw: fc.boolean() }),
  );
  const step = fc.record({
    answer,
    message: fc.oneof(
      { weight: 4, arbitrary: fc.constant({ kind: 'none' as const }) },
      { weight: 1, arbitrary: message },
    ),
    random: fc.double({ min: 0, max: 0.999999, noNaN: true }),
  });

  function observationFor(action: Observation['action'], a: Answer, at: number): Observation {
    const response = a.transport === 'response' || a.transport === 'body_too_large';
    return observed({
      action,
      transport: a.transport,
      receivedAtMs: at,
      ...(response ? { httpStatus: a.httpStatus } : {}),
      ...(a.withJob !== undefined ? { remoteJobId: a.withJob } : {}),
      ...(action === 'status' || action === 'create' ? { remoteState: a.state, category: categoryOf[a.state] } : {}),
      ...(a.withResult ? { resultReference: { url: 'https://api.example.test/r', sha256: SHA } } : {}),
      ...(a.retryAfter !== undefined ? { retryAfter: a.retryAfter } : {}),
      ...(a.parseProblem !== undefined ? { parseProblem: a.parseProblem } : {}),
    });
  }

  it('M3, S1, S4, X3: entries are contiguous and schema-valid, the status budget is never exceeded, succeeded needs a valid result, a cancel is delivered at most once', () => {
    const reached = new Set<string>();
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 80 }),
        fc.constantFrom<ReconciliationMethod>('same_token_resend', 'lookup_by_token', 'none'),
        w([3, true], [1, false]),
        fc.boolean(),
        (steps, reconciliation, canCancel, repeatableCollect) => {
          const capabilities = { cancel: canCancel, repeatableCollect };
          let r = newRecord(
            { ...FAST, maxStatusRequests: 6, maxTransportFailures: 3, maxRateLimited: 2 },
            { resultDeadline: { afterMs: 300_000 } },
          );
          let now = T0;
          let cancelsDelivered = 0;
          const apply = (s: StepResult): void => {
            r = check(r, s);
            for (const e of s.entries) if (e.body.kind === 'transition') reached.add(e.body.to);
            expect(r.used.statusRequests).toBeLessThanOrEqual(r.budgets.maxStatusRequests);
          };
          for (const { answer: a, message: m, random } of steps) {
            const c = ctx(now, { random, reconciliation, capabilities });
            if (m.kind === 'cancel') {
              const s = requestCancel(r, { requestedBy: 'alice@example.com', reason: 'random cancel' }, c);
              if (!('kind' in s)) apply(s);
            } else if (m.kind === 'webhook') {
              apply(
                applyWebhookHint(
                  r,
                  { eventId: `evt-${now}`, remoteJobId: m.job, state: 'succeeded', receivedAtMs: now },
                  c,
                ),
              );
            } else if (m.kind === 'decide' && r.escalation !== null) {
              const offered = r.escalation.options[m.pick % r.escalation.options.length]!;
              const decision: Decision = {
                option: m.raw ? 'extend' : offered.option,
                approvedBy: 'bob@example.com',
                reason: 'property',
                ...((m.raw ? 'extend' : offered.option) === 'extend'
                  ? { extendMs: offered.extendMs ?? 60_000, extraStatusRequests: offered.extraStatusRequests ?? 2 }
                  : {}),
                ...(offered.option === 'adopt_job' && !m.raw ? { jobId: offered.jobIds![0]! } : {}),
              };
              const s = applyDecision(r, decision, c);
              if ('kind' in s && s.kind === 'refused') apply(recordRejectedDecision(r, decision, s, c));
              else apply(s as StepResult);
            }
            const cmd: Command = nextCommand(r, now);
            const at = now + 10;
            switch (cmd.kind) {
              case 'finished':
                return;
              case 'wait':
                now = Math.max(now + 1, cmd.untilMs);
                continue;
              case 'await_decision':
                if (now >= cmd.untilMs) {
                  apply(decisionDeadlinePassed(r, c));
                  return;
                }
                now = Math.min(cmd.untilMs, now + a.delayMs * 10 + 1);
                continue;
              case 'create': {
                const reserved = reserveCreateAttempt(r, c);
                if (reserved.kind === 'stopped') apply(reserved.step);
                else {
                  r = reserved.record;
                  if (a.activityFails)
                    apply(
                      afterActivityFailure(
                        r,
                        'create',
                        'worker lost',
                        ctx(at, { random, reconciliation, capabilities }),
                        a.activityFails,
                      ),
                    );
                  else
                    apply(
                      afterCreate(
                        r,
                        observationFor('create', a, at),
                        ctx(at, { random, reconciliation, capabilities }),
                      ),
                    );
                }
                break;
              }
              case 'reconcile':
                if (a.activityFails)
                  apply(
                    afterActivityFailure(
                      r,
                      'reconcile',
                      'worker lost',
                      ctx(at, { random, reconciliation, capabilities }),
                      a.activityFails,
                    ),
                  );
                else
                  apply(
                    afterReconcile(
                      r,
                      observationFor('reconcile', a, at),
                      ctx(at, { random, reconciliation, capabilities }),
                    ),
                  );
                break;
              case 'read_status': {
                const woke = onWake(r, c);
                if (woke.kind === 'stopped') apply(woke.step);
                else if (woke.kind === 'read_status') {
                  expect(woke.record.used.statusRequests).toBeLessThanOrEqual(woke.record.budgets.maxStatusRequests);
                  r = woke.record;
                  if (a.activityFails)
                    apply(
                      afterActivityFailure(
                        r,
                        'status',
                        'worker lost',
                        ctx(at, { random, reconciliation, capabilities }),
                        a.activityFails,
                      ),
                    );
                  else
                    apply(
                      afterStatus(
                        r,
                        observationFor('status', a, at),
                        ctx(at, { random, reconciliation, capabilities }),
                      ),
                    );
                } else now = Math.max(now + 1, woke.atMs);
                break;
              }
              case 'cancel': {
                const o = observationFor('cancel', a, at);
                // X3: a cancel that may have taken effect is sent at most once per operation; one that certainly did
                // not (never sent, refused by us, 429, 503, an activity that failed before its write) is sent again.
                const certainlyNoEffect = a.activityFails
                  ? a.activityFails === 'nothing'
                  : o.transport === 'not_sent' ||
                    o.transport === 'refused' ||
                    (o.transport === 'response' && (a.httpStatus === 429 || a.httpStatus === 503));
                if (!certainlyNoEffect) cancelsDelivered++;
                expect(cancelsDelivered).toBeLessThanOrEqual(1);
                if (a.activityFails)
                  apply(
                    afterActivityFailure(
                      r,
                      'cancel',
                      'worker lost',
                      ctx(at, { random, reconciliation, capabilities }),
                      a.activityFails,
                    ),
                  );
                else apply(afterCancel(r, o, ctx(at, { random, reconciliation, capabilities })));
                break;
              }
              case 'collect': {
                const outcome = a.collect === 'valid' ? VALID : a.collect === 'invalid' ? INVALID : {};
                if (a.activityFails)
                  apply(
                    afterActivityFailure(
                      r,
                      'collect',
                      'worker lost',
                      ctx(at, { random, reconciliation, capabilities }),
                      a.activityFails,
                    ),
                  );
                else
                  apply(
                    afterCollect(
                      r,
                      observationFor('collect', a, at),
                      outcome,
                      ctx(at, { random, reconciliation, capabilities }),
                    ),
                  );
                break;
              }
            }
            now = at + a.delayMs;
          }
        },
      ),
      // A fixed seed: the coverage check below must not depend on the draw (random seeds miss `cancelling` now and then).
      { numRuns: 600, seed: 1234 },
    );
    // The generator is not vacuous: the runs reach every end and the main intermediate states.
    for (const s of [
      'accepted',
      'observing',
      'result_collecting',
      'succeeded',
      'failed',
      'cancelling',
      'escalated',
      'reconciliation',
      'result_timed_out',
    ])
      expect(reached).toContain(s);
  }, 60_000);
});
