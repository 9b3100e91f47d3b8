/**
 * The wait planner (P2-P8, B2, H1-H5, S1-S5): pure functions that decide, from the record, the policy, the
 * latest status observation, the time and a random number, what happens next. They execute nothing and read
 * no clock: the workflow applies the returned record and events and sleeps until the returned time.
 *
 * The loop, per status read:
 * 1. {@link reserveStatusRequest} at wake-up: deadline first (P5, S3), then the budget (B2, S4), then the
 *    schedule; the counter is incremented BEFORE the request is sent, so an unused reservation is visible and
 *    an extra request never is.
 * 2. the activity sends exactly one status request and returns an observation (a 503 is an observation);
 * 3. {@link planAfterObservation} records the observation with the controller's decision (T3) and returns one
 *    of the {@link PlanResult} kinds.
 */
import { type AdapterCapabilities, NO_CAPABILITIES } from './escalation';
import { type DelaySource, type EscalationReason } from './journal';
import { type Observation } from './observation';
import { type OperationRecord } from './operation';
import { type PollPolicy } from './policy';
import { raiseEscalation } from './raise-escalation';
import { recordObservation } from './record-observation';
import { parseNextCheckAt, parsePollAfterSeconds, parseRetryAfter } from './retry-after';
import { classify } from './status-verdict';
import { type OperationEvent } from './transitions';

/** Why automation stopped, as the workflow reports it. */
export type StopOutcome = 'failed' | 'cancelled' | 'result_timed_out' | 'cancellation_unconfirmed' | 'escalated';

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
  | {
      kind: 'stop';
      outcome: StopOutcome;
      escalationReason?: EscalationReason;
      detail: string;
      record: OperationRecord;
      events: OperationEvent[];
    };

/** The input of {@link planAfterObservation}. */
export interface PlanInput {
  /** The record after {@link reserveStatusRequest} (the counter already incremented). */
  record: OperationRecord;
  policy: PollPolicy;
  /** The status observation (action `status`). */
  observation: Observation;
  /** Epoch ms. */
  nowMs: number;
  /** A uniform random number in [0, 1) for jitter. */
  random: number;
  /** Who records the decision; default `workflow`. */
  actor?: string;
  capabilities?: AdapterCapabilities;
}

/** The deadline in force: the cancel deadline while cancelling, the result deadline otherwise (U4, X3). */
export function effectiveDeadlineMs(record: OperationRecord): number {
  if (record.localState === 'cancelling' && record.deadlines.cancelDeadlineMs !== undefined)
    return record.deadlines.cancelDeadlineMs;
  return record.deadlines.resultDeadlineMs;
}

/** P2: the capped raw backoff delay for `attempt` (0-based): `min(maxDelayMs, baseDelayMs * 2^attempt)`. */
export function rawBackoffMs(policy: PollPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt, 60));
}

/**
 * P2: the jittered delay for a raw delay. Bounded (default): uniform in [minJitterRatio x raw, raw]; full:
 * uniform in [0, raw], at least 1 ms. Integer ms, never above `rawMs`. `random` must be in [0, 1).
 */
export function jitterMs(rawMs: number, policy: PollPolicy, random: number): number {
  const r = Math.min(Math.max(random, 0), 1);
  const lowRatio = policy.jitter === 'full' ? 0 : policy.minJitterRatio;
  const delay = Math.ceil(rawMs * (lowRatio + (1 - lowRatio) * r));
  return Math.min(rawMs, Math.max(1, delay));
}

function stopEvents(
  record: OperationRecord,
  reason: EscalationReason,
  detail: string,
  nowMs: number,
  actor: string,
  capabilities: AdapterCapabilities,
  cause: string,
  evidenceSequence?: number,
): OperationEvent[] {
  return [
    {
      type: 'escalate',
      actor,
      cause,
      ...(evidenceSequence !== undefined ? { evidenceSequence } : {}),
      escalation: raiseEscalation(record, reason, detail, nowMs, capabilities),
    },
  ];
}

