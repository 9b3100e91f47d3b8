/**
 * Create and reconcile steps (C2, C3, I3, U1-U4, V4): what a create or reconciliation answer means, and the reservation of a create attempt.
 */
import { locatesResult, namesJob, type Observation } from './observation';
import { type OperationRecord } from './operation';
import { MAX_CREATE_ATTEMPTS } from './loop-bounds';
import { countAnswer, refusalText } from './status-verdict';
import { effectiveDeadlineMs } from './wait-planner';
import { planWait } from './wait-time';
import { withResendFact } from './option-executability';
import { type StepContext, type StepResult, Builder, is2xx } from './step-draft';

/** Below this much time before the create deadline, a create-phase retry is not brought forward into the window. */
const MIN_CREATE_RETRY_WINDOW_MS = 1_000;

/** Schedules the next attempt of a create-phase call (create or reconcile) with backoff and Retry-After (P2, P3, I3). */
export function scheduleRetry(
  draft: Builder,
  observation: Observation,
  ctx: StepContext,
): 'scheduled' | 'past_create_deadline' {
  const { used, policy, deadlines } = draft.record;
  const plan = planWait(
    {
      observation,
      policy,
      // U4, I3: a create-phase call is never planned at or after the create deadline.
      deadlineMs: deadlines.createDeadlineMs,
      backoffAttempt: used.backoffAttempt,
      rateLimitedInARow: observation.httpStatus === 429 ? used.consecutiveRateLimited : 0,
    },
    ctx,
  );
  let { atMs, source } = plan;
  if (plan.kind === 'deadline_wait') {
    const windowMs = deadlines.createDeadlineMs - ctx.nowMs;
    // I3: a poll policy sized for a long job (a base delay of hours) must not use up the create window. A retry
    // our own backoff would plan past the create deadline is brought forward to the middle of what remains, so a
    // create that never reached the provider is still sent again in time. The provider's Retry-After or hint
    // stays a minimum (P3): past the deadline, the create phase stops.
    if (plan.plannedBy !== 'local_backoff' || windowMs < MIN_CREATE_RETRY_WINDOW_MS) return 'past_create_deadline';
    atMs = ctx.nowMs + Math.floor(windowMs / 2);
    source = 'local_backoff';
  }
  draft.record = {
    ...draft.record,
    used: { ...used, backoffAttempt: used.backoffAttempt + 1 },
    schedule: {
      nextPollAtMs: atMs,
      delaySource: source,
      ...(plan.hintRejected !== undefined ? { hintRejected: plan.hintRejected } : {}),
    },
  };
  return 'scheduled';
}

/** Sets the first poll after acceptance: Retry-After or a hint from the create answer, else the base backoff (P2, P3). */
export function scheduleFirstPoll(draft: Builder, observation: Observation, ctx: StepContext): void {
  const { used, policy } = draft.record;
  const plan = planWait(
    { observation, policy, deadlineMs: effectiveDeadlineMs(draft.record), backoffAttempt: 0, rateLimitedInARow: 0 },
    ctx,
  );
  draft.record = {
    ...draft.record,
    used: { ...used, backoffAttempt: 0, consecutiveRateLimited: 0 },
    schedule: {
      nextPollAtMs: plan.atMs,
      delaySource: plan.source,
      ...(plan.hintRejected !== undefined ? { hintRejected: plan.hintRejected } : {}),
    },
  };
}

/** Counts a create or reconcile answer against the budgets: transport failures (S5) and 429s (H1). */
export function countCreateAnswer(draft: Builder, observation: Observation): void {
  draft.record = { ...draft.record, used: countAnswer(draft.record.used, observation) };
}

/** Notes the provider job IDs of a conflicting answer (U3) and escalates. */
export function jobIdConflict(draft: Builder, observation: Observation, ctx: StepContext): boolean {
  const jobId = observation.remoteJobId;
  if (jobId === undefined) return false;
  const others = draft.before.remote.jobIds.filter((known) => known !== jobId);
  if (others.length === 0) return false;
  draft.escalate(
    'job_id_conflict',
    `the same idempotency token was answered with job ${jobId} after ${others.join(', ')} (U3)`,
    ctx,
    'job_id_conflict',
  );
  return true;
}

