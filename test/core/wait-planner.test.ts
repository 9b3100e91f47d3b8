import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Observation } from '../../src/core/observation';
import { operationRecordSchema, type OperationRecord } from '../../src/core/operation';
import { NO_CAPABILITIES, openEscalationSchema } from '../../src/core/escalation';
import { pollPolicySchema } from '../../src/core/policy';
import { parseRetryAfter } from '../../src/core/retry-after';
import { transition } from '../../src/core/transitions';
import { planAfterObservation, reserveStatusRequest, type PlanResult } from '../../src/core/wait-planner';
import { jitterMs, rawBackoffMs } from '../../src/core/wait-time';
import { T0, obs, observingRecord } from './helpers';

const NOW = T0 + 1000;

/** The step context at `nowMs`: the workflow acting, an adapter without cancel or repeatable collect. */
function stepAt(nowMs: number, random = 0.5) {
  return { nowMs, random, actor: 'workflow', capabilities: NO_CAPABILITIES };
}

function plan(observation: Partial<Observation>, record = observingRecord(), random = 0.5, nowMs = NOW): PlanResult {
  return planAfterObservation(record, obs({ receivedAtMs: nowMs, ...observation }), stepAt(nowMs, random));
}

function withUsed(record: OperationRecord, used: Partial<OperationRecord['used']>): OperationRecord {
  return { ...record, used: { ...record.used, ...used } };
}

describe('HTTP signals (H1-H5)', () => {
  it.each([
    [
      'H1: 429 with Retry-After seconds waits at least that long',
      { httpStatus: 429, retryAfter: '30' },
      NOW + 30_000,
      'provider_retry_after',
    ],
    [
      'H1: 503 with Retry-After seconds waits at least that long',
      { httpStatus: 503, retryAfter: '120' },
      NOW + 120_000,
      'provider_retry_after',
    ],
    [
      'H1: 503 with Retry-After as an HTTP-date waits until that date',
      { httpStatus: 503, retryAfter: new Date(NOW + 90_000).toUTCString() },
      NOW + 90_000,
      'provider_retry_after',
    ],
  ])('%s', (_title, observation, expectedAt, source) => {
    const result = plan(observation);
    expect(result).toMatchObject({ kind: 'poll', atMs: expectedAt, source });
    if (result.kind === 'poll')
      expect(result.record.schedule).toEqual({ nextPollAtMs: expectedAt, delaySource: source });
  });

  it('H1: 429 without Retry-After increases the delay sharply and counts it', () => {
    const record = observingRecord({ baseDelayMs: 100, maxDelayMs: 10_000, rateLimitMultiplier: 4 });
    const ordinary = plan({ remoteState: 'running', category: 'pending' }, record, 0.999);
    const limited = plan({ httpStatus: 429 }, record, 0);
    if (ordinary.kind !== 'poll' || limited.kind !== 'poll') throw new Error('expected polls');
    expect(ordinary.atMs - NOW).toBe(100);
    // raw 100 ms x 4 for the first 429, jitter at least half: 200 ms, twice the longest ordinary delay.
    expect(limited.atMs - NOW).toBeGreaterThanOrEqual(200);
    expect(limited.source).toBe('local_backoff');
    expect(limited.record.used).toMatchObject({ rateLimited: 1, consecutiveRateLimited: 1 });
  });

  it('H1: a 429 with an unusable Retry-After is treated as one without it, and the rejection is recorded', () => {
    const record = observingRecord({ baseDelayMs: 100, maxDelayMs: 10_000, rateLimitMultiplier: 4 });
    const result = plan({ httpStatus: 429, retryAfter: 'soon' }, record, 0);
    if (result.kind !== 'poll') throw new Error(result.kind);
    expect(result.atMs - NOW).toBeGreaterThanOrEqual(200);
    expect(result.hintRejected).toMatch(/^unparseable/);
  });

  it('H1: persistent 429s escalate as rate_limited after maxRateLimited in a row', () => {
    const record = withUsed(observingRecord({ maxRateLimited: 3 }), { consecutiveRateLimited: 2, rateLimited: 2 });
    const result = plan({ httpStatus: 429, retryAfter: '1' }, record);
    expect(result).toMatchObject({ kind: 'stop', outcome: 'escalated', escalationReason: 'rate_limited' });
    expect(result.events.map((e) => e.type)).toEqual(['escalate']);
  });

  it('H1: any non-429 answer resets the consecutive 429 count but not the total', () => {
    const record = withUsed(observingRecord(), { consecutiveRateLimited: 2, rateLimited: 2 });
    const result = plan({ remoteState: 'running', category: 'pending' }, record);
    expect(result.record.used).toMatchObject({ consecutiveRateLimited: 0, rateLimited: 2 });
  });

  it.each([401, 403])('H4: %i stops at once and escalates authorization_denied, offering no retry', (status) => {
    const result = plan({ httpStatus: status });
    expect(result).toMatchObject({ kind: 'stop', escalationReason: 'authorization_denied' });
    const escalate = result.events[0];
    if (escalate?.type !== 'escalate') throw new Error(`expected an escalation, got ${escalate?.type}`);
    expect(escalate.escalation.options.map((offered) => offered.option)).toEqual(['close', 'inspect_provider_console']);
  });

  it('H3: 404 inside the consistency window after acceptance waits', () => {
    const record = observingRecord({ notFoundWindowMs: 10_000 });
    const result = plan({ httpStatus: 404 }, record, 0.5, T0 + 1000 + 10_000);
    expect(result.kind).toBe('poll');
  });

  it('H3: 404 after the consistency window escalates provider_failure with the job ID and timestamps', () => {
    const record = observingRecord({ notFoundWindowMs: 10_000 });
    const result = plan({ httpStatus: 404 }, record, 0.5, T0 + 1000 + 10_001);
    expect(result).toMatchObject({ kind: 'stop', escalationReason: 'provider_failure' });
    if (result.kind === 'stop') {
      expect(result.detail).toContain('job_7ad2');
      expect(result.detail).toContain(new Date(T0 + 1000).toISOString());
    }
  });

  it.each([
    ['H5: 500 uses the transport-failure budget', { httpStatus: 500, providerRequestId: 'req-9' }],
    ['H5: 502 uses the transport-failure budget', { httpStatus: 502 }],
    [
      'H5: a network error after sending uses the transport-failure budget',
      { transport: 'ambiguous' as const, httpStatus: undefined, errorCategory: 'reset' },
    ],
    [
      'H5: a connect failure uses the transport-failure budget',
      { transport: 'not_sent' as const, httpStatus: undefined, errorCategory: 'connect_refused' },
    ],
  ])('%s', (_title, observation: Partial<Observation>) => {
    const result = plan(observation);
    expect(result.kind).toBe('poll');
    expect(result.record.used.transportFailures).toBe(1);
    const entry = result.record.journal.observations.at(-1)!;
    expect(entry.body).toMatchObject({ transport: observation.transport ?? 'response', decision: 'wait' });
    if ('providerRequestId' in observation) expect(entry.body.providerRequestId).toBe('req-9');
  });
});