/** The stop for a deadline reached at `nowMs` (S3, X3): the local timeout transition, then the escalation. */
function deadlineStop(
  record: OperationRecord,
  nowMs: number,
  actor: string,
  capabilities: AdapterCapabilities,
  cause: string,
) {
  const deadline = effectiveDeadlineMs(record);
  const at = new Date(deadline).toISOString();
  if (record.localState === 'cancelling') {
    const detail = `no provider confirmation of the cancel before the cancel deadline ${at}`;
    const escalation = raiseEscalation(
      record,
      'cancellation_unconfirmed',
      detail,
      nowMs,
      capabilities,
      'cancellation_unconfirmed',
    );
    return {
      outcome: 'cancellation_unconfirmed' as const,
      escalationReason: 'cancellation_unconfirmed' as const,
      detail,
      events: [
        { type: 'cancel_deadline_reached' as const, actor, cause },
        { type: 'escalate' as const, actor, cause, escalation },
      ],
    };
  }
  const detail = `the result deadline ${at} has passed`;
  if (record.localState === 'observing') {
    const escalation = raiseEscalation(record, 'deadline_exceeded', detail, nowMs, capabilities, 'result_timed_out');
    return {
      outcome: 'result_timed_out' as const,
      escalationReason: 'deadline_exceeded' as const,
      detail,
      events: [
        { type: 'deadline_reached' as const, actor, cause },
        { type: 'escalate' as const, actor, cause, escalation },
      ],
    };
  }
  return {
    outcome: 'escalated' as const,
    escalationReason: 'deadline_exceeded' as const,
    detail,
    events: stopEvents(record, 'deadline_exceeded', detail, nowMs, actor, capabilities, cause),
  };
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
 * incremented BEFORE the request is sent, and the reservation is recorded. The budgets come from the record,
 * not from `_policy` (B1: persisted, changed only by decisions); the policy argument keeps the call shape of
 * the other planner functions. Pure.
 */
export function reserveStatusRequest(
  record: OperationRecord,
  _policy: PollPolicy,
  nowMs: number,
  options: { actor?: string; capabilities?: AdapterCapabilities } = {},
): ReserveResult {
  const actor = options.actor ?? 'workflow';
  const capabilities = options.capabilities ?? NO_CAPABILITIES;
  if (record.localState !== 'accepted' && record.localState !== 'observing' && record.localState !== 'cancelling') {
    return {
      kind: 'stop',
      code: 'ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED',
      outcome: 'not_polling',
      detail: `no status reads in state ${record.localState}`,
      record,
      events: [],
    };
  }
  if (nowMs >= effectiveDeadlineMs(record)) {
    const stop = deadlineStop(record, nowMs, actor, capabilities, 'deadline_check');
    return { kind: 'stop', code: 'ASYNCJOB_ERR_DEADLINE_EXCEEDED', ...stop, record };
  }
  if (record.used.statusRequests >= record.budgets.maxStatusRequests) {
    const detail = `all ${record.budgets.maxStatusRequests} status requests used`;
    return {
      kind: 'stop',
      code: 'ASYNCJOB_ERR_REQUEST_BUDGET_EXHAUSTED',
      outcome: 'escalated',
      escalationReason: 'request_budget_exhausted',
      detail,
      record,
      events: stopEvents(record, 'request_budget_exhausted', detail, nowMs, actor, capabilities, 'budget_check'),
    };
  }
  if (record.schedule.reservedAtMs !== undefined) {
    return { kind: 'not_yet', atMs: nowMs, reason: 'reservation_open', record };
  }
  if (record.schedule.nextPollAtMs !== undefined && record.schedule.nextPollAtMs > nowMs) {
    return { kind: 'not_yet', atMs: record.schedule.nextPollAtMs, reason: 'scheduled_later', record };
  }
  const requestNumber = record.used.statusRequests + 1;
  return {
    kind: 'reserved',
    requestNumber,
    record: { ...record, used: { ...record.used, statusRequests: requestNumber }, schedule: { reservedAtMs: nowMs } },
  };
}

export interface WaitPlan {
  kind: 'poll' | 'deadline_wait';
  atMs: number;
  source: DelaySource;
  hintRejected?: string;
  rawMs: number;
}

/** Computes the next poll time (P2, P3, H1): backoff with jitter, Retry-After as a minimum, a valid hint used, the deadline as the limit. */
export function planWait(
  record: OperationRecord,
  policy: PollPolicy,
  o: Observation,
  nowMs: number,
  random: number,
  attempt: number,
  rateLimitedInARow: number,
): WaitPlan {
  const deadline = effectiveDeadlineMs(record);
  const rejected: string[] = [];
  let retryAfterMs: number | undefined;
  if (o.retryAfter !== undefined) {
    const ra = parseRetryAfter(o.retryAfter, o.receivedAtMs, policy.maxHintMs);
    if (ra.kind === 'ok') retryAfterMs = ra.atMs;
    else rejected.push(`${ra.reason}: ${ra.detail}`);
  }
  let rawMs = rawBackoffMs(policy, attempt);
  if (rateLimitedInARow > 0 && retryAfterMs === undefined) {
    // H1: a 429 without a usable Retry-After increases the delay sharply, per 429 in a row.
    rawMs = Math.min(
      policy.maxDelayMs * policy.rateLimitMultiplier,
      rawMs * policy.rateLimitMultiplier ** Math.min(rateLimitedInARow, 20),
    );
  }
  let atMs = nowMs + jitterMs(rawMs, policy, random);
  let source: DelaySource = 'local_backoff';
  let hintMs: number | undefined;
  const hints = o.hints;
  if (hints !== undefined) {
    const limits = { receivedAtMs: o.receivedAtMs, maxHintMs: policy.maxHintMs, deadlineMs: deadline };
    for (const parsed of [
      hints.pollAfterSeconds !== undefined ? parsePollAfterSeconds(hints.pollAfterSeconds, limits) : undefined,
      hints.nextCheckAt !== undefined ? parseNextCheckAt(hints.nextCheckAt, limits) : undefined,
    ]) {
      if (parsed === undefined) continue;
      if (parsed.kind === 'ok') hintMs = Math.max(hintMs ?? 0, parsed.atMs);
      else rejected.push(`${parsed.reason}: ${parsed.detail}`);
    }
  }
  if (hintMs !== undefined) {
    atMs = hintMs;
    source = 'provider_poll_hint';
  }
  // P3: Retry-After is a minimum: never before it, whatever the backoff or the hint says.
  if (retryAfterMs !== undefined && retryAfterMs >= atMs) {
    atMs = retryAfterMs;
    source = 'provider_retry_after';
  }
  atMs = Math.max(atMs, nowMs);
  const hintRejected = rejected.length > 0 ? rejected.join('; ').slice(0, 2000) : undefined;
  if (atMs >= deadline) {
    return {
      kind: 'deadline_wait',
      atMs: deadline,
      source: 'deadline',
      rawMs,
      ...(hintRejected !== undefined ? { hintRejected } : {}),
    };
  }
  return { kind: 'poll', atMs, source, rawMs, ...(hintRejected !== undefined ? { hintRejected } : {}) };
}

/**
 * Decides what follows a status observation (see {@link PlanResult}). Order: the reservation is closed and
 * retries below the workflow are counted (B2); the deadline is checked first (S3: even if the state just
 * changed); then the answer is classified: transport failures against their budget (H5, S5), 401/403 at once
 * (H4), 429 counted and escalated when persistent (H1), 404 inside the consistency window waits (H3), the
 * state category (P1, P6, P7; progress is recorded, never completion, P8); before scheduling, the budget
 * (S4). Pure; `random` in [0, 1).
 */
export function planAfterObservation(input: PlanInput): PlanResult {
  const { policy, observation: o, nowMs, random } = input;
  const actor = input.actor ?? 'workflow';
  const capabilities = input.capabilities ?? NO_CAPABILITIES;
  const before = input.record;

  const used = { ...before.used };
  used.statusRequests += Math.max(0, (o.requestsSent ?? 1) - 1);
  const isTransportFailure =
    o.transport === 'not_sent' ||
    o.transport === 'ambiguous' ||
    (o.transport === 'response' && o.httpStatus !== undefined && o.httpStatus >= 500);
  if (isTransportFailure) used.transportFailures += 1;
  if (o.transport === 'response' && o.httpStatus === 429) {
    used.rateLimited += 1;
    used.consecutiveRateLimited += 1;
  } else if (o.transport === 'response') {
    used.consecutiveRateLimited = 0;
  }
  const stateChanged =
    o.transport === 'response' &&
    o.httpStatus !== undefined &&
    o.httpStatus < 300 &&
    o.remoteState !== undefined &&
    o.remoteState !== before.remote.state;
  const attempt = stateChanged ? 0 : used.backoffAttempt;
  const base: OperationRecord = { ...before, used, schedule: {} };

  const finish = (decision: Parameters<typeof recordObservation>[4], updated: OperationRecord = base) =>
    recordObservation(updated, o, nowMs, actor, decision);
  const acceptEvents = (sequence: number): OperationEvent[] =>
    before.localState === 'accepted' &&
    o.transport === 'response' &&
    o.httpStatus !== undefined &&
    o.httpStatus < 300 &&
    o.category !== undefined &&
    o.parseProblem === undefined
      ? [
          {
            type: 'status_observed',
            actor,
            observation: o,
            cause: `status_response:${sequence}`,
            evidenceSequence: sequence,
          },
        ]
      : [];

  if (nowMs >= effectiveDeadlineMs(before)) {
    const seq = before.journal.nextSequence;
    const { record } = finish({ decision: 'stop', note: 'the deadline has passed (S3)' });
    const stop = deadlineStop(record, nowMs, actor, capabilities, `status_response:${seq}`);
    return { kind: 'stop', ...stop, record };
  }

  const verdict = classify(base, policy, o, used);
  const seq = before.journal.nextSequence;
  const cause = `status_response:${seq}`;
  switch (verdict.kind) {
    case 'escalate': {
      const { record } = finish({ decision: 'escalate', note: verdict.detail });
      const escalation = raiseEscalation(record, verdict.reason, verdict.detail, nowMs, capabilities);
      return {
        kind: 'stop',
        outcome: 'escalated',
        escalationReason: verdict.reason,
        detail: verdict.detail,
        record,
        events: [{ type: 'escalate', actor, cause, evidenceSequence: seq, escalation, observation: o }],
      };
    }
    case 'failed': {
      const { record } = finish({ decision: 'stop', note: verdict.detail });
      const events = [
        ...acceptEvents(seq),
        { type: 'remote_failed' as const, actor, cause, evidenceSequence: seq, observation: o, reason: verdict.detail },
      ];
      return { kind: 'stop', outcome: 'failed', detail: verdict.detail, record, events };
    }
    case 'cancelled': {
      const { record } = finish({ decision: 'stop', note: verdict.detail });
      return {
        kind: 'stop',
        outcome: 'cancelled',
        detail: verdict.detail,
        record,
        events: [{ type: 'remote_cancelled', actor, cause, evidenceSequence: seq, observation: o }],
      };
    }
    case 'collect': {
      const { record } = finish({ decision: 'collect' });
      const events: OperationEvent[] =
        before.localState === 'cancelling'
          ? []
          : [...acceptEvents(seq), { type: 'remote_succeeded', actor, cause, evidenceSequence: seq, observation: o }];
      return { kind: 'collect', record, events };
    }
    case 'wait': {
      // S4: the budget is checked before scheduling.
      if (used.statusRequests >= before.budgets.maxStatusRequests) {
        const detail = `all ${before.budgets.maxStatusRequests} status requests used`;
        const { record } = finish({ decision: 'escalate', note: detail });
        const escalation = raiseEscalation(record, 'request_budget_exhausted', detail, nowMs, capabilities);
        return {
          kind: 'stop',
          outcome: 'escalated',
          escalationReason: 'request_budget_exhausted',
          detail,
          record,
          events: [...acceptEvents(seq), { type: 'escalate', actor, cause, evidenceSequence: seq, escalation }],
        };
      }
      const isRateLimited = o.transport === 'response' && o.httpStatus === 429;
      const plan = planWait(base, policy, o, nowMs, random, attempt, isRateLimited ? used.consecutiveRateLimited : 0);
      const updated: OperationRecord = {
        ...base,
        used: { ...used, backoffAttempt: attempt + 1 },
        schedule: {
          nextPollAtMs: plan.atMs,
          delaySource: plan.source,
          ...(plan.hintRejected !== undefined ? { hintRejected: plan.hintRejected } : {}),
        },
      };
      const { record } = finish(
        {
          decision: plan.kind === 'poll' ? 'wait' : 'wait_for_deadline',
          nextPollAtMs: plan.atMs,
          delaySource: plan.source,
          ...(plan.hintRejected !== undefined ? { hintRejected: plan.hintRejected } : {}),
          ...(verdict.note !== undefined ? { note: verdict.note } : {}),
        },
        updated,
      );
      const events = acceptEvents(seq);
      if (plan.kind === 'poll') {
        return {
          kind: 'poll',
          atMs: plan.atMs,
          source: plan.source,
          ...(plan.hintRejected !== undefined ? { hintRejected: plan.hintRejected } : {}),
          record,
          events,
        };
      }
      return {
        kind: 'deadline_wait',
        atMs: plan.atMs,
        source: 'deadline',
        ...(plan.hintRejected !== undefined ? { hintRejected: plan.hintRejected } : {}),
        record,
        events,
      };
    }
  }
}
