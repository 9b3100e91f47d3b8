/**
 * The wait planner (P2-P8, B2, H1-H5, S1-S5): pure functions that decide, from the record, the latest status
 * observation and the step context (the time, a random number, who acts, what the adapter can do), what happens
 * next. They execute nothing and read no clock: the workflow applies the returned record and events and sleeps
 * until the returned time. The policy and the budgets are the record's own (B1: persisted, changed only by
 * decisions).
 *
 * The loop, per status read:
 * 1. {@link reserveStatusRequest} at wake-up: deadline first (P5, S3), then the budget (B2, S4), then the
 *    schedule; the counter is incremented BEFORE the request is sent, so an unused reservation is visible and
 *    an extra request never is.
 * 2. the activity sends exactly one status request and returns an observation (a 503 is an observation);
 * 3. {@link planAfterObservation} records the observation with the controller's decision (T3) and returns one
 *    of the {@link PlanResult} kinds.
 */
import { type DelaySource, type EscalationReason, type LocalState } from './journal';
import { type Observation } from './observation';
import { type OperationEvent } from './operation-event';
import { type OperationRecord } from './operation';
import { raiseEscalation } from './raise-escalation';
import { type ControllerDecision, recordObservation } from './record-observation';
import { countAnswer, rateLimitedInARow } from './answer-policy';
import { classify } from './status-verdict';
import { type StepContext } from './step-draft';
import { planWait } from './wait-time';

/** What the planner needs of the step context. */
export type PlannerContext = Pick<StepContext, 'nowMs' | 'random' | 'actor' | 'capabilities'>;

/** Why automation stopped, as the workflow reports it. */
type StopOutcome = 'failed' | 'cancelled' | 'result_timed_out' | 'cancellation_unconfirmed' | 'escalated';

/** A stop with the transition events that record it. */
interface Stop {
  outcome: StopOutcome;
  escalationReason?: EscalationReason;
  detail: string;
  record: OperationRecord;
  events: OperationEvent[];
}

/**
 * What to do after an observation.
 * - `poll`: send the next status request at `atMs` (never after the deadline, never before a valid
 *   Retry-After); `source` says why that time (P4); `hintRejected` says why a provider hint was ignored (P3).
 * - `deadline_wait`: nothing may be sent before the deadline (a Retry-After reaches past it, or the next
 *   backoff would): sleep until `atMs` = the deadline, where the wake-up check stops (S3). A webhook may still
 *   arrive meanwhile.
 * - `collect`: the provider reports success with a result reference: collect the result (R1, P9).
 * - `stop`: automation stops with `outcome`; `escalationReason` is set when a human must decide.
 * Every kind carries the updated `record` (observation appended, counters and schedule set) and the
 * transition `events` to apply in order with `transition()` (e.g. `accepted -> observing` on a first answer).
 */
export type PlanResult =
  | {
      kind: 'poll';
      atMs: number;
      source: DelaySource;
      hintRejected?: string;
      record: OperationRecord;
      events: OperationEvent[];
    }
  | {
      kind: 'deadline_wait';
      atMs: number;
      source: 'deadline';
      hintRejected?: string;
      record: OperationRecord;
      events: OperationEvent[];
    }
  | { kind: 'collect'; record: OperationRecord; events: OperationEvent[] }
  | ({ kind: 'stop' } & Stop);

/** The deadline in force: the cancel deadline while cancelling, the result deadline otherwise (U4, X3). */
export function effectiveDeadlineMs(record: OperationRecord): number {
  if (record.localState === 'cancelling' && record.deadlines.cancelDeadlineMs !== undefined)
    return record.deadlines.cancelDeadlineMs;
  return record.deadlines.resultDeadlineMs;
}

/**
 * W1: whether a webhook may bring the next read forward to `nowMs`: a read is planned later and nothing is reserved,
 * and the wait is ours to shorten: never a provider's `Retry-After` (P3), never the growing backoff after a 429
 * (H1: the provider said "not now", and a read sooner only counts another 429), never past the deadline.
 */