/** Ambiguous create: `create_unknown`, then reconciliation by the adapter's method, or an escalation when it has none (U1, U2). */
export function enterReconciliation(draft: Builder, evidence: Observation, sequence: number, ctx: StepContext): void {
  const frame = { actor: ctx.actor, cause: `create_response:${sequence}` };
  draft.apply([{ type: 'create_ambiguous', ...frame, evidenceSequence: sequence, observation: evidence }], ctx);
  if (draft.record.localState !== 'create_unknown') return;
  if (ctx.reconciliation === 'none') {
    draft.escalate(
      'create_unknown',
      'the create answer was lost and the provider offers no way to find the job: at-most-once cannot be proven (U2)',
      ctx,
      'no_reconciliation_method',
    );
    return;
  }
  const reconcileMethod =
    ctx.reconciliation === 'list_by_client_reference'
      ? 'client_reference_lookup'
      : ctx.reconciliation === 'lookup_by_token'
        ? 'operation_id_lookup'
        : 'same_token_resend';
  draft.apply([{ type: 'reconciliation_started', ...frame, reconcileMethod }], ctx);
  if (draft.state() !== 'reconciliation' || scheduleRetry(draft, evidence, ctx) === 'scheduled') return;
  if (ctx.reconciliation === 'same_token_resend') {
    // I3: re-sending create after the create deadline could start a job nobody waits for; a human decides.
    draft.escalate(
      'create_unknown',
      'the create answer was lost at the create deadline; re-sending create now would break I3',
      ctx,
      frame.cause,
    );
    return;
  }
  // A lookup is a read: one look right away, after which "no job" is final (U2, U4).
  draft.record = { ...draft.record, schedule: { nextPollAtMs: ctx.nowMs, delaySource: 'local_backoff' } };
}

/** How the events of one create-phase answer cite it (M3). */
interface AnswerFrame {
  actor: string;
  cause: string;
  evidenceSequence: number;
}

/**
 * A readable 2xx answer with the job: the finished job with its result (C3; to a repeated create, V4), or our
 * job by its ID or poll URL (C2, U2), unless it conflicts with a job reported before (U3). False for any other
 * answer.
 */
function answeredWithJob(
  draft: Builder,
  observation: Observation,
  ctx: StepContext,
  frame: AnswerFrame,
  found: 'create_accepted' | 'reconciliation_matched',
): boolean {
  if (!is2xx(observation) || observation.parseProblem !== undefined) return false;
  if (observation.category === 'success' && locatesResult(observation.resultReference)) {
    draft.apply([{ type: 'create_succeeded_sync', ...frame, observation }], ctx);
    return true;
  }
  if (!namesJob(observation)) return false;
  if (!jobIdConflict(draft, observation, ctx)) {
    draft.apply([{ type: found, ...frame, observation }], ctx);
    if (draft.record.localState === 'accepted') scheduleFirstPoll(draft, observation, ctx);
  }
  return true;
}

/** A create that was never sent, or answered 429: sent again with the same token inside the budgets and the create deadline (H1, S5, U4). */
function retryCreate(draft: Builder, observation: Observation, ctx: StepContext, cause: string): void {
  const { used, budgets } = draft.record;
  if (observation.httpStatus === 429 && used.consecutiveRateLimited >= budgets.maxRateLimited) {
    const detail = `${used.consecutiveRateLimited} HTTP 429 answers in a row on create (H1)`;
    draft.escalate('rate_limited', detail, ctx, cause);
  } else if (observation.transport === 'not_sent' && used.transportFailures >= budgets.maxTransportFailures) {
    const detail = `create could not be sent ${used.transportFailures} times (${observation.errorCategory ?? 'network'}) (S5)`;
    draft.escalate('provider_failure', detail, ctx, cause);
  } else if (scheduleRetry(draft, observation, ctx) === 'past_create_deadline') {
    draft.escalate('provider_failure', 'no job was created before the create deadline (U4)', ctx, cause);
  }
}

/**
 * After the create request (C2, C3, I3, U1, U3, H1, H4): accepted with a job ID, a synchronous success, an
 * ambiguous answer (reconcile), a refusal that proves nothing was created (retry with the same token inside the
 * create deadline), or a stop.
 */
