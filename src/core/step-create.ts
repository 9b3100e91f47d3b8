/**
 * Create and reconcile steps (C2, C3, I3, U1-U4, V4): what a create or reconciliation answer means, and the reservation of a create attempt.
 */
import { locatesResult, namesJob, type Observation } from './observation';
import { type OperationRecord } from './operation';
import { planWait } from './wait-planner';
import { type StepContext, type StepResult, Builder, is2xx } from './step-draft';

/** Schedules the next attempt of a create-phase call (create or reconcile) with backoff and Retry-After (P2, P3, I3). */
export function scheduleRetry(b: Builder, o: Observation, ctx: StepContext): 'scheduled' | 'past_create_deadline' {
  const r = b.record;
  const plan = planWait(
    { ...r, deadlines: { ...r.deadlines, resultDeadlineMs: r.deadlines.createDeadlineMs } },
    r.policy,
    o,
    ctx.nowMs,
    ctx.random,
    r.used.backoffAttempt,
    o.httpStatus === 429 ? r.used.consecutiveRateLimited : 0,
  );
  if (plan.kind === 'deadline_wait') return 'past_create_deadline';
  b.record = {
    ...r,
    used: { ...r.used, backoffAttempt: r.used.backoffAttempt + 1 },
    schedule: {
      nextPollAtMs: plan.atMs,
      delaySource: plan.source,
      ...(plan.hintRejected !== undefined ? { hintRejected: plan.hintRejected } : {}),
    },
  };
  return 'scheduled';
}

/** Sets the first poll after acceptance: Retry-After or a hint from the create answer, else the base backoff (P2, P3). */
export function scheduleFirstPoll(b: Builder, o: Observation, ctx: StepContext): void {
  const r = b.record;
  const plan = planWait(r, r.policy, o, ctx.nowMs, ctx.random, 0, 0);
  b.record = {
    ...r,
    used: { ...r.used, backoffAttempt: 0, consecutiveRateLimited: 0 },
    schedule: {
      nextPollAtMs: plan.atMs,
      delaySource: plan.source,
      ...(plan.hintRejected !== undefined ? { hintRejected: plan.hintRejected } : {}),
    },
  };
}

export function countCreateAnswer(b: Builder, o: Observation): void {
  const used = { ...b.record.used };
  if (o.transport === 'response' && o.httpStatus === 429) {
    used.rateLimited += 1;
    used.consecutiveRateLimited += 1;
  } else if (o.transport === 'response') used.consecutiveRateLimited = 0;
  if (
    o.transport === 'not_sent' ||
    o.transport === 'ambiguous' ||
    (o.transport === 'response' && (o.httpStatus ?? 0) >= 500)
  )
    used.transportFailures += 1;
  b.record = { ...b.record, used };
}

/** Notes the provider job IDs of a conflicting answer (U3) and escalates. */
export function jobIdConflict(b: Builder, o: Observation, ctx: StepContext): boolean {
  const id = o.remoteJobId;
  if (id === undefined) return false;
  const others = b.before.remote.jobIds.filter((j) => j !== id);
  if (others.length === 0) return false;
  b.escalate(
    'job_id_conflict',
    `the same idempotency token was answered with job ${id} after ${others.join(', ')} (U3)`,
    ctx,
    'job_id_conflict',
  );
  return true;
}

/** Ambiguous create: `create_unknown`, then reconciliation by the adapter's method, or an escalation when it has none (U1, U2). */
export function enterReconciliation(b: Builder, evidence: Observation, seq: number, ctx: StepContext): void {
  b.apply(
    [
      {
        type: 'create_ambiguous',
        actor: ctx.actor,
        cause: `create_response:${seq}`,
        evidenceSequence: seq,
        observation: evidence,
      },
    ],
    ctx,
  );
  if (b.record.localState !== 'create_unknown') return;
  if (ctx.reconciliation === 'none') {
    b.escalate(
      'create_unknown',
      'the create answer was lost and the provider offers no way to find the job: at-most-once cannot be proven (U2)',
      ctx,
      'no_reconciliation_method',
    );
    return;
  }
  const method =
    ctx.reconciliation === 'list_by_client_reference'
      ? 'client_reference_lookup'
      : ctx.reconciliation === 'lookup_by_token'
        ? 'operation_id_lookup'
        : 'same_token_resend';
  b.apply(
    [{ type: 'reconciliation_started', actor: ctx.actor, cause: `create_response:${seq}`, reconcileMethod: method }],
    ctx,
  );
  if (b.state() !== 'reconciliation' || scheduleRetry(b, evidence, ctx) === 'scheduled') return;
  if (ctx.reconciliation === 'same_token_resend') {
    // I3: re-sending create after the create deadline could start a job nobody waits for; a human decides.
    b.escalate(
      'create_unknown',
      'the create answer was lost at the create deadline; re-sending create now would break I3',
      ctx,
      `create_response:${seq}`,
    );
    return;
  }
  // A lookup is a read: one look right away, after which "no job" is final (U2, U4).
  b.record = { ...b.record, schedule: { nextPollAtMs: ctx.nowMs, delaySource: 'local_backoff' } };
}

