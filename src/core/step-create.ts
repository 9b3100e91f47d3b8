/**
 * Create and reconcile steps (C2, C3, I3, U1-U4, V4): what a create or reconciliation answer means, and the reservation of a create attempt.
 */
import { locatesResult, namesJob, type Observation } from './observation';
import { type OperationRecord } from './operation';
import { MAX_CREATE_ATTEMPTS } from './loop-bounds';
import { answerText, rateLimitedInARow } from './answer-policy';
import { openAnswerStep, type AnswerStep } from './step-answer';
import { refusalText } from './status-verdict';
import { effectiveDeadlineMs } from './wait-planner';
import { planWait } from './wait-time';
import { withReconciliationFacts } from './option-executability';
import { type StepContext, type StepResult, Builder } from './step-draft';

/** Below this much time before the create deadline, a create-phase retry is not brought forward into the window. */
const MIN_CREATE_RETRY_WINDOW_MS = 1_000;

/** Schedules the next attempt of a create-phase call (create or reconcile) with backoff and Retry-After (P2, P3, I3). */
function scheduleRetry(
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
      rateLimitedInARow: rateLimitedInARow(used, observation.signal),
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
function scheduleFirstPoll(draft: Builder, observation: Observation, ctx: StepContext): void {
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

/** Notes the provider job IDs of a conflicting answer (U3) and escalates. */
function jobIdConflict(draft: Builder, observation: Observation, ctx: StepContext): boolean {
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

/** How the journal names each reconciliation method an adapter may declare (U2). */
const RECONCILE_METHODS = {
  list_by_client_reference: 'client_reference_lookup',
  lookup_by_token: 'operation_id_lookup',
  lookup: 'job_lookup',
  same_token_resend: 'same_token_resend',
} as const;

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
  const reconcileMethod = RECONCILE_METHODS[ctx.reconciliation];
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
  if (observation.signal !== 'ok') return false;
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
function retryCreate({ draft, spent, frame }: AnswerStep, observation: Observation, ctx: StepContext): void {
  const { cause } = frame;
  if (spent !== undefined) {
    draft.escalate(spent.reason, `create: ${answerText(observation)}: ${spent.detail}`, ctx, cause);
  } else if (scheduleRetry(draft, observation, ctx) === 'past_create_deadline') {
    draft.escalate('provider_failure', 'no job was created before the create deadline (U4)', ctx, cause);
  }
}

/** The detail of a create answer that stops automation. */
function createStopDetail(observation: Observation): string {
  const what = answerText(observation);
  switch (observation.signal) {
    case 'ok':
    case 'unreadable': {
      const problem = observation.parseProblem ?? 'no job ID';
      return observation.remoteJobId === undefined
        ? `the provider accepted the create but the answer names no usable job: ${problem} (C2)`
        : `the provider accepted the create and named job ${observation.remoteJobId}, but its answer could not be used: ${problem} (C2)`;
    }
    case 'auth_denied':
      return `${what} on create; no retry with the same credential (H4)`;
    case 'refused':
    case 'no_credential':
      return `the create ${refusalText(observation)}`;
    default: {
      const error = [observation.providerError?.code, observation.providerError?.message]
        .filter((part) => part !== undefined)
        .join(': ');
      const said = error !== '' ? error : (observation.errorCategory ?? what);
      return `the provider refused the create: ${what} (${said.slice(0, 500)})`;
    }
  }
}

/**
 * After the create request (C2, C3, I3, U1, U3, H1, H4), as the answer policy's create row says: accepted with a
 * job ID, a synchronous success, an ambiguous answer (reconcile), a refusal that proves nothing was created (retry
 * with the same token inside the create deadline), or a stop.
 */
export function afterCreate(record: OperationRecord, observation: Observation, ctx: StepContext): StepResult {
  const step = openAnswerStep(record, 'create', observation, ctx);
  const { draft, sequence, frame, reaction } = step;
  if (reaction.kind === 'read' && answeredWithJob(draft, observation, ctx, frame, 'create_accepted'))
    return draft.result();
  if (reaction.kind === 'reconcile') enterReconciliation(draft, observation, sequence, ctx);
  else if (reaction.kind === 'retry') retryCreate(step, observation, ctx);
  else {
    const reason = reaction.kind === 'escalate' ? reaction.reason : 'create_unknown';
    draft.escalate(reason, createStopDetail(observation), ctx, frame.cause);
  }
  return draft.result();
}

/** The detail of a reconciliation answer that stops automation (U2, U3, H4). */
function reconcileStopDetail(observation: Observation, sequence: number): string {
  switch (observation.signal) {
    case 'auth_denied':
      return `${answerText(observation)} on reconciliation (H4)`;
    case 'several_jobs':
      return `several provider jobs match this operation (reconcile answer ${sequence}) (U3)`;
    case 'unsupported':
      return 'the provider offers no way to find the job: at-most-once cannot be proven (U2)';
    default:
      // A request that cannot be built, or that the provider rejects as ours at fault, fails the same way again:
      // never retried like a transport failure (E3, U2).
      return `reconciliation ${refusalText(observation)}: nothing found out (U2)`;
  }
}

/** No job answers to this operation: final after the create deadline (U2), else the create again later (I3). */
function noJobFound(draft: Builder, observation: Observation, ctx: StepContext, frame: AnswerFrame): void {
  const { createDeadlineMs } = draft.before.deadlines;
  if (ctx.nowMs >= createDeadlineMs) {
    const reason = 'the provider has no job for this operation after the create deadline';
    draft.apply([{ type: 'reconciliation_no_job', ...frame, observation, reason }], ctx);
  } else if (scheduleRetry(draft, observation, ctx) === 'past_create_deadline') {
    draft.record = { ...draft.record, schedule: { nextPollAtMs: createDeadlineMs, delaySource: 'deadline' } };
  } else {
    // I3: no job is known, and the create deadline has not passed: send the create again with the same token
    // (the provider deduplicates it if the first one did arrive after all).
    draft.record = { ...draft.record, reconcileBy: 'resend' };
  }
}

/** A reconciliation call that found nothing out: asked again inside the budgets and the create deadline (U2, I3). */
function retryReconcile({ draft, spent, frame }: AnswerStep, observation: Observation, ctx: StepContext): void {
  const { cause } = frame;
  if (spent?.reason === 'rate_limited') {
    draft.escalate('rate_limited', `reconciliation: ${spent.detail}`, ctx, cause);
  } else if (spent !== undefined || scheduleRetry(draft, observation, ctx) === 'past_create_deadline') {
    const failure = observation.errorCategory ?? answerText(observation);
    const detail = `reconciliation could not find out whether a job was created (${failure}) (U2)`;
    draft.escalate('create_unknown', detail, ctx, cause);
  } else if (draft.record.reconcileBy === 'resend' && ctx.reconciliation === 'none') {
    // No lookup exists: another re-send is safe only when it cannot start a second job (I3, E3).
    if (withReconciliationFacts(ctx.capabilities, ctx.reconciliation).sameTokenResend !== true) {
      const detail = 'the re-sent create got no usable answer and the create carries no idempotency token (U2, I3)';
      draft.escalate('create_unknown', detail, ctx, cause);
    }
  } else if (draft.record.reconcileBy === 'resend') {
    // The resend itself went unanswered: find out first whether it created the job.
    draft.record = { ...draft.record, reconcileBy: 'lookup' };
  }
}

/**
 * After a reconciliation call (U2, U3), as the answer policy's reconcile row says: a match means the provider has
 * our job (accepted); no match after the create deadline means no job was created (failed, a remote fact);
 * before it, look again later.
 */
export function afterReconcile(record: OperationRecord, observation: Observation, ctx: StepContext): StepResult {
  const step = openAnswerStep(record, 'reconcile', observation, ctx);
  const { draft, sequence, frame, reaction } = step;
  if (reaction.kind === 'read' && answeredWithJob(draft, observation, ctx, frame, 'reconciliation_matched'))
    return draft.result();
  if (reaction.kind === 'read' || reaction.kind === 'no_job') noJobFound(draft, observation, ctx, frame);
  else if (reaction.kind === 'retry') retryReconcile(step, observation, ctx);
  else {
    const reason = reaction.kind === 'escalate' ? reaction.reason : 'create_unknown';
    draft.escalate(reason, reconcileStopDetail(observation, sequence), ctx, frame.cause);
  }
  return draft.result();
}

/**
 * The stop at the create deadline (I3, U4): no create is sent once it has passed, and a human decides. The reason
 * says what the provider may hold: maybe our job (`create_unknown`, after an ambiguous create), none because it
 * failed every create (`provider_failure`), or none because no create ever reached it (`deadline_exceeded`).
 */
export function stopAtCreateDeadline(record: OperationRecord, ctx: StepContext): StepResult {
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
  return draft.result();
}

/**
 * Reserves one create attempt before the create request is sent (B2, I3), or stops at the create deadline (U4) or
 * after {@link MAX_CREATE_ATTEMPTS} (B3).
 */
export function reserveCreateAttempt(
  record: OperationRecord,
  ctx: StepContext,
): { kind: 'reserved'; record: OperationRecord } | { kind: 'stopped'; step: StepResult } {
  if (ctx.nowMs >= record.deadlines.createDeadlineMs)
    return { kind: 'stopped', step: stopAtCreateDeadline(record, ctx) };
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