export function afterCreate(record: OperationRecord, observation: Observation, ctx: StepContext): StepResult {
  const draft = new Builder(record, record);
  countCreateAnswer(draft, observation);
  const sequence = draft.observe(observation, ctx, {});
  draft.callSequence = sequence;
  const frame = { actor: ctx.actor, cause: `create_response:${sequence}`, evidenceSequence: sequence };
  const { cause } = frame;
  const status = observation.httpStatus ?? 0;
  if (answeredWithJob(draft, observation, ctx, frame, 'create_accepted')) return draft.result();
  if (is2xx(observation)) {
    const problem = observation.parseProblem ?? 'no job ID';
    const detail =
      observation.remoteJobId === undefined
        ? `the provider accepted the create but the answer names no usable job: ${problem} (C2)`
        : `the provider accepted the create and named job ${observation.remoteJobId}, but its answer could not be used: ${problem} (C2)`;
    draft.escalate('create_unknown', detail, ctx, cause);
  } else if (observation.transport === 'ambiguous' || observation.transport === 'body_too_large' || status >= 500) {
    enterReconciliation(draft, observation, sequence, ctx);
  } else if (status === 401 || status === 403) {
    const detail = `HTTP ${status} on create; no retry with the same credential (H4)`;
    draft.escalate('authorization_denied', detail, ctx, cause);
  } else if (observation.transport === 'refused') {
    const reason = observation.errorCategory === 'credential_unavailable' ? 'authorization_denied' : 'provider_failure';
    const detail = `the create ${refusalText(observation)}`;
    draft.escalate(reason, detail, ctx, cause);
  } else if (observation.transport === 'not_sent' || status === 429) {
    retryCreate(draft, observation, ctx, cause);
  } else {
    const error = [observation.providerError?.code, observation.providerError?.message]
      .filter((part) => part !== undefined)
      .join(': ');
    const what = error !== '' ? error : (observation.errorCategory ?? `HTTP ${status}`);
    const reason = status >= 400 && status < 500 ? 'request_rejected' : 'provider_failure';
    draft.escalate(reason, `the provider refused the create: HTTP ${status} (${what.slice(0, 500)})`, ctx, cause);
  }
  return draft.result();
}

/**
 * After a reconciliation call (U2, U3): a match means the provider has our job (accepted); no match after the
 * create deadline means no job was created (failed, a remote fact); before it, look again later.
 */