/**
 * After the create request (C2, C3, I3, U1, U3, H1, H4): accepted with a job ID, a synchronous success, an
 * ambiguous answer (reconcile), a refusal that proves nothing was created (retry with the same token inside the
 * create deadline), or a stop.
 */
export function afterCreate(record: OperationRecord, o: Observation, ctx: StepContext): StepResult {
  const b = new Builder(record, record);
  countCreateAnswer(b, o);
  const seq = b.observe(o, ctx, {});
  b.callSequence = seq;
  const cause = `create_response:${seq}`;
  const status = o.httpStatus ?? 0;
  if (is2xx(o) && o.parseProblem === undefined && o.category === 'success' && locatesResult(o.resultReference)) {
    b.apply([{ type: 'create_succeeded_sync', actor: ctx.actor, cause, evidenceSequence: seq, observation: o }], ctx);
  } else if (is2xx(o) && o.parseProblem === undefined && namesJob(o)) {
    if (!jobIdConflict(b, o, ctx)) {
      b.apply([{ type: 'create_accepted', actor: ctx.actor, cause, evidenceSequence: seq, observation: o }], ctx);
      if (b.record.localState === 'accepted') scheduleFirstPoll(b, o, ctx);
    }
  } else if (is2xx(o)) {
    b.escalate(
      'create_unknown',
      `the provider accepted the create but the answer names no usable job: ${o.parseProblem ?? 'no job ID'} (C2)`,
      ctx,
      cause,
    );
  } else if (o.transport === 'ambiguous' || o.transport === 'body_too_large' || status >= 500) {
    enterReconciliation(b, o, seq, ctx);
  } else if (status === 401 || status === 403) {
    b.escalate('authorization_denied', `HTTP ${status} on create; no retry with the same credential (H4)`, ctx, cause);
  } else if (o.transport === 'refused') {
    b.escalate(
      o.errorCategory === 'credential_unavailable' ? 'authorization_denied' : 'provider_failure',
      `the create request was refused before sending (${o.errorCategory ?? 'refused'})`,
      ctx,
      cause,
    );
  } else if (o.transport === 'not_sent' || status === 429) {
    const r = b.record;
    if (status === 429 && r.used.consecutiveRateLimited >= r.budgets.maxRateLimited) {
      b.escalate(
        'rate_limited',
        `${r.used.consecutiveRateLimited} HTTP 429 answers in a row on create (H1)`,
        ctx,
        cause,
      );
    } else if (o.transport === 'not_sent' && r.used.transportFailures >= r.budgets.maxTransportFailures) {
      b.escalate(
        'provider_failure',
        `create could not be sent ${r.used.transportFailures} times (${o.errorCategory ?? 'network'}) (S5)`,
        ctx,
        cause,
      );
    } else if (scheduleRetry(b, o, ctx) === 'past_create_deadline') {
      b.escalate('provider_failure', 'no job was created before the create deadline (U4)', ctx, cause);
    }
  } else {
    const error = [o.providerError?.code, o.providerError?.message].filter((p) => p !== undefined).join(': ');
    const what = error !== '' ? error : (o.errorCategory ?? `HTTP ${status}`);
    const reason = status >= 400 && status < 500 ? 'request_rejected' : 'provider_failure';
    b.escalate(reason, `the provider refused the create: HTTP ${status} (${what.slice(0, 500)})`, ctx, cause);
  }
  return b.result();
}

/**
 * After a reconciliation call (U2, U3): a match means the provider has our job (accepted); no match after the
 * create deadline means no job was created (failed, a remote fact); before it, look again later.
 */