describe('stop predicates (S1-S5)', () => {
  it('S1: a success with its result reference leads to collection, then succeeded only with a valid result', () => {
    const success = {
      remoteState: 'done',
      category: 'success' as const,
      resultReference: { url: 'https://api.example/r/1' },
    };
    const result = plan(success);
    expect(result).toMatchObject({ kind: 'collect' });
    let record = result.record;
    for (const event of result.events) {
      const applied = transition(record, event, NOW);
      if (applied.kind !== 'applied') throw new Error(applied.message);
      record = applied.record;
    }
    expect(record.localState).toBe('result_collecting');
    const done = transition(
      record,
      { type: 'result_validated', actor: 'workflow', result: { validation: 'valid', recordCount: 3 } },
      NOW,
    );
    expect(done).toMatchObject({ kind: 'applied', record: { localState: 'succeeded' } });
  });

  it.each([
    [
      'S2: a terminal failure stops as failed',
      { remoteState: 'error', category: 'failure' as const },
      'failed',
      undefined,
    ],
    [
      'S2: an expired job stops as failed',
      { remoteState: 'expired', category: 'expired' as const },
      'failed',
      undefined,
    ],
    ['S2: an unparseable answer escalates', { parseProblem: 'HTML error page' }, 'escalated', 'provider_failure'],
    [
      'S2: a state outside the table escalates unknown_state',
      { remoteState: 'paused', category: 'unknown' as const },
      'escalated',
      'unknown_state',
    ],
  ])('%s', (_title, observation, outcome, reason) => {
    const result = plan(observation);
    expect(result).toMatchObject({ kind: 'stop', outcome });
    if (reason !== undefined) expect(result).toMatchObject({ escalationReason: reason });
    let record = result.record;
    for (const event of result.events) {
      const applied = transition(record, event, NOW);
      expect(applied.kind).toBe('applied');
      if (applied.kind === 'applied') record = applied.record;
    }
    expect(record.localState).toBe(outcome);
  });

  it('S3: the deadline stops polling even if the state just changed to success', () => {
    const record = observingRecord();
    const late = record.deadlines.resultDeadlineMs;
    const result = plan(
      { remoteState: 'done', category: 'success', resultReference: { url: 'https://x/r' } },
      record,
      0.5,
      late,
    );
    expect(result).toMatchObject({ kind: 'stop', outcome: 'result_timed_out', escalationReason: 'deadline_exceeded' });
    expect(result.events.map((e) => e.type)).toEqual(['deadline_reached', 'escalate']);
    expect(result.record.remote.category).toBe('success');
  });

  it('S3, P5: on waking, the deadline is checked before anything else', () => {
    const record = withUsed({ ...observingRecord(), schedule: {} }, { statusRequests: 100 });
    const result = reserveStatusRequest(record, stepAt(record.deadlines.resultDeadlineMs));
    expect(result).toMatchObject({ kind: 'stop', code: 'ASYNCJOB_ERR_DEADLINE_EXCEEDED', outcome: 'result_timed_out' });
  });

  it('S4: the budget stops when the next request would exceed it', () => {
    const record = withUsed({ ...observingRecord({ maxStatusRequests: 5 }), schedule: {} }, { statusRequests: 5 });
    const result = reserveStatusRequest(record, stepAt(NOW));
    expect(result).toMatchObject({
      kind: 'stop',
      code: 'ASYNCJOB_ERR_REQUEST_BUDGET_EXHAUSTED',
      escalationReason: 'request_budget_exhausted',
    });
    const planned = plan(
      { remoteState: 'running', category: 'pending' },
      withUsed(observingRecord({ maxStatusRequests: 5 }), { statusRequests: 5 }),
    );
    expect(planned).toMatchObject({ kind: 'stop', escalationReason: 'request_budget_exhausted' });
  });

  it('S5: a spent transport-failure budget escalates provider_failure', () => {
    const record = withUsed(observingRecord({ maxTransportFailures: 3 }), { transportFailures: 2 });
    const result = plan({ httpStatus: 503 }, record);
    expect(result).toMatchObject({ kind: 'stop', escalationReason: 'provider_failure' });
    expect(result.record.used.transportFailures).toBe(3);
  });
});

