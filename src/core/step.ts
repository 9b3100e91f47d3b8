/**
 * The operation's steps: pure functions that turn one observation (create, reconcile, status, cancel, collect,
 * webhook), one caller message (cancel, decision) or one wake-up into the next record and the journal entries
 * to append. They glue the wait planner and the transition rules together, execute nothing, and read no clock:
 * activities call the observation steps right after their one outside call (so what was observed and what was
 * decided are recorded together, T3), the workflow calls the others.
 *
 * Every step returns `{ record, entries }`: `entries` are exactly the journal entries whose sequence is at or
 * after the input record's `journal.nextSequence`, in order, ready for the store (keyed by operation and
 * sequence, so appending them twice is a no-op).
 */
import { type AdapterCapabilities, type Decision, type OpenEscalation, renderEscalation, validateDecision } from './escalation';
import { actionSchema, type EscalationReason, type JournalEntryBody } from './journal';
import { locatesResult, namesJob, type Observation } from './observation';
import { type OperationRecord, type ResultSummary, appendBounded, OBSERVATION_TAIL, providerJobKnown } from './operation';
import { raiseEscalation } from './raise-escalation';
import { recordObservation, type ControllerDecision } from './record-observation';
import { FINAL_STATES, type OperationEvent, transition } from './transitions';
import { effectiveDeadlineMs, planAfterObservation, planWait, reserveStatusRequest } from './wait-planner';

/** How the adapter reconciles an ambiguous create (U2). */
export type ReconciliationMethod = 'same_token_resend' | 'list_by_client_reference' | 'lookup_by_token' | 'none';

/** What a step needs besides the record. */
export interface StepContext {
  /** Epoch ms. */
  nowMs: number;
  /** Uniform in [0, 1), for jitter (P2). */
  random: number;
  /** Who acts: `workflow`, `worker:<host>`, a human. */
  actor: string;
  capabilities: AdapterCapabilities;
  reconciliation: ReconciliationMethod;
}

/** A journal entry produced by a step, before it is given its operation ID and ISO time by the store adapter. */
export interface StepEntry {
  sequence: number;
  atMs: number;
  actor: string;
  body: JournalEntryBody;
}

/** The result of every step. */
export interface StepResult {
  record: OperationRecord;
  entries: StepEntry[];
}

/** A refusal of a caller's message, with a stable code (A2, X1). */
export interface StepRefusal {
  kind: 'refused';
  code: string;
  message: string;
}

/** Collects the entries appended since `before` (tails, plus escalation and decision entries kept aside). */
class Builder {
  private readonly extra: StepEntry[] = [];
  constructor(
    readonly before: OperationRecord,
    public record: OperationRecord,
  ) {}

  /** Appends an entry that the record's tails do not keep (escalation, decision, artifact). */
  appendExtra(body: JournalEntryBody, atMs: number, actor: string): void {
    const sequence = this.record.journal.nextSequence;
    this.extra.push({ sequence, atMs, actor, body });
    this.record = { ...this.record, journal: { ...this.record.journal, nextSequence: sequence + 1 } };
  }

  /** Applies transition events in order; a refused one becomes an escalation rather than a silent skip (M1). */
  apply(events: readonly OperationEvent[], ctx: StepContext): void {
    for (const event of events) {
      const result = transition(this.record, event, ctx.nowMs);
      if (result.kind === 'applied') {
        this.record = result.record;
        if (event.type === 'escalate' && event.escalation) this.noteEscalation(event.escalation, ctx);
        continue;
      }
      if (result.code === 'ASYNCJOB_ERR_JOB_ID_CONFLICT') {
        this.escalate('job_id_conflict', result.message, ctx);
        return;
      }
      // A rule refused what the planner proposed: stop automation and let a human look (never guess).
      this.escalate('unknown_state', `${result.code}: ${result.message}`, ctx);
      return;
    }
  }

  /** Raises an escalation from the current state (no-op when already escalated or final). */
  escalate(reason: EscalationReason, detail: string, ctx: StepContext, cause = 'escalate'): void {
    if (this.record.localState === 'escalated' || FINAL_STATES.includes(this.record.localState)) return;
    const escalation = adjustForCreatePhase(this.record, raiseEscalation(this.record, reason, detail.slice(0, 2000), ctx.nowMs, ctx.capabilities));
    const result = transition(this.record, { type: 'escalate', actor: ctx.actor, cause, escalation, reason: detail.slice(0, 2000) }, ctx.nowMs);
    if (result.kind !== 'applied') throw new Error(`escalation refused: ${result.message}`);
    this.record = result.record;
    this.noteEscalation(escalation, ctx);
  }

  private noteEscalation(escalation: OpenEscalation, ctx: StepContext): void {
    this.appendExtra(
      { kind: 'escalation', reason: escalation.reason, message: renderEscalation(escalation).slice(0, 8000), options: escalation.options.map((o) => o.option) },
      ctx.nowMs,
      ctx.actor,
    );
  }

  /** The current local state (a method, so a narrowing made before an `apply` does not outlive it). */
  state(): OperationRecord['localState'] {
    return this.record.localState;
  }

