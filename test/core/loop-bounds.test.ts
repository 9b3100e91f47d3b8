import { describe, expect, it } from 'vitest';
import {
  DEFAULT_HISTORY_EVENT_LIMIT,
  DESCRIBE_RETRY,
  MAX_CREATE_ATTEMPTS,
  PROVIDER_CALL_RETRY,
  RETRY_ATTEMPTS_BEYOND_READS,
  STORE_CALL_RETRY,
  continuesAsNew,
  retryDrivenWaitRetry,
} from '../../src/core/loop-bounds';
import { type Observation } from '../../src/core/observation';
import { type OperationRecord } from '../../src/core/operation';
import { nextLoopStep } from '../../src/core/poll-loop';
import {
  afterActivityFailure,
  afterCancel,
  afterCollect,
  afterCreate,
  afterReconcile,
  afterStatus,
  onWake,
  requestCancel,
  reserveCreateAttempt,
  type StepContext,
  type StepResult,
} from '../../src/core/step';
import { T0, newRecord, obs, observingRecord, observed } from './helpers';

const CAPS = { cancel: true, repeatableCollect: true };
const BUDGET = { baseDelayMs: 10, maxDelayMs: 50, maxTransportFailures: 4, maxRateLimited: 3, maxStatusRequests: 6 };
/** Journal entries one attempt may append (observation, transitions, escalation): the history grows with them. */
const ENTRIES_PER_ATTEMPT = 6;

function ctx(nowMs: number, over: Partial<StepContext> = {}): StepContext {
  return {
    nowMs,
    random: 0.5,
    actor: 'workflow',
    capabilities: CAPS,
    reconciliation: 'list_by_client_reference',
    ...over,
  };
}

/**
 * Drives one loop: `step` is one attempt at the record's next planned instant, until automation stops (escalated
 * or final). Returns how many attempts were made and how many journal entries they appended. Gives up at 10,000
 * attempts, so an unbounded loop fails the test instead of hanging it.
 */
function drive(start: OperationRecord, step: (r: OperationRecord, at: number) => StepResult) {
  let record = start;
  let at = T0 + 10_000;
  let attempts = 0;
  let entries = 0;
  while (record.localState !== 'escalated' && attempts < 10_000) {
    at = Math.max(at + 1, record.schedule.nextPollAtMs ?? at + 1);
    const result = step(record, at);
    attempts += 1;
    entries += result.entries.length;
    record = result.record;
  }
  return { record, attempts, entries };
}

const lost = (action: Observation['action'], at: number, over: Partial<Observation> = {}): Observation =>
  observed({
    action,
    transport: 'not_sent',
    receivedAtMs: at,
    errorCategory: 'connect_refused',
    ...over,
  });