export function webhookMayBringReadForward(record: OperationRecord, nowMs: number): boolean {
  return (
    record.schedule.reservedAtMs === undefined &&
    record.schedule.delaySource !== 'provider_retry_after' &&
    record.used.consecutiveRateLimited === 0 &&
    (record.schedule.nextPollAtMs ?? 0) > nowMs &&
    nowMs < effectiveDeadlineMs(record)
  );
}

/** The escalation event raised from `record` (E1). `raisedFrom` names the state a preceding event leads to. */
function escalationEvent(
  record: OperationRecord,
  reason: EscalationReason,
  detail: string,
  ctx: Pick<PlannerContext, 'nowMs' | 'actor' | 'capabilities'>,
  cause: string,
  raisedFrom?: LocalState,
): OperationEvent {
  const escalation = raiseEscalation(record, reason, detail, ctx.nowMs, ctx.capabilities, raisedFrom);
  return { type: 'escalate', actor: ctx.actor, cause, escalation };
}

/** The stop for a deadline reached (S3, X3): the local timeout transition, then the escalation. */
function deadlineStop(
  record: OperationRecord,
  ctx: Pick<PlannerContext, 'nowMs' | 'actor' | 'capabilities'>,
  cause: string,
): Stop {
  const at = new Date(effectiveDeadlineMs(record)).toISOString();
  const frame = { actor: ctx.actor, cause };
  if (record.localState === 'cancelling') {
    const detail = `no provider confirmation of the cancel before the cancel deadline ${at}`;
    const reason = 'cancellation_unconfirmed';
    const escalation = escalationEvent(record, reason, detail, ctx, cause, 'cancellation_unconfirmed');
    const events: OperationEvent[] = [{ type: 'cancel_deadline_reached', ...frame }, escalation];
    return { outcome: 'cancellation_unconfirmed', escalationReason: reason, detail, record, events };
  }
  const detail = `the result deadline ${at} has passed`;
  if (record.localState === 'observing') {
    const escalation = escalationEvent(record, 'deadline_exceeded', detail, ctx, cause, 'result_timed_out');
    const events: OperationEvent[] = [{ type: 'deadline_reached', ...frame }, escalation];
    return { outcome: 'result_timed_out', escalationReason: 'deadline_exceeded', detail, record, events };
  }
  const events = [escalationEvent(record, 'deadline_exceeded', detail, ctx, cause)];
  return { outcome: 'escalated', escalationReason: 'deadline_exceeded', detail, record, events };
}

/** The result of {@link reserveStatusRequest}. */
export type ReserveResult =
  | { kind: 'reserved'; record: OperationRecord; requestNumber: number }
  | { kind: 'not_yet'; atMs: number; reason: 'scheduled_later' | 'reservation_open'; record: OperationRecord }
  | {
      kind: 'stop';
      code:
        | 'ASYNCJOB_ERR_DEADLINE_EXCEEDED'
        | 'ASYNCJOB_ERR_REQUEST_BUDGET_EXHAUSTED'
        | 'ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED';
      outcome: StopOutcome | 'not_polling';
      escalationReason?: EscalationReason;
      detail: string;
      record: OperationRecord;
      events: OperationEvent[];
    };

/**
 * B2, P5: called on waking, before a status request. Checks, in this order: the state polls at all; the
 * deadline (S3: checked first, no self-granted extension); the budget (S4: the next request would exceed it);
 * an open reservation (one request per observation: a missed schedule never causes a burst); the schedule
 * (`nextPollAtMs` in the future: not yet; in the past: exactly one request now). On success the counter is
 * incremented BEFORE the request is sent, and the reservation is recorded. Pure.
 */