  observe(observation: Observation, ctx: StepContext, decision: ControllerDecision): number {
    const { record, sequence } = recordObservation(this.record, observation, ctx.nowMs, ctx.actor, decision);
    this.record = record;
    return sequence;
  }

  /**
   * Records the outcome of the step in the observation of its outside call (T3): what was decided, and the next
   * call's time and its source when one is planned. Called by {@link result} for the call's observation.
   */
  private annotate(sequence: number): void {
    const r = this.record;
    const state = r.localState;
    const decision =
      state === 'escalated'
        ? 'escalate'
        : FINAL_STATES.includes(state)
          ? 'stop'
          : state === 'result_collecting'
            ? 'collect'
            : state === 'reconciliation' || state === 'create_unknown'
              ? 'reconcile'
              : r.schedule.nextPollAtMs !== undefined
                ? 'wait'
                : 'continue';
    const planned = decision === 'wait' || decision === 'reconcile' || decision === 'collect';
    const observations = r.journal.observations.map((o) => {
      if (o.sequence !== sequence || o.body.decision !== undefined) return o;
      const body = {
        ...o.body,
        decision,
        ...(planned && r.schedule.nextPollAtMs !== undefined ? { nextPollAt: new Date(r.schedule.nextPollAtMs).toISOString() } : {}),
        ...(planned && r.schedule.delaySource !== undefined ? { delaySource: r.schedule.delaySource } : {}),
        ...(r.schedule.hintRejected !== undefined ? { hintRejected: r.schedule.hintRejected } : {}),
      };
      return { ...o, body };
    });
    this.record = { ...r, journal: { ...r.journal, observations } };
  }

  /** The sequence of the step's outside-call observation, annotated with the decision at {@link result}. */
  callSequence: number | undefined;

  result(): StepResult {
    if (this.callSequence !== undefined) this.annotate(this.callSequence);
    const from = this.before.journal.nextSequence;
    const entries: StepEntry[] = [
      ...this.record.journal.transitions.filter((t) => t.sequence >= from),
      ...this.record.journal.observations.filter((o) => o.sequence >= from),
      ...this.extra,
    ].sort((a, b) => a.sequence - b.sequence);
    return { record: this.record, entries };
  }
}

/**
 * Before a job exists, "extend" and "cancel at provider" mean nothing: offer re-sending create with the same
 * token (I3) instead, so a decision can never lead to polling a job we do not have. A job ID conflict (U3) keeps
 * `adopt_job` (a human picks one of the reported jobs) and is never offered another create: automation stops.
 */
function adjustForCreatePhase(record: OperationRecord, escalation: OpenEscalation): OpenEscalation {
  if (providerJobKnown(record)) return escalation;
  const kept = escalation.options.filter((o) => o.option !== 'extend' && o.option !== 'cancel_at_provider');
  const canRetry =
    escalation.reason !== 'authorization_denied' && escalation.reason !== 'job_id_conflict' && !kept.some((o) => o.option === 'retry_create_same_token');
  const options = canRetry ? [{ option: 'retry_create_same_token' as const, label: 're-send create with the same idempotency token' }, ...kept] : kept;
  return { ...escalation, options: options.length > 0 ? options : escalation.options };
}

const is2xx = (o: Observation): boolean => o.transport === 'response' && o.httpStatus !== undefined && o.httpStatus >= 200 && o.httpStatus < 300;

/** Schedules the next attempt of a create-phase call (create or reconcile) with backoff and Retry-After (P2, P3, I3). */
function scheduleRetry(b: Builder, o: Observation, ctx: StepContext): 'scheduled' | 'past_create_deadline' {
  const r = b.record;
  const plan = planWait({ ...r, deadlines: { ...r.deadlines, resultDeadlineMs: r.deadlines.createDeadlineMs } }, r.policy, o, ctx.nowMs, ctx.random, r.used.backoffAttempt, o.httpStatus === 429 ? r.used.consecutiveRateLimited : 0);
  if (plan.kind === 'deadline_wait') return 'past_create_deadline';
  b.record = {
    ...r,
    used: { ...r.used, backoffAttempt: r.used.backoffAttempt + 1 },
    schedule: { nextPollAtMs: plan.atMs, delaySource: plan.source, ...(plan.hintRejected !== undefined ? { hintRejected: plan.hintRejected } : {}) },
  };
  return 'scheduled';
}

/** Sets the first poll after acceptance: Retry-After or a hint from the create answer, else the base backoff (P2, P3). */
function scheduleFirstPoll(b: Builder, o: Observation, ctx: StepContext): void {
  const r = b.record;
  const plan = planWait(r, r.policy, o, ctx.nowMs, ctx.random, 0, 0);
  b.record = {
    ...r,
    used: { ...r.used, backoffAttempt: 0, consecutiveRateLimited: 0 },
    schedule: { nextPollAtMs: plan.atMs, delaySource: plan.source, ...(plan.hintRejected !== undefined ? { hintRejected: plan.hintRejected } : {}) },
  };
}

function countCreateAnswer(b: Builder, o: Observation): void {
  const used = { ...b.record.used };
  if (o.transport === 'response' && o.httpStatus === 429) {
    used.rateLimited += 1;
    used.consecutiveRateLimited += 1;
  } else if (o.transport === 'response') used.consecutiveRateLimited = 0;
  if (o.transport === 'not_sent' || o.transport === 'ambiguous' || (o.transport === 'response' && (o.httpStatus ?? 0) >= 500)) used.transportFailures += 1;
  b.record = { ...b.record, used };
}