export function afterReconcile(record: OperationRecord, observation: Observation, ctx: StepContext): StepResult {
  const draft = new Builder(record, record);
  countCreateAnswer(draft, observation);
  const sequence = draft.observe(observation, ctx, {});
  draft.callSequence = sequence;
  const frame = { actor: ctx.actor, cause: `reconcile_response:${sequence}`, evidenceSequence: sequence };
  const { cause } = frame;
  const status = observation.httpStatus ?? 0;
  if (answeredWithJob(draft, observation, ctx, frame, 'reconciliation_matched')) return draft.result();
  if (status === 401 || status === 403) {
    draft.escalate('authorization_denied', `HTTP ${status} on reconciliation (H4)`, ctx, cause);
  } else if (observation.errorCategory === 'multiple_matches') {
    // U3: several provider jobs answer to this operation: an incident, never "no job".
    const detail = `several provider jobs match this operation (reconcile answer ${sequence}) (U3)`;
    draft.escalate('job_id_conflict', detail, ctx, cause);
  } else if (observation.errorCategory === 'reconcile_unsupported') {
    const detail = 'the provider offers no way to find the job: at-most-once cannot be proven (U2)';
    draft.escalate('create_unknown', detail, ctx, cause);
  } else if (observation.transport === 'refused' || isRejected(status)) {
    // A request that cannot be built, or that the provider rejects as ours at fault, fails the same way again:
    // never retried like a transport failure (E3, U2).
    draft.escalate('create_unknown', `reconciliation ${refusalText(observation)}: nothing found out (U2)`, ctx, cause);
  } else if (status === 429 && draft.record.used.consecutiveRateLimited >= draft.record.budgets.maxRateLimited) {
    const detail = `${draft.record.used.consecutiveRateLimited} HTTP 429 answers in a row on reconciliation (H1)`;
    draft.escalate('rate_limited', detail, ctx, cause);
  } else if ((is2xx(observation) && observation.parseProblem === undefined) || status === 404) {
    if (ctx.nowMs >= record.deadlines.createDeadlineMs) {
      const reason = 'the provider has no job for this operation after the create deadline';
      draft.apply([{ type: 'reconciliation_no_job', ...frame, observation, reason }], ctx);
    } else if (scheduleRetry(draft, observation, ctx) === 'past_create_deadline') {
      draft.record = {
        ...draft.record,
        schedule: { nextPollAtMs: record.deadlines.createDeadlineMs, delaySource: 'deadline' },
      };
    } else {
      // I3: no job is known, and the create deadline has not passed: send the create again with the same token
      // (the provider deduplicates it if the first one did arrive after all).
      draft.record = { ...draft.record, reconcileBy: 'resend' };
    }
  } else if (
    draft.record.used.transportFailures >= draft.record.budgets.maxTransportFailures ||
    scheduleRetry(draft, observation, ctx) === 'past_create_deadline'
  ) {
    const failure = observation.errorCategory ?? `HTTP ${status}`;
    const detail = `reconciliation could not find out whether a job was created (${failure}) (U2)`;
    draft.escalate('create_unknown', detail, ctx, cause);
  } else if (draft.record.reconcileBy === 'resend' && ctx.reconciliation === 'none') {
    // No lookup exists: another re-send is safe only when it cannot start a second job (I3, E3).
    if (withResendFact(ctx.capabilities, ctx.reconciliation).sameTokenResend !== true) {
      const detail = 'the re-sent create got no usable answer and the create carries no idempotency token (U2, I3)';
      draft.escalate('create_unknown', detail, ctx, cause);
    }
  } else if (draft.record.reconcileBy === 'resend') {
    // The resend itself went unanswered: find out first whether it created the job.
    draft.record = { ...draft.record, reconcileBy: 'lookup' };
  }
  return draft.result();
}

/** A 4xx that says our request was at fault (not 404 "no job", 401/403, 409 or 429): the same request fails again. */
function isRejected(status: number): boolean {
  return status >= 400 && status < 500 && ![401, 403, 404, 409, 429].includes(status);
}

/**
 * Reserves one create attempt before the create request is sent (B2, I3), or stops at the create deadline (U4) or
 * after {@link MAX_CREATE_ATTEMPTS} (B3).
 */
export function reserveCreateAttempt(
  record: OperationRecord,
  ctx: StepContext,
): { kind: 'reserved'; record: OperationRecord } | { kind: 'stopped'; step: StepResult } {
  if (ctx.nowMs >= record.deadlines.createDeadlineMs) {
    const draft = new Builder(record, record);
    const ambiguous = record.localState !== 'create_pending';
    // Nothing ever reached the provider (our own backlog, a paused worker, a reservation whose worker died before
    // sending): a deadline, not the provider's failure, however many attempts were reserved.
    const last = record.remote.lastHttp;
    const sent = last !== undefined && last.transport !== 'not_sent';
    const reason = ambiguous ? 'create_unknown' : sent ? 'provider_failure' : 'deadline_exceeded';
    const what = sent ? 'without a job ID' : 'before any create request reached the provider';
    draft.escalate(
      reason,
      `the create deadline ${new Date(record.deadlines.createDeadlineMs).toISOString()} passed ${what} (U4)`,
      ctx,
      'create_deadline',
    );
    return { kind: 'stopped', step: draft.result() };
  }
  if (record.used.createAttempts >= MAX_CREATE_ATTEMPTS) {
    const draft = new Builder(record, record);
    const reason = record.localState === 'create_pending' ? 'provider_failure' : 'create_unknown';
    const detail = `${record.used.createAttempts} create requests were sent without learning of a job (B3, I3)`;
    draft.escalate(reason, detail, ctx, 'create_attempts');
    return { kind: 'stopped', step: draft.result() };
  }
  return {
    kind: 'reserved',
    record: { ...record, used: { ...record.used, createAttempts: record.used.createAttempts + 1 }, schedule: {} },
  };
}