export function afterReconcile(record: OperationRecord, o: Observation, ctx: StepContext): StepResult {
  const b = new Builder(record, record);
  countCreateAnswer(b, o);
  const seq = b.observe(o, ctx, {});
  b.callSequence = seq;
  const cause = `reconcile_response:${seq}`;
  const status = o.httpStatus ?? 0;
  if (is2xx(o) && o.parseProblem === undefined && o.category === 'success' && locatesResult(o.resultReference)) {
    // The repeated create answered with the finished job itself (C3, V4).
    b.apply([{ type: 'create_succeeded_sync', actor: ctx.actor, cause, evidenceSequence: seq, observation: o }], ctx);
  } else if (is2xx(o) && o.parseProblem === undefined && namesJob(o)) {
    if (!jobIdConflict(b, o, ctx)) {
      b.apply(
        [{ type: 'reconciliation_matched', actor: ctx.actor, cause, evidenceSequence: seq, observation: o }],
        ctx,
      );
      if (b.record.localState === 'accepted') scheduleFirstPoll(b, o, ctx);
    }
  } else if (status === 401 || status === 403) {
    b.escalate('authorization_denied', `HTTP ${status} on reconciliation (H4)`, ctx, cause);
  } else if (o.errorCategory === 'multiple_matches') {
    // U3: several provider jobs answer to this operation: an incident, never "no job".
    b.escalate(
      'job_id_conflict',
      `several provider jobs match this operation (reconcile answer ${seq}) (U3)`,
      ctx,
      cause,
    );
  } else if (o.errorCategory === 'reconcile_unsupported') {
    b.escalate(
      'create_unknown',
      'the provider offers no way to find the job: at-most-once cannot be proven (U2)',
      ctx,
      cause,
    );
  } else if ((is2xx(o) && o.parseProblem === undefined) || status === 404) {
    if (ctx.nowMs >= record.deadlines.createDeadlineMs) {
      b.apply(
        [
          {
            type: 'reconciliation_no_job',
            actor: ctx.actor,
            cause,
            evidenceSequence: seq,
            observation: o,
            reason: 'the provider has no job for this operation after the create deadline',
          },
        ],
        ctx,
      );
    } else if (scheduleRetry(b, o, ctx) === 'past_create_deadline') {
      b.record = {
        ...b.record,
        schedule: { nextPollAtMs: record.deadlines.createDeadlineMs, delaySource: 'deadline' },
      };
    } else {
      // I3: no job is known, and the create deadline has not passed: send the create again with the same token
      // (the provider deduplicates it if the first one did arrive after all).
      b.record = { ...b.record, reconcileBy: 'resend' };
    }
  } else if (
    b.record.used.transportFailures >= b.record.budgets.maxTransportFailures ||
    scheduleRetry(b, o, ctx) === 'past_create_deadline'
  ) {
    b.escalate(
      'create_unknown',
      `reconciliation could not find out whether a job was created (${o.errorCategory ?? `HTTP ${status}`}) (U2)`,
      ctx,
      cause,
    );
  } else if (b.record.reconcileBy === 'resend') {
    // The resend itself went unanswered: find out first whether it created the job.
    b.record = { ...b.record, reconcileBy: 'lookup' };
  }
  return b.result();
}

/** Reserves one create attempt before the create request is sent (B2, I3), or stops at the create deadline (U4). */
export function reserveCreateAttempt(
  record: OperationRecord,
  ctx: StepContext,
): { kind: 'reserved'; record: OperationRecord } | ({ kind: 'stopped' } & StepResult) {
  if (ctx.nowMs >= record.deadlines.createDeadlineMs) {
    const b = new Builder(record, record);
    const ambiguous = record.localState !== 'create_pending';
    // Nothing ever reached the provider (our own backlog, a paused worker, a reservation whose worker died before
    // sending): a deadline, not the provider's failure, however many attempts were reserved.
    const last = record.remote.lastHttp;
    const sent = last !== undefined && last.transport !== 'not_sent';
    const reason = ambiguous ? 'create_unknown' : sent ? 'provider_failure' : 'deadline_exceeded';
    const what = sent ? 'without a job ID' : 'before any create request reached the provider';
    b.escalate(
      reason,
      `the create deadline ${new Date(record.deadlines.createDeadlineMs).toISOString()} passed ${what} (U4)`,
      ctx,
      'create_deadline',
    );
    return { kind: 'stopped', ...b.result() };
  }
  return {
    kind: 'reserved',
    record: { ...record, used: { ...record.used, createAttempts: record.used.createAttempts + 1 }, schedule: {} },
  };
}