/** Notes the provider job IDs of a conflicting answer (U3) and escalates. */
function jobIdConflict(b: Builder, o: Observation, ctx: StepContext): boolean {
  const id = o.remoteJobId;
  if (id === undefined) return false;
  const others = b.before.remote.jobIds.filter((j) => j !== id);
  if (others.length === 0) return false;
  b.escalate('job_id_conflict', `the same idempotency token was answered with job ${id} after ${others.join(', ')} (U3)`, ctx, 'job_id_conflict');
  return true;
}

/** Ambiguous create: `create_unknown`, then reconciliation by the adapter's method, or an escalation when it has none (U1, U2). */
function enterReconciliation(b: Builder, evidence: Observation, seq: number, ctx: StepContext): void {
  b.apply([{ type: 'create_ambiguous', actor: ctx.actor, cause: `create_response:${seq}`, evidenceSequence: seq, observation: evidence }], ctx);
  if (b.record.localState !== 'create_unknown') return;
  if (ctx.reconciliation === 'none') {
    b.escalate('create_unknown', 'the create answer was lost and the provider offers no way to find the job: at-most-once cannot be proven (U2)', ctx, 'no_reconciliation_method');
    return;
  }
  const method = ctx.reconciliation === 'list_by_client_reference' ? 'client_reference_lookup' : ctx.reconciliation === 'lookup_by_token' ? 'operation_id_lookup' : 'same_token_resend';
  b.apply([{ type: 'reconciliation_started', actor: ctx.actor, cause: `create_response:${seq}`, reconcileMethod: method }], ctx);
  if (b.state() !== 'reconciliation' || scheduleRetry(b, evidence, ctx) === 'scheduled') return;
  if (ctx.reconciliation === 'same_token_resend') {
    // I3: re-sending create after the create deadline could start a job nobody waits for; a human decides.
    b.escalate('create_unknown', 'the create answer was lost at the create deadline; re-sending create now would break I3', ctx, `create_response:${seq}`);
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
    b.escalate('create_unknown', `the provider accepted the create but the answer names no usable job: ${o.parseProblem ?? 'no job ID'} (C2)`, ctx, cause);
  } else if (o.transport === 'ambiguous' || o.transport === 'body_too_large' || status >= 500) {
    enterReconciliation(b, o, seq, ctx);
  } else if (status === 401 || status === 403) {
    b.escalate('authorization_denied', `HTTP ${status} on create; no retry with the same credential (H4)`, ctx, cause);
  } else if (o.transport === 'refused') {
    b.escalate(o.errorCategory === 'credential_unavailable' ? 'authorization_denied' : 'provider_failure', `the create request was refused before sending (${o.errorCategory ?? 'refused'})`, ctx, cause);
  } else if (o.transport === 'not_sent' || status === 429) {
    const r = b.record;
    if (status === 429 && r.used.consecutiveRateLimited >= r.budgets.maxRateLimited) {
      b.escalate('rate_limited', `${r.used.consecutiveRateLimited} HTTP 429 answers in a row on create (H1)`, ctx, cause);
    } else if (o.transport === 'not_sent' && r.used.transportFailures >= r.budgets.maxTransportFailures) {
      b.escalate('provider_failure', `create could not be sent ${r.used.transportFailures} times (${o.errorCategory ?? 'network'}) (S5)`, ctx, cause);
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
      b.apply([{ type: 'reconciliation_matched', actor: ctx.actor, cause, evidenceSequence: seq, observation: o }], ctx);
      if (b.record.localState === 'accepted') scheduleFirstPoll(b, o, ctx);
    }
  } else if (status === 401 || status === 403) {
    b.escalate('authorization_denied', `HTTP ${status} on reconciliation (H4)`, ctx, cause);
  } else if (o.errorCategory === 'multiple_matches') {
    // U3: several provider jobs answer to this operation: an incident, never "no job".
    b.escalate('job_id_conflict', `several provider jobs match this operation (reconcile answer ${seq}) (U3)`, ctx, cause);
  } else if (o.errorCategory === 'reconcile_unsupported') {
    b.escalate('create_unknown', 'the provider offers no way to find the job: at-most-once cannot be proven (U2)', ctx, cause);
  } else if ((is2xx(o) && o.parseProblem === undefined) || status === 404) {
    if (ctx.nowMs >= record.deadlines.createDeadlineMs) {
      b.apply([{ type: 'reconciliation_no_job', actor: ctx.actor, cause, evidenceSequence: seq, observation: o, reason: 'the provider has no job for this operation after the create deadline' }], ctx);
    } else if (scheduleRetry(b, o, ctx) === 'past_create_deadline') {
      b.record = { ...b.record, schedule: { nextPollAtMs: record.deadlines.createDeadlineMs, delaySource: 'deadline' } };
    } else {
      // I3: no job is known, and the create deadline has not passed: send the create again with the same token
      // (the provider deduplicates it if the first one did arrive after all).
      b.record = { ...b.record, reconcileBy: 'resend' };
    }
  } else if (b.record.used.transportFailures >= b.record.budgets.maxTransportFailures || scheduleRetry(b, o, ctx) === 'past_create_deadline') {
    b.escalate('create_unknown', `reconciliation could not find out whether a job was created (${o.errorCategory ?? `HTTP ${status}`}) (U2)`, ctx, cause);
  } else if (b.record.reconcileBy === 'resend') {
    // The resend itself went unanswered: find out first whether it created the job.
    b.record = { ...b.record, reconcileBy: 'lookup' };
  }
  return b.result();
}