export function reserveStatusRequest(
  record: OperationRecord,
  ctx: Pick<PlannerContext, 'nowMs' | 'actor' | 'capabilities'>,
): ReserveResult {
  const { nowMs } = ctx;
  if (record.localState !== 'accepted' && record.localState !== 'observing' && record.localState !== 'cancelling') {
    const detail = `no status reads in state ${record.localState}`;
    return {
      kind: 'stop',
      code: 'ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED',
      outcome: 'not_polling',
      detail,
      record,
      events: [],
    };
  }
  if (nowMs >= effectiveDeadlineMs(record))
    return { kind: 'stop', code: 'ASYNCJOB_ERR_DEADLINE_EXCEEDED', ...deadlineStop(record, ctx, 'deadline_check') };
  if (record.used.statusRequests >= record.budgets.maxStatusRequests) {
    const detail = `all ${record.budgets.maxStatusRequests} status requests used`;
    return {
      kind: 'stop',
      code: 'ASYNCJOB_ERR_REQUEST_BUDGET_EXHAUSTED',
      outcome: 'escalated',
      escalationReason: 'request_budget_exhausted',
      detail,
      record,
      events: [escalationEvent(record, 'request_budget_exhausted', detail, ctx, 'budget_check')],
    };
  }
  if (record.schedule.reservedAtMs !== undefined)
    return { kind: 'not_yet', atMs: nowMs, reason: 'reservation_open', record };
  if (record.schedule.nextPollAtMs !== undefined && record.schedule.nextPollAtMs > nowMs)
    return { kind: 'not_yet', atMs: record.schedule.nextPollAtMs, reason: 'scheduled_later', record };
  const requestNumber = record.used.statusRequests + 1;
  return {
    kind: 'reserved',
    requestNumber,
    record: { ...record, used: { ...record.used, statusRequests: requestNumber }, schedule: { reservedAtMs: nowMs } },
  };
}

/** One status answer being planned: the record before it, the record with its counters, and how events cite it. */
interface StatusAnswer {
  before: OperationRecord;
  /** `before` with the counters after this answer and the reservation closed. */
  counted: OperationRecord;
  observation: Observation;
  ctx: PlannerContext;
  frame: { actor: string; cause: string; evidenceSequence: number };
  /** `accepted -> observing` when this is the first readable answer after acceptance (P1); else none. */
  firstAnswer: OperationEvent[];
}

/** The record with the answer appended and the controller's decision recorded with it (T3). */
function recordAnswer(answer: StatusAnswer, decision: ControllerDecision, updated = answer.counted): OperationRecord {
  return recordObservation(updated, answer.observation, answer.ctx.nowMs, answer.ctx.actor, decision).record;
}

/** After an answer that says "not yet": the budget first (S4), then the next read's time (P2, P3, H1). */
function planNextRead(answer: StatusAnswer, note: string | undefined): PlanResult {
  const { before, counted, observation, ctx } = answer;
  const used = counted.used;
  if (used.statusRequests >= before.budgets.maxStatusRequests) {
    const detail = `all ${before.budgets.maxStatusRequests} status requests used`;
    const record = recordAnswer(answer, { decision: 'escalate', note: detail });
    const escalation = raiseEscalation(record, 'request_budget_exhausted', detail, ctx.nowMs, ctx.capabilities);
    const events: OperationEvent[] = [...answer.firstAnswer, { type: 'escalate', ...answer.frame, escalation }];
    return { kind: 'stop', outcome: 'escalated', escalationReason: 'request_budget_exhausted', detail, record, events };
  }
  const stateChanged =
    observation.signal === 'ok' &&
    observation.remoteState !== undefined &&
    observation.remoteState !== before.remote.state;
  const attempt = stateChanged ? 0 : used.backoffAttempt;
  const plan = planWait(
    {
      observation,
      policy: before.policy,
      deadlineMs: effectiveDeadlineMs(before),
      backoffAttempt: attempt,
      rateLimitedInARow: rateLimitedInARow(used, observation.signal),
    },
    ctx,
  );
  const hint = plan.hintRejected !== undefined ? { hintRejected: plan.hintRejected } : {};
  const schedule = { nextPollAtMs: plan.atMs, delaySource: plan.source, ...hint };
  const decision = { decision: plan.kind === 'poll' ? 'wait' : 'wait_for_deadline', ...schedule };
  const record = recordAnswer(answer, note !== undefined ? { ...decision, note } : decision, {
    ...counted,
    used: { ...used, backoffAttempt: attempt + 1 },
    schedule,
  });
  const events = answer.firstAnswer;
  if (plan.kind === 'poll') return { kind: 'poll', atMs: plan.atMs, source: plan.source, ...hint, record, events };
  return { kind: 'deadline_wait', atMs: plan.atMs, source: 'deadline', ...hint, record, events };
}