describe('every retry loop is bounded in attempts and in history (B3)', () => {
  it('B3: create requests that never leave stop at the transport-failure budget', () => {
    const { record, attempts, entries } = drive(newRecord(BUDGET), (r, at) =>
      afterCreate(r, lost('create', at), ctx(at)),
    );
    expect(record.escalation?.reason).toBe('provider_failure');
    expect(attempts).toBe(BUDGET.maxTransportFailures);
    expect(entries).toBeLessThanOrEqual(attempts * ENTRIES_PER_ATTEMPT);
  });

  it('B3: create answered 429 in a row stops at the rate-limit budget', () => {
    const { record, attempts } = drive(newRecord(BUDGET), (r, at) =>
      afterCreate(
        r,
        lost('create', at, { transport: 'response', httpStatus: 429, errorCategory: 'http_4xx' }),
        ctx(at),
      ),
    );
    expect(record.escalation?.reason).toBe('rate_limited');
    expect(attempts).toBe(BUDGET.maxRateLimited);
  });

  const reconciling = (): OperationRecord =>
    afterCreate(newRecord(BUDGET), lost('create', T0 + 100, { transport: 'ambiguous' }), ctx(T0 + 100)).record;

  it('B3, E3: a reconciliation request the adapter cannot build escalates on the first attempt, naming what is missing', () => {
    expect(reconciling().localState).toBe('reconciliation');
    const refused = { errorCategory: 'unsupported', parseProblem: 'provider acme offers no way to find a job' };
    const { record, attempts } = drive(reconciling(), (r, at) =>
      afterReconcile(r, lost('reconcile', at, { transport: 'refused', ...refused }), ctx(at)),
    );
    expect(attempts).toBe(1);
    expect(record.escalation?.reason).toBe('create_unknown');
    expect(record.escalation?.message.detail).toContain('offers no way to find a job');
    expect(record.used.transportFailures).toBe(1);
  });

  it('B3, I3: re-sends that keep finding no job stop at the create-attempt bound, before the create deadline', () => {
    const far = { ...reconciling(), deadlines: { ...reconciling().deadlines, createDeadlineMs: T0 + 86_400_000 } };
    const { record, attempts, entries } = drive(far, (r, at) => {
      const reserved = reserveCreateAttempt(r, ctx(at));
      if (reserved.kind === 'stopped') return reserved.step;
      const noJob = lost('reconcile', at, { transport: 'response', httpStatus: 404, errorCategory: 'http_4xx' });
      return afterReconcile(reserved.record, noJob, ctx(at));
    });
    expect(record.escalation?.reason).toBe('create_unknown');
    expect(record.escalation?.message.detail).toContain(`${MAX_CREATE_ATTEMPTS} create requests`);
    expect(attempts).toBeLessThanOrEqual(MAX_CREATE_ATTEMPTS + 1);
    expect(entries).toBeLessThanOrEqual((MAX_CREATE_ATTEMPTS + 1) * ENTRIES_PER_ATTEMPT);
  });

  it('B3: a reconciliation request the provider rejects as malformed (4xx) escalates on the first attempt', () => {
    const { attempts, record } = drive(reconciling(), (r, at) =>
      afterReconcile(
        r,
        lost('reconcile', at, { transport: 'response', httpStatus: 400, errorCategory: 'http_4xx' }),
        ctx(at),
      ),
    );
    expect(attempts).toBe(1);
    expect(record.escalation?.message.detail).toContain('HTTP 400');
  });

  it('B3: reconciliation answered 5xx or 429 stops at its budget', () => {
    const failing = drive(reconciling(), (r, at) =>
      afterReconcile(
        r,
        lost('reconcile', at, { transport: 'response', httpStatus: 503, errorCategory: 'http_5xx' }),
        ctx(at),
      ),
    );
    // The lost create answer was the first transport failure.
    expect(failing.attempts).toBe(BUDGET.maxTransportFailures - 1);
    const limited = drive(reconciling(), (r, at) =>
      afterReconcile(
        r,
        lost('reconcile', at, { transport: 'response', httpStatus: 429, errorCategory: 'http_4xx' }),
        ctx(at),
      ),
    );
    expect(limited.record.escalation?.reason).toBe('rate_limited');
    expect(limited.attempts).toBe(BUDGET.maxRateLimited);
  });

  it('B3: status reads stop at the status-request budget', () => {
    const start = { ...observingRecord(BUDGET), schedule: { nextPollAtMs: T0 + 2_000 } };
    let reads = 0;
    const { record, entries, attempts } = drive(start, (r, at) => {
      const woke = onWake(r, ctx(at));
      if (woke.kind === 'stopped') return woke.step;
      if (woke.kind === 'not_yet')
        return { kind: 'step', record: { ...r, schedule: { nextPollAtMs: woke.atMs } }, entries: [] };
      reads += 1;
      return afterStatus(woke.record, obs({ receivedAtMs: at, remoteState: 'running', category: 'pending' }), ctx(at));
    });
    expect(record.escalation?.reason).toBe('request_budget_exhausted');
    expect(record.used.statusRequests).toBe(BUDGET.maxStatusRequests);
    expect(reads).toBe(BUDGET.maxStatusRequests - 1);
    expect(entries).toBeLessThanOrEqual(attempts * ENTRIES_PER_ATTEMPT);
  });

  it('B3: a cancel request that never leaves stops at the transport-failure budget, before the cancel deadline', () => {
    const o = observingRecord({ ...BUDGET, cancelDeadlineMs: 3_600_000 });
    const asked = requestCancel(o, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(T0 + 5_000));
    if (asked.kind !== 'step') throw new Error(asked.message);
    const { record, attempts } = drive(asked.record, (r, at) => afterCancel(r, lost('cancel', at), ctx(at)));
    expect(record.escalation?.reason).toBe('provider_failure');
    expect(attempts).toBe(BUDGET.maxTransportFailures);
  });

  it('B3: collecting a result that never arrives stops at the transport-failure budget', () => {
    const o = observingRecord(BUDGET);
    const collecting: OperationRecord = {
      ...o,
      localState: 'result_collecting',
      remote: { ...o.remote, category: 'success', resultReference: { url: 'https://provider.test/r/1' } },
      schedule: { nextPollAtMs: T0 + 2_000 },
    };
    const { record, attempts } = drive(collecting, (r, at) => afterCollect(r, lost('collect', at), {}, ctx(at)));
    expect(record.escalation?.reason).toBe('provider_failure');
    expect(attempts).toBe(BUDGET.maxTransportFailures);
  });

  it('B3: activities of ours that keep failing stop at the transport-failure budget', () => {
    const { record, attempts } = drive(observingRecord(BUDGET), (r, at) =>
      afterActivityFailure(r, 'status', 'worker lost', ctx(at)),
    );
    expect(record.escalation?.reason).toBe('provider_failure');
    expect(attempts).toBe(BUDGET.maxTransportFailures);
  });

  it('B3: the status loop in one activity hands the operation back within maxLoopMs', () => {
    const limits = { maxWaitMs: 30_000, maxLoopMs: 120_000 };
    const r = { ...observingRecord(), schedule: { nextPollAtMs: T0 + 125_000 } };
    const step = nextLoopStep(r, T0 + 120_000, { startedAtMs: T0, entered: r }, limits);
    expect(step).toEqual({ kind: 'exit', reason: 'loop_time_spent' });
  });

  it('B3: activity retry policies have a finite number of attempts; a run continues as new at its history limit', () => {
    expect(PROVIDER_CALL_RETRY.maximumAttempts).toBe(1);
    // A retry-driven status wait: one attempt per read the budget still allows, and a few more.
    const record = observingRecord();
    const readsLeft = record.budgets.maxStatusRequests - record.used.statusRequests;
    expect(retryDrivenWaitRetry(record).maximumAttempts).toBe(readsLeft + RETRY_ATTEMPTS_BEYOND_READS);
    const spent = { ...record, used: { ...record.used, statusRequests: record.budgets.maxStatusRequests } };
    expect(retryDrivenWaitRetry(spent).maximumAttempts).toBe(RETRY_ATTEMPTS_BEYOND_READS);
    expect(STORE_CALL_RETRY.maximumAttempts).toBeLessThanOrEqual(20);
    expect(DESCRIBE_RETRY.maximumAttempts).toBeLessThanOrEqual(20);
    expect(continuesAsNew(DEFAULT_HISTORY_EVENT_LIMIT - 1, false)).toBe(false);
    expect(continuesAsNew(DEFAULT_HISTORY_EVENT_LIMIT, false)).toBe(true);
    expect(continuesAsNew(10, true)).toBe(true);
    // Below the server's own 10,240-event warning, so the bound is ours, not the server's.
    expect(DEFAULT_HISTORY_EVENT_LIMIT).toBeLessThan(10_240);
  });
});