/** The result of {@link onWake}. */
export type WakeResult =
  /** Send one status request now; the record holds the reservation (B2). */
  | { kind: 'read_status'; record: OperationRecord }
  /** Nothing to send yet. */
  | { kind: 'not_yet'; atMs: number }
  /** The wake-up check stopped automation (deadline or budget, P5, S3, S4); append the entries. */
  | ({ kind: 'stopped' } & StepResult);

/**
 * On waking in a polling state (P5): the deadline first, then the budget, then the schedule; a status request
 * is reserved before it is sent (B2). Never more than one request per wake-up: no catch-up bursts.
 */
export function onWake(record: OperationRecord, ctx: StepContext): WakeResult {
  const reserved = reserveStatusRequest(record, record.policy, ctx.nowMs, { actor: ctx.actor, capabilities: ctx.capabilities });
  if (reserved.kind === 'reserved') return { kind: 'read_status', record: reserved.record };
  if (reserved.kind === 'not_yet') return { kind: 'not_yet', atMs: reserved.atMs };
  const b = new Builder(record, reserved.record);
  b.apply(reserved.events, ctx);
  return { kind: 'stopped', ...b.result() };
}

/** After a status read (P1-P8, H1-H5, S1-S5, X2): the planner's decision, recorded with the observation (T3). */
export function afterStatus(record: OperationRecord, o: Observation, ctx: StepContext): StepResult {
  const plan = planAfterObservation({ record, policy: record.policy, observation: o, nowMs: ctx.nowMs, random: ctx.random, actor: ctx.actor, capabilities: ctx.capabilities });
  const b = new Builder(record, plan.record);
  b.apply(plan.events, ctx);
  return b.result();
}

/**
 * A cancel request from a caller (X1): refused when the adapter has no cancel endpoint, when a cancel was
 * already sent or is pending (X3), when no job is known yet, or in a state that cannot be cancelled; otherwise
 * the intent (who, why, expected effect) is recorded (`cancel_requested`, the reason in the journal) before any
 * cancel call. An earlier intent whose call never left, given up by a decision, does not block a new one.
 */
export function requestCancel(
  record: OperationRecord,
  intent: { requestedBy: string; reason: string; expectedEffect?: string },
  ctx: StepContext,
): StepResult | StepRefusal {
  if (!ctx.capabilities.cancel) return { kind: 'refused', code: 'ASYNCJOB_ERR_CANCEL_UNSUPPORTED', message: `provider ${record.provider} has no cancel endpoint` };
  const polling = record.localState === 'accepted' || record.localState === 'observing';
  // An earlier intent whose call never left (and was given up by a decision) does not block a new one; a sent one does (X3).
  if (record.cancel !== null && (record.cancel.sentAtMs !== undefined || !polling)) {
    return { kind: 'refused', code: 'ASYNCJOB_ERR_CANCEL_ALREADY_REQUESTED', message: `cancel already requested by ${record.cancel.requestedBy} (X3)` };
  }
  if (!polling) {
    return { kind: 'refused', code: 'ASYNCJOB_ERR_CANCEL_NOT_ALLOWED', message: `an operation in state ${record.localState} cannot be cancelled` };
  }
  const b = new Builder(record, record);
  const cancelIntent = { requestedBy: intent.requestedBy, reason: intent.reason, expectedEffect: intent.expectedEffect ?? 'the provider stops the job' };
  const reason = `${cancelIntent.reason}; expected effect: ${cancelIntent.expectedEffect}`;
  const result = transition(record, { type: 'cancel_requested', actor: intent.requestedBy, cause: 'cancel_request', cancelIntent, reason }, ctx.nowMs);
  if (result.kind === 'refused') return { kind: 'refused', code: result.code, message: result.message };
  b.record = result.record;
  return b.result();
}

/**
 * After the single cancel call (X1-X3): an answer (2xx, or 409 "already final") moves to `cancelling` and the
 * status loop goes on until the provider says how it ended; a call that may have arrived is never repeated.
 */