/**
 * Decides what follows a status observation (see {@link PlanResult}). Order: the reservation is closed and
 * retries below the workflow are counted (B2); the deadline is checked first (S3: even if the state just
 * changed); then the answer is classified: transport failures against their budget (H5, S5), 401/403 at once
 * (H4), 429 counted and escalated when persistent (H1), 404 inside the consistency window waits (H3), the
 * state category (P1, P6, P7; progress is recorded, never completion, P8); before scheduling, the budget
 * (S4). `record` is the record after {@link reserveStatusRequest}. Pure; `ctx.random` in [0, 1).
 */
export function planAfterObservation(
  record: OperationRecord,
  observation: Observation,
  ctx: PlannerContext,
): PlanResult {
  const sequence = record.journal.nextSequence;
  const frame = { actor: ctx.actor, cause: `status_response:${sequence}`, evidenceSequence: sequence };
  const readable = observation.signal === 'ok' && observation.category !== undefined;
  // B2: retries below the workflow (`requestsSent` > 1) were status requests too.
  const retried = Math.max(0, (observation.requestsSent ?? 1) - 1);
  const used = countAnswer(
    { ...record.used, statusRequests: record.used.statusRequests + retried },
    'status',
    observation.signal,
  );
  const answer: StatusAnswer = {
    before: record,
    counted: { ...record, used, schedule: {} },
    observation,
    ctx,
    frame,
    firstAnswer:
      record.localState === 'accepted' && readable ? [{ type: 'status_observed', ...frame, observation }] : [],
  };
  if (ctx.nowMs >= effectiveDeadlineMs(record)) {
    const recorded = recordAnswer(answer, { decision: 'stop', note: 'the deadline has passed (S3)' });
    return { kind: 'stop', ...deadlineStop(recorded, ctx, frame.cause) };
  }
  const verdict = classify(answer.counted, record.policy, observation, used);
  switch (verdict.kind) {
    case 'escalate': {
      const recorded = recordAnswer(answer, { decision: 'escalate', note: verdict.detail });
      const escalation = raiseEscalation(recorded, verdict.reason, verdict.detail, ctx.nowMs, ctx.capabilities);
      const events: OperationEvent[] = [{ type: 'escalate', ...frame, escalation }];
      const { reason: escalationReason, detail } = verdict;
      return { kind: 'stop', outcome: 'escalated', escalationReason, detail, record: recorded, events };
    }
    case 'failed': {
      const recorded = recordAnswer(answer, { decision: 'stop', note: verdict.detail });
      const failed: OperationEvent = { type: 'remote_failed', ...frame, observation, reason: verdict.detail };
      const events = [...answer.firstAnswer, failed];
      return { kind: 'stop', outcome: 'failed', detail: verdict.detail, record: recorded, events };
    }
    case 'cancelled': {
      const recorded = recordAnswer(answer, { decision: 'stop', note: verdict.detail });
      const events: OperationEvent[] = [{ type: 'remote_cancelled', ...frame, observation }];
      return { kind: 'stop', outcome: 'cancelled', detail: verdict.detail, record: recorded, events };
    }
    case 'collect': {
      const recorded = recordAnswer(answer, { decision: 'collect' });
      // X2: while cancelling, a success is collected without leaving `cancelling`.
      const succeeded: OperationEvent = { type: 'remote_succeeded', ...frame, observation };
      const events = record.localState === 'cancelling' ? [] : [...answer.firstAnswer, succeeded];
      return { kind: 'collect', record: recorded, events };
    }
    case 'wait':
      return planNextRead(answer, verdict.note);
  }
}