describe('polling (P2-P8, B2)', () => {
  it('P6: 200 saying running says nothing about success', () => {
    expect(plan({ remoteState: 'running', category: 'pending' }).kind).toBe('poll');
  });

  it('P7: success without the required result reference is not ready and escalates', () => {
    expect(plan({ remoteState: 'done', category: 'success' })).toMatchObject({
      kind: 'stop',
      escalationReason: 'unknown_state',
    });
  });

  it("P7: running after the job's own reported expiry escalates", () => {
    const result = plan({ remoteState: 'running', category: 'pending', expiresAt: new Date(NOW - 1).toISOString() });
    expect(result).toMatchObject({ kind: 'stop', escalationReason: 'unknown_state' });
  });

  it('P8: progress of 100% is recorded, never taken as completion', () => {
    const result = plan({ remoteState: 'running', category: 'pending', progress: 1 });
    expect(result.kind).toBe('poll');
    expect(result.record.remote.progress).toBe(1);
  });

  it('P3: a valid provider hint is used, and a rejected one is recorded with the reason', () => {
    const used = plan({ remoteState: 'running', category: 'pending', hints: { pollAfterSeconds: 42 } });
    expect(used).toMatchObject({ kind: 'poll', atMs: NOW + 42_000, source: 'provider_poll_hint' });
    const rejected = plan({ remoteState: 'running', category: 'pending', hints: { pollAfterSeconds: -3 } });
    expect(rejected).toMatchObject({ kind: 'poll', source: 'local_backoff' });
    if (rejected.kind === 'poll') {
      expect(rejected.hintRejected).toMatch(/^negative/);
      expect(rejected.record.journal.observations.at(-1)?.body.hintRejected).toMatch(/^negative/);
      expect(rejected.record.schedule.hintRejected).toMatch(/^negative/);
    }
  });

  it('P3: a hint shorter than Retry-After never wins: Retry-After is a minimum', () => {
    const result = plan({
      remoteState: 'running',
      category: 'pending',
      retryAfter: '60',
      hints: { pollAfterSeconds: 5 },
    });
    expect(result).toMatchObject({ kind: 'poll', atMs: NOW + 60_000, source: 'provider_retry_after' });
  });

  it('P3: a Retry-After beyond the deadline means no poll before the deadline', () => {
    const record = observingRecord();
    const now = record.deadlines.resultDeadlineMs - 10_000;
    const result = plan({ httpStatus: 503, retryAfter: '60' }, record, 0.5, now);
    expect(result).toMatchObject({
      kind: 'deadline_wait',
      atMs: record.deadlines.resultDeadlineMs,
      source: 'deadline',
    });
  });

  it('P5: a nextPollAt far in the past gives exactly one request now, never a burst', () => {
    const base = observingRecord();
    const record: OperationRecord = { ...base, schedule: { nextPollAtMs: T0, delaySource: 'local_backoff' } };
    const first = reserveStatusRequest(record, stepAt(T0 + 600_000));
    expect(first).toMatchObject({ kind: 'reserved', requestNumber: 2 });
    if (first.kind !== 'reserved') return;
    const second = reserveStatusRequest(first.record, stepAt(T0 + 600_000));
    expect(second).toMatchObject({ kind: 'not_yet', reason: 'reservation_open' });
    const notYet = reserveStatusRequest({ ...base, schedule: { nextPollAtMs: T0 + 5000 } }, stepAt(T0 + 4000));
    expect(notYet).toMatchObject({ kind: 'not_yet', atMs: T0 + 5000, reason: 'scheduled_later' });
  });

  it('B2: the counter is incremented at reservation, before sending, and retries below the workflow count', () => {
    const base = { ...observingRecord(), schedule: {} };
    const reserved = reserveStatusRequest(base, stepAt(NOW));
    if (reserved.kind !== 'reserved') throw new Error('not reserved');
    expect(reserved.record.used.statusRequests).toBe(base.used.statusRequests + 1);
    const result = plan({ remoteState: 'running', category: 'pending', requestsSent: 3 }, reserved.record);
    expect(result.record.used.statusRequests).toBe(base.used.statusRequests + 3);
    expect(result.record.schedule.reservedAtMs).toBeUndefined();
  });

  it('P2: the backoff doubles per attempt up to the cap', () => {
    const policy = pollPolicySchema.parse({});
    expect([0, 1, 2, 3, 4, 5, 6].map((a) => rawBackoffMs(policy, a))).toEqual([
      5_000, 10_000, 20_000, 40_000, 80_000, 120_000, 120_000,
    ]);
  });

  it('P2: jitter is always inside [50%, 100%] of the capped raw delay (bounded, the default)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 0, max: 40 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (baseDelayMs, attempt, random) => {
          const policy = pollPolicySchema.parse({ baseDelayMs, maxDelayMs: Math.max(baseDelayMs, 120_000) });
          const raw = rawBackoffMs(policy, attempt);
          expect(raw).toBeLessThanOrEqual(policy.maxDelayMs);
          const delay = jitterMs(raw, policy, random);
          expect(delay).toBeGreaterThanOrEqual(raw * 0.5);
          expect(delay).toBeLessThanOrEqual(raw);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('P2: full jitter stays inside (0, 100%] of the raw delay', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 120_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (raw, random) => {
          const delay = jitterMs(raw, pollPolicySchema.parse({ jitter: 'full' }), random);
          expect(delay).toBeGreaterThanOrEqual(1);
          expect(delay).toBeLessThanOrEqual(raw);
        },
      ),
      { numRuns: 3000 },
    );
  });

  const retryAfterArb = fc.oneof(
    fc.integer({ min: -10, max: 30_000 }).map(String),
    fc.integer({ min: -600_000, max: 30_000_000 }).map((d) => new Date(NOW + d).toUTCString()),
    fc.constantFrom('soon', '1.5', ''),
  );
  const hintArb = fc.record(
    {
      pollAfterSeconds: fc.oneof(fc.integer({ min: -100, max: 30_000 }), fc.double({ noNaN: false }), fc.string()),
      nextCheckAt: fc.oneof(
        fc.integer({ min: NOW - 100_000, max: NOW + 20_000_000 }).map((ms) => new Date(ms).toISOString()),
        fc.string(),
      ),
    },
    { requiredKeys: [] },
  );
  const waitingObservationArb = fc.record({
    httpStatus: fc.constantFrom(200, 202, 429, 500, 503),
    retryAfter: fc.option(retryAfterArb, { nil: undefined }),
    hints: fc.option(hintArb, { nil: undefined }),
  });

  it('P3, P5: a planned poll is never after the deadline, never before a valid Retry-After, never in the past', () => {
    fc.assert(
      fc.property(
        waitingObservationArb,
        fc.integer({ min: 0, max: 3_700_000 }),
        fc.integer({ min: 0, max: 12 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.constantFrom<'bounded' | 'full'>('bounded', 'full'),
        (answer, offsetMs, attempt, random, jitter) => {
          const record = withUsed(observingRecord({ jitter, maxTransportFailures: 1000, maxRateLimited: 1000 }), {
            backoffAttempt: attempt,
          });
          const nowMs = T0 + offsetMs;
          const observation = obs({ ...answer, receivedAtMs: nowMs, remoteState: 'running', category: 'pending' });
          const result = planAfterObservation(record, observation, stepAt(nowMs, random));
          const deadline = record.deadlines.resultDeadlineMs;
          if (nowMs >= deadline) {
            expect(result.kind).toBe('stop');
            return;
          }
          expect(['poll', 'deadline_wait']).toContain(result.kind);
          if (result.kind !== 'poll' && result.kind !== 'deadline_wait') return;
          expect(result.atMs).toBeLessThanOrEqual(deadline);
          expect(result.atMs).toBeGreaterThanOrEqual(nowMs);
          if (result.kind === 'poll') {
            expect(result.atMs).toBeLessThan(deadline);
            if (answer.retryAfter !== undefined) {
              const retryAfter = parseRetryAfter(answer.retryAfter, nowMs, record.policy.maxHintMs);
              if (retryAfter.kind === 'ok') expect(result.atMs).toBeGreaterThanOrEqual(retryAfter.atMs);
            }
          }
          expect(result.record.schedule.nextPollAtMs).toBe(result.atMs);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('P2: with no provider guidance, the planned delay is inside [50%, 100%] of the capped raw delay', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, random) => {
          const record = withUsed(observingRecord(), { backoffAttempt: attempt });
          const observation = obs({ receivedAtMs: NOW, remoteState: 'running', category: 'pending' });
          const result = planAfterObservation(record, observation, stepAt(NOW, random));
          if (result.kind !== 'poll') throw new Error(result.kind);
          const raw = rawBackoffMs(record.policy, attempt);
          expect(result.atMs - NOW).toBeGreaterThanOrEqual(raw / 2);
          expect(result.atMs - NOW).toBeLessThanOrEqual(raw);
          expect(result.record.used.backoffAttempt).toBe(attempt + 1);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('B2, S4: over any run of answers the status-request counter never exceeds the budget', () => {
    const answerArb = fc.record({
      httpStatus: fc.constantFrom(200, 200, 200, 404, 429, 500, 503),
      retryAfter: fc.option(fc.integer({ min: 0, max: 5 }).map(String), { nil: undefined }),
      category: fc.constantFrom(
        'pending' as const,
        'pending' as const,
        'pending' as const,
        'success' as const,
        'unknown' as const,
      ),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.array(answerArb, { minLength: 1, maxLength: 60 }),
        fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 60, maxLength: 60 }),
        (maxStatusRequests, answers, randoms) => {
          let record: OperationRecord = {
            ...observingRecord({
              maxStatusRequests,
              baseDelayMs: 1,
              maxDelayMs: 10,
              maxTransportFailures: 1000,
              maxRateLimited: 1000,
              notFoundWindowMs: 1_000_000,
            }),
            schedule: {},
          };
          record = { ...record, used: { ...record.used, statusRequests: 0 } };
          let now = NOW;
          let sent = 0;
          for (const [i, answer] of answers.entries()) {
            const reserved = reserveStatusRequest(record, stepAt(now));
            if (reserved.kind === 'stop') break;
            if (reserved.kind === 'not_yet') {
              now = reserved.atMs;
              continue;
            }
            sent += 1;
            expect(reserved.record.used.statusRequests).toBeLessThanOrEqual(maxStatusRequests);
            const observation = obs({
              receivedAtMs: now,
              httpStatus: answer.httpStatus,
              remoteState: answer.category === 'unknown' ? 'weird' : 'running',
              category: answer.category,
              ...(answer.retryAfter !== undefined ? { retryAfter: answer.retryAfter } : {}),
              ...(answer.category === 'success' ? { category: 'pending' as const } : {}),
            });
            const result = planAfterObservation(reserved.record, observation, stepAt(now, randoms[i] ?? 0));
            record = result.record;
            expect(record.used.statusRequests).toBeLessThanOrEqual(maxStatusRequests);
            if (result.kind !== 'poll') break;
            now = result.atMs;
          }
          expect(sent).toBeLessThanOrEqual(maxStatusRequests);
          expect(record.used.statusRequests).toBe(sent);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('T3: the recorded decision', () => {
  it.each([
    [
      'a pending answer',
      {
        remoteState: 'running',
        category: 'pending' as const,
        progress: 0.3,
        providerTimestamp: '2026-11-29T10:00:01+00:00',
      },
    ],
    ['a 503 with Retry-After', { httpStatus: 503, retryAfter: '120', providerRequestId: 'req-1' }],
    ['a rejected hint', { remoteState: 'running', category: 'pending' as const, hints: { nextCheckAt: 'whenever' } }],
    ['a 403', { httpStatus: 403 }],
    [
      'a success',
      { remoteState: 'done', category: 'success' as const, resultReference: { url: 'https://x/r', sha256: 'ab' } },
    ],
  ])('T3: after %s the record, with its appended observation, still validates', (_title, observation) => {
    const result = plan(observation);
    expect(operationRecordSchema.parse(result.record)).toEqual(result.record);
    const entry = result.record.journal.observations.at(-1)!;
    expect(entry.sequence).toBe(result.record.journal.nextSequence - 1);
    expect(entry.body).toMatchObject({
      statusRequestsUsed: result.record.used.statusRequests,
      statusRequestsAllowed: result.record.budgets.maxStatusRequests,
    });
    for (const event of result.events)
      if (event.type === 'escalate') expect(openEscalationSchema.parse(event.escalation)).toEqual(event.escalation);
  });

  it('P1: the first answer after acceptance moves accepted -> observing, then to collection on success', () => {
    const base = observingRecord();
    const accepted: OperationRecord = { ...base, localState: 'accepted' };
    const result = plan(
      { remoteState: 'done', category: 'success', resultReference: { url: 'https://x/r' } },
      accepted,
    );
    expect(result.events.map((e) => e.type)).toEqual(['status_observed', 'remote_succeeded']);
    let record = result.record;
    for (const event of result.events) {
      const applied = transition(record, event, NOW);
      if (applied.kind !== 'applied') throw new Error(applied.message);
      record = applied.record;
    }
    expect(record.localState).toBe('result_collecting');
  });

  it('X2: while cancelling, a success leads to collection without leaving cancelling; a cancelled answer ends it', () => {
    const base = observingRecord();
    const cancelling: OperationRecord = {
      ...base,
      localState: 'cancelling',
      deadlines: { ...base.deadlines, cancelDeadlineMs: NOW + 60_000 },
      cancel: { requestedBy: 'a', reason: 'r', expectedEffect: 'e', requestedAtMs: T0, sentAtMs: T0 },
    };
    expect(
      plan({ remoteState: 'done', category: 'success', resultReference: { url: 'https://x/r' } }, cancelling),
    ).toMatchObject({ kind: 'collect', events: [] });
    const ended = plan({ remoteState: 'cancelled', category: 'cancelled' }, cancelling);
    expect(ended).toMatchObject({ kind: 'stop', outcome: 'cancelled' });
    expect(ended.events.map((e) => e.type)).toEqual(['remote_cancelled']);
    const late = plan({ remoteState: 'running', category: 'pending' }, cancelling, 0.5, NOW + 60_000);
    expect(late).toMatchObject({
      kind: 'stop',
      outcome: 'cancellation_unconfirmed',
      escalationReason: 'cancellation_unconfirmed',
    });
  });
});