export function afterCancel(record: OperationRecord, o: Observation, ctx: StepContext): StepResult {
  const b = new Builder(record, record);
  const seq = b.observe(o, ctx, {});
  b.callSequence = seq;
  const cause = `cancel_response:${seq}`;
  const status = o.httpStatus ?? 0;
  const cancel = b.record.cancel;
  if (o.transport !== 'not_sent' && o.transport !== 'refused' && cancel !== null && cancel.sentAtMs === undefined) {
    // X3: the one cancel call reached the provider, whatever it answered: it is never offered or sent again.
    b.record = { ...b.record, cancel: { ...cancel, sentAtMs: ctx.nowMs } };
  }
  if ((is2xx(o) && o.parseProblem === undefined) || status === 409) {
    b.apply([{ type: 'cancel_sent', actor: ctx.actor, cause, evidenceSequence: seq, observation: o }], ctx);
    if (b.record.localState === 'cancelling') {
      const r = b.record;
      // A 409 that states the job's final view is confirmed by a status read at once (M1: the cancel answer is not one).
      const finalView = status === 409 && o.category !== undefined && o.category !== 'pending' && o.category !== 'unknown';
      const delayMs = finalView ? 0 : Math.min(r.policy.baseDelayMs, 1000);
      b.record = { ...r, used: { ...r.used, backoffAttempt: 0 }, schedule: { nextPollAtMs: ctx.nowMs + delayMs, delaySource: 'local_backoff' } };
    }
  } else if (status === 401 || status === 403) {
    b.escalate('authorization_denied', `HTTP ${status} on cancel; no retry with the same credential (H4)`, ctx, cause);
  } else if (o.transport === 'refused') {
    // Refused by us before sending (another origin, no credential): nothing reached the provider, so a human may still authorise the call.
    b.escalate('provider_failure', `the cancel request was refused before sending (${o.errorCategory ?? 'refused'})`, ctx, cause);
  } else if (o.transport === 'not_sent') {
    // Nothing reached the provider: one more attempt is still "the" cancel call (X1).
    b.record = { ...b.record, schedule: { nextPollAtMs: ctx.nowMs + b.record.policy.baseDelayMs, delaySource: 'local_backoff' } };
    if (ctx.nowMs >= (b.record.deadlines.cancelDeadlineMs ?? Number.POSITIVE_INFINITY)) {
      // Nothing was sent, so nothing is unconfirmed: a human may authorise the one cancel call again (A1).
      b.escalate('provider_failure', `the cancel request could not be sent before the cancel deadline (${o.errorCategory ?? 'not sent'}) (X3)`, ctx, cause);
    }
  } else {
    // It may have arrived (or its answer is unreadable): never send it again (X3); a human decides with the request history at hand.
    b.escalate('cancellation_unconfirmed', `the cancel request got no usable answer (${o.errorCategory ?? `HTTP ${status}`}); it is not repeated (X3)`, ctx, cause);
  }
  return b.result();
}

/** What a collect activity found, beside its observation (R1-R4). */
export interface CollectOutcome {
  /** Present when bytes were stored and checked. */
  result?: ResultSummary;
  /** The artifact journal entry to append, when stored. */
  artifact?: Extract<JournalEntryBody, { kind: 'artifact' }>;
}

/** After collecting the result (R1-R5, S1): succeeded only with a valid result; otherwise the reason is kept. */
export function afterCollect(record: OperationRecord, o: Observation, outcome: CollectOutcome, ctx: StepContext): StepResult {
  const b = new Builder(record, record);
  const seq = b.observe(o, ctx, {});
  b.callSequence = seq;
  const cause = `collect_response:${seq}`;
  if (outcome.artifact) b.appendExtra(outcome.artifact, ctx.nowMs, ctx.actor);
  const result = outcome.result;
  if (is2xx(o) && result?.validation === 'valid') {
    b.apply([{ type: 'result_validated', actor: ctx.actor, cause, evidenceSequence: seq, result }], ctx);
  } else if (is2xx(o) && result?.validation === 'invalid') {
    if (b.record.localState === 'result_collecting') b.apply([{ type: 'result_invalid', actor: ctx.actor, cause, evidenceSequence: seq, result }], ctx);
    else b.record = { ...b.record, result };
    b.escalate('result_validation_failed', `the result failed validation: ${(result.problems ?? []).join('; ').slice(0, 1500)} (R2, R4)`, ctx, cause);
  } else {
    const transient = o.transport === 'not_sent' || o.transport === 'ambiguous' || (o.transport === 'response' && (o.httpStatus ?? 0) >= 500);
    // H1: a 429 is "not now": the provider served nothing, so asking again later is safe whatever R5 says.
    const rateLimited = o.transport === 'response' && o.httpStatus === 429;
    const used = {
      ...b.record.used,
      transportFailures: b.record.used.transportFailures + (transient ? 1 : 0),
      rateLimited: b.record.used.rateLimited + (rateLimited ? 1 : 0),
      consecutiveRateLimited: rateLimited ? b.record.used.consecutiveRateLimited + 1 : 0,
    };
    b.record = { ...b.record, used };
    const retryable =
      (transient && (ctx.capabilities.repeatableCollect || o.transport === 'not_sent') && used.transportFailures < b.record.budgets.maxTransportFailures) ||
      (rateLimited && used.consecutiveRateLimited < b.record.budgets.maxRateLimited);
    if (retryable && ctx.nowMs < b.record.deadlines.resultDeadlineMs) {
      const plan = planWait(b.record, b.record.policy, o, ctx.nowMs, ctx.random, b.record.used.backoffAttempt, rateLimited ? used.consecutiveRateLimited : 0);
      if (plan.kind === 'poll') {
        b.record = { ...b.record, used: { ...used, backoffAttempt: used.backoffAttempt + 1 }, schedule: { nextPollAtMs: plan.atMs, delaySource: plan.source } };
        return b.result();
      }
    }
    const detail = `the result could not be collected (${o.errorCategory ?? (o.httpStatus !== undefined ? `HTTP ${o.httpStatus}` : o.transport)}) (R4)`;
    if (b.record.localState === 'result_collecting') b.apply([{ type: 'result_unavailable', actor: ctx.actor, cause, evidenceSequence: seq, observation: o, reason: detail }], ctx);
    b.escalate(rateLimited ? 'rate_limited' : 'provider_failure', detail, ctx, cause);
  }
  return b.result();
}

/**
 * A human decision on the open escalation (A1, A2): validated against the options offered, recorded whether
 * accepted or not, and applied. `inspect_provider_console` is recorded and changes nothing.
 */
export function applyDecision(record: OperationRecord, decision: Decision, ctx: StepContext): StepResult | StepRefusal {
  if (record.escalation === null) return { kind: 'refused', code: 'ASYNCJOB_ERR_NO_OPEN_ESCALATION', message: 'there is no open escalation to decide' };
  const check = validateDecision(record.escalation, decision, { nowMs: ctx.nowMs });
  if (check.kind === 'refused') return { kind: 'refused', code: check.code, message: check.message };
  const b = new Builder(record, record);
  const bounds: Record<string, number | string | boolean> = {};
  for (const key of ['extendMs', 'extraStatusRequests', 'extraTransportFailures', 'extraRateLimited', 'jobId'] as const) {
    const value = decision[key];
    if (value !== undefined) bounds[key] = value;
  }
  b.appendExtra(
    { kind: 'decision', decision: decision.option, approvedBy: decision.approvedBy, reason: decision.reason, accepted: true, ...(Object.keys(bounds).length > 0 ? { bounds } : {}) },
    ctx.nowMs,
    decision.approvedBy,
  );
  if (decision.option === 'inspect_provider_console') return b.result();
  const applied = transition(b.record, { type: 'decide', actor: decision.approvedBy, cause: 'decision', decision, reason: decision.reason }, ctx.nowMs);
  if (applied.kind === 'refused') return { kind: 'refused', code: applied.code, message: applied.message };
  b.record = applied.record;
  if (decision.option === 'accept_result') {
    // A1: a human accepted the result that failed validation; the success observation is on record, so the
    // operation completes without collecting again (a collect would fail validation the same way).
    b.apply([{ type: 'result_validated', actor: decision.approvedBy, cause: 'decision', reason: `result accepted by ${decision.approvedBy} despite failed validation` }], ctx);
  }
  if (decision.option === 'retry_create_same_token') {
    // A human authorised a new attempt (A1): it gets a bounded create window of its own.
    const r = b.record;
    b.record = { ...r, deadlines: { ...r.deadlines, createDeadlineMs: Math.max(r.deadlines.createDeadlineMs, ctx.nowMs + r.policy.extensionMs) }, schedule: { nextPollAtMs: ctx.nowMs, delaySource: 'manual_extension' } };
  }
  return b.result();
}

/** A decision that was refused is still recorded (A2): who tried what, and why it was refused. */
export function recordRejectedDecision(record: OperationRecord, decision: { option?: unknown; approvedBy?: unknown; reason?: unknown }, refusal: StepRefusal, ctx: StepContext): StepResult {
  const b = new Builder(record, record);
  const text = (v: unknown, fallback: string, max: number): string => (typeof v === 'string' && v.trim().length > 0 ? v.slice(0, max) : fallback);
  b.appendExtra(
    {
      kind: 'decision',
      decision: text(decision.option, '(none)', 100),
      approvedBy: text(decision.approvedBy, '(unknown)', 200),
      reason: text(decision.reason, '(none)', 2000),
      accepted: false,
      rejectionReason: `${refusal.code}: ${refusal.message}`.slice(0, 2000),
    },
    ctx.nowMs,
    ctx.actor,
  );
  return b.result();
}

/**
 * A webhook hint (W1): recorded as an observation that changes no remote fact (not even the job IDs or the last
 * HTTP exchange: only a status read does), and, in a polling state, the next status read is moved to now so the
 * final status read happens early. Never a success on its own. It never overrides a provider's Retry-After (a
 * minimum wait, P3), never wakes after the deadline, and a hint naming another job wakes nothing.
 */
export function applyWebhookHint(record: OperationRecord, hint: { eventId: string; remoteJobId?: string; state?: string; receivedAtMs: number }, ctx: StepContext): StepResult {
  const b = new Builder(record, record);
  const polling = record.localState === 'accepted' || record.localState === 'observing' || record.localState === 'cancelling';
  const ourJob = hint.remoteJobId === undefined || hint.remoteJobId === record.jobId;
  const observation: Observation = {
    action: 'webhook',
    transport: 'response',
    receivedAtMs: hint.receivedAtMs,
    ...(hint.remoteJobId !== undefined ? { remoteJobId: hint.remoteJobId } : {}),
    ...(hint.state !== undefined ? { remoteState: hint.state } : {}),
  };
  const wakeNow =
    polling &&
    ourJob &&
    record.schedule.reservedAtMs === undefined &&
    record.schedule.delaySource !== 'provider_retry_after' &&
    (record.schedule.nextPollAtMs ?? 0) > ctx.nowMs &&
    ctx.nowMs < effectiveDeadlineMs(record);
  const why = !ourJob ? ` for another job than ${record.jobId ?? '(none yet)'}: ignored` : wakeNow ? ', confirmed by a status read' : '';
  b.observe(observation, ctx, {
    decision: wakeNow ? 'read_status_now' : 'noted',
    note: `webhook ${hint.eventId.slice(0, 200)}: a hint${why} (W1)`,
    ...(wakeNow ? { nextPollAtMs: ctx.nowMs, delaySource: 'webhook_hint' } : {}),
  });
  // W1, M2: a webhook is not a provider answer to us; the remote facts stay as the last status read left them.
  b.record = { ...b.record, remote: record.remote };
  if (wakeNow) b.record = { ...b.record, schedule: { nextPollAtMs: ctx.nowMs, delaySource: 'webhook_hint' } };
  return b.result();
}

/** What the workflow does next, from the record alone. */
export type Command =
  | { kind: 'finished' }
  | { kind: 'create' }
  | { kind: 'reconcile' }
  | { kind: 'read_status' }
  | { kind: 'cancel' }
  | { kind: 'collect' }
  | { kind: 'wait'; untilMs: number }
  | { kind: 'await_decision'; untilMs: number };

/**
 * The next command for a record at `nowMs`. Pure; the workflow runs it in a loop. A wait returns the instant to
 * wake at; the workflow wakes earlier for a message. Polling states go through {@link onWake} when due.
 */
export function nextCommand(record: OperationRecord, nowMs: number): Command {
  const due = (record.schedule.nextPollAtMs ?? nowMs) <= nowMs;
  const wait = (): Command => ({ kind: 'wait', untilMs: record.schedule.nextPollAtMs ?? nowMs });
  switch (record.localState) {
    case 'succeeded':
    case 'failed':
    case 'cancelled':
    case 'closed':
      return { kind: 'finished' };
    case 'escalated':
      return { kind: 'await_decision', untilMs: record.escalation?.decisionDeadlineMs ?? nowMs };
    case 'create_pending':
      return due ? { kind: 'create' } : wait();
    case 'create_unknown':
    case 'reconciliation':
      return due ? { kind: 'reconcile' } : wait();
    case 'cancel_requested':
      return due ? { kind: 'cancel' } : wait();
    case 'result_collecting':
      return due ? { kind: 'collect' } : wait();
    case 'cancelling':
      // X2: a success that crossed its commit point during the cancel is collected, not ignored.
      if (record.remote.category === 'success' && record.remote.resultReference !== undefined && record.result === null) return due ? { kind: 'collect' } : wait();
      return due ? { kind: 'read_status' } : wait();
    case 'accepted':
    case 'observing':
      return due ? { kind: 'read_status' } : wait();
    default:
      // Transient states are always followed by an escalation within the same step; reaching one here is a bug.
      return { kind: 'await_decision', untilMs: nowMs };
  }
}

/** Reserves one create attempt before the create request is sent (B2, I3), or stops at the create deadline (U4). */
export function reserveCreateAttempt(record: OperationRecord, ctx: StepContext): { kind: 'reserved'; record: OperationRecord } | ({ kind: 'stopped' } & StepResult) {
  if (ctx.nowMs >= record.deadlines.createDeadlineMs) {
    const b = new Builder(record, record);
    const ambiguous = record.localState !== 'create_pending';
    // Nothing ever reached the provider (our own backlog, a paused worker, a reservation whose worker died before
    // sending): a deadline, not the provider's failure, however many attempts were reserved.
    const last = record.remote.lastHttp;
    const sent = last !== undefined && last.transport !== 'not_sent';
    const reason = ambiguous ? 'create_unknown' : sent ? 'provider_failure' : 'deadline_exceeded';
    const what = sent ? 'without a job ID' : 'before any create request reached the provider';
    b.escalate(reason, `the create deadline ${new Date(record.deadlines.createDeadlineMs).toISOString()} passed ${what} (U4)`, ctx, 'create_deadline');
    return { kind: 'stopped', ...b.result() };
  }
  return { kind: 'reserved', record: { ...record, used: { ...record.used, createAttempts: record.used.createAttempts + 1 }, schedule: {} } };
}

/**
 * An outside-call activity failed for a reason of ours (worker lost, timeout, bug), so nothing was observed:
 * the reservation stays counted (B2: an unused reservation beats an invisible request), the failure counts
 * against the transport-failure budget, is journalled as an observation with `errorCategory: 'activity_failed'`
 * (T3), and the call is planned again after a backoff, or automation stops when the budget is spent (S5). A
 * call that may have reached the provider and must not be repeated blindly is not planned again: a create goes
 * to reconciliation (U1, U2), a cancel escalates `cancellation_unconfirmed` (X3), a collect that is not safe to
 * repeat escalates (R5).
 */
export function afterActivityFailure(record: OperationRecord, action: string, message: string, ctx: StepContext): StepResult {
  const used = { ...record.used, transportFailures: record.used.transportFailures + 1, backoffAttempt: record.used.backoffAttempt + 1 };
  const b = new Builder(record, { ...record, used, schedule: {} });
  const cause = `${action.slice(0, 60)}_activity_failed`;
  const detail = `the ${action.slice(0, 60)} activity failed (${used.transportFailures} transport failures of ${record.budgets.maxTransportFailures}); last: ${message.slice(0, 500)}`;
  // T3: the failed call is explained in the journal too (it may or may not have reached the provider).
  const known = actionSchema.safeParse(action);
  const note = (decision: string, nextPollAtMs?: number): { observation: Observation; sequence: number } | undefined => {
    if (!known.success) return undefined;
    const observation: Observation = { action: known.data, transport: 'ambiguous', receivedAtMs: ctx.nowMs, errorCategory: 'activity_failed' };
    const sequence = b.observe(observation, ctx, { decision, note: detail, ...(nextPollAtMs !== undefined ? { nextPollAtMs, delaySource: 'local_backoff' as const } : {}) });
    // Nothing was heard from the provider: its facts are unchanged (M2).
    b.record = { ...b.record, remote: record.remote };
    return { observation, sequence };
  };
  if (action === 'create' && record.localState === 'create_pending') {
    // U1: the create may have been sent before the activity failed: the same ambiguity as a lost answer.
    const noted = note('reconcile');
    if (noted !== undefined) enterReconciliation(b, noted.observation, noted.sequence, ctx);
    return b.result();
  }
  if (action === 'collect' && !ctx.capabilities.repeatableCollect && (record.localState === 'result_collecting' || record.localState === 'cancelling')) {
    // R5: collecting again is not known to be safe; a human decides.
    const noted = note('escalate');
    if (noted !== undefined && record.localState === 'result_collecting') {
      b.apply([{ type: 'result_unavailable', actor: ctx.actor, cause, evidenceSequence: noted.sequence, observation: noted.observation, reason: `${detail} (R4, R5)` }], ctx);
    }
    b.escalate('provider_failure', `${detail}; collecting is not safe to repeat (R5)`, ctx, cause);
    return b.result();
  }
  if (action === 'cancel' && record.localState === 'cancel_requested' && record.cancel !== null) {
    // X3: the one cancel call may have arrived; it is never sent again. A human decides with the history at hand.
    note('escalate');
    b.record = { ...b.record, cancel: { ...record.cancel, sentAtMs: ctx.nowMs } };
    b.escalate('cancellation_unconfirmed', `${detail}; the cancel request may have arrived and is not repeated (X3)`, ctx, cause);
    return b.result();
  }
  if (used.transportFailures >= record.budgets.maxTransportFailures) {
    note('escalate');
    b.escalate('provider_failure', `${detail} (S5)`, ctx, cause);
    return b.result();
  }
  const delayMs = Math.min(record.policy.maxDelayMs, record.policy.baseDelayMs * 2 ** Math.min(record.used.backoffAttempt, 30));
  note('retry', ctx.nowMs + delayMs);
  b.record = { ...b.record, schedule: { nextPollAtMs: ctx.nowMs + delayMs, delaySource: 'local_backoff' } };
  return b.result();
}

/**
 * No decision arrived before the decision deadline: the operation closes as escalated, and the journal says so
 * (E2). Appends nothing (returns the record unchanged, no entries) unless an escalation is open and its decision
 * deadline has passed at `ctx.nowMs`.
 */
export function decisionDeadlinePassed(record: OperationRecord, ctx: StepContext): StepResult {
  const b = new Builder(record, record);
  if (record.localState !== 'escalated' || record.escalation === null || ctx.nowMs < record.escalation.decisionDeadlineMs) return b.result();
  b.appendExtra(
    {
      kind: 'decision',
      decision: 'none',
      approvedBy: ctx.actor,
      reason: 'no decision arrived before the decision deadline; the operation stays escalated and automation has ended',
      accepted: false,
      rejectionReason: 'ASYNCJOB_ERR_DECISION_TOO_LATE',
    },
    ctx.nowMs,
    ctx.actor,
  );
  return b.result();
}

/** A compact summary for the workflow's result and the Web UI: never the result body (R2). */
export function operationSummary(record: OperationRecord): {
  operationId: string;
  provider: string;
  localState: OperationRecord['localState'];
  jobId?: string;
  /** The poll URL, which names the job when the provider gives no job ID (V1). */
  pollUrl?: string;
  remoteState?: string;
  /** The provider's last error code and message (a failed job, a refused request). */
  providerError?: { code?: string; message?: string };
  result: ResultSummary | null;
  escalation: { reason: EscalationReason; text: string } | null;
  statusRequestsUsed: number;
  statusRequestsAllowed: number;
} {
  return {
    operationId: record.operationId,
    provider: record.provider,
    localState: record.localState,
    ...(record.jobId !== undefined ? { jobId: record.jobId } : {}),
    ...(record.remote.statusUrl !== undefined ? { pollUrl: record.remote.statusUrl } : {}),
    ...(record.remote.state !== undefined ? { remoteState: record.remote.state } : {}),
    ...(record.remote.lastError !== undefined ? { providerError: record.remote.lastError } : {}),
    result: record.result,
    escalation: record.escalation ? { reason: record.escalation.reason, text: renderEscalation(record.escalation) } : null,
    statusRequestsUsed: record.used.statusRequests,
    statusRequestsAllowed: record.budgets.maxStatusRequests,
  };
}

export { appendBounded, OBSERVATION_TAIL };
