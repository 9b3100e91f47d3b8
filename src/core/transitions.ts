/**
 * The state machine of docs/rules.md (M, "Every arrow") as data (M1-M3), and {@link transition}, which applies
 * one event with its evidence. It executes nothing: it returns the new record with the transition appended (the
 * journal sequence consumed), or a typed refusal naming the missing evidence.
 *
 * Some arrows exist only because a rule needs them, each documented in {@link TRANSITIONS}:
 * `create_pending -> result_collecting` (C3, a synchronous success), and from `escalated` the decisions
 * `-> cancelling` (extend while a cancel already sent awaits confirmation, X3: never cancel twice),
 * `-> result_collecting` (accept_result / retry_collect, A1) and `-> reconciliation` (retry_create_same_token, U2).
 */
import { type Decision, type OpenEscalation } from './escalation';
import { type LocalState } from './journal';
import { type Observation } from './observation';
import { applyRemoteFacts } from './record-observation';
import {
  type OperationRecord,
  type ResultSummary,
  type RecordedTransition,
  TRANSITION_TAIL,
  APPROVAL_TAIL,
  appendBounded,
} from './operation';
import { evidenceMissing, targetOf } from './transition-evidence';

/** The states nothing leaves (except `failed` by a recorded resume action, M1). */
export const FINAL_STATES: readonly LocalState[] = ['succeeded', 'failed', 'cancelled', 'closed'];

/** The non-final states: each may escalate. */
export const NON_FINAL_STATES: readonly LocalState[] = [
  'create_pending',
  'create_unknown',
  'reconciliation',
  'accepted',
  'observing',
  'cancel_requested',
  'cancelling',
  'result_collecting',
  'cancellation_unconfirmed',
  'result_timed_out',
  'result_unavailable',
  'result_validation_failed',
  'escalated',
];

/** Event types: one per kind of cause. */
export type EventType =
  | 'create_accepted'
  | 'create_succeeded_sync'
  | 'create_ambiguous'
  | 'reconciliation_started'
  | 'reconciliation_matched'
  | 'reconciliation_no_job'
  | 'status_observed'
  | 'remote_succeeded'
  | 'result_validated'
  | 'result_unavailable'
  | 'result_invalid'
  | 'remote_failed'
  | 'deadline_reached'
  | 'cancel_requested'
  | 'cancel_sent'
  | 'remote_cancelled'
  | 'cancel_deadline_reached'
  | 'escalate'
  | 'decide'
  | 'resume';

/** Kinds of evidence a transition may require. Each is checked by {@link evidenceMissing}. */
export type EvidenceKind =
  /** A create observation: a 2xx response naming a job ID (C2, H2). */
  | 'create_answer_with_job_id'
  /** A create observation: a 2xx response in the success category with a result reference (C3). */
  | 'sync_success'
  /** A create observation that proves nothing: sent then broken, cut off, or a 5xx (U1). */
  | 'ambiguous_create'
  /** The reconciliation method the adapter offers is named (U2). */
  | 'reconcile_method'
  /** A reconcile observation: a 2xx response naming a job ID (C2). */
  | 'reconciliation_match'
  /** A reconcile observation answered without a job, after the create deadline. */
  | 'reconciliation_no_job'
  /** A status observation: a 2xx response with a state category. */
  | 'status_answer'
  /** A status answer in the success category with a result reference (P6, P7), in the event or recorded. */
  | 'success_observation'
  /** A result summary with validation `valid`, or a result accepted by a recorded decision (S1, R4, A1). */
  | 'validated_result'
  /** A status observation: a 2xx response in the failure or expired category (S2). */
  | 'failure_observation'
  /** A status observation: a 2xx response in the cancelled category: the provider's word, not ours (M1, M2). */
  | 'cancelled_observation'
  /** The cancel intent: who, why, expected effect (X1). */
  | 'cancel_intent'
  /** A cancel observation: the provider answered the single cancel request, 2xx or 409 already final (X1). */
  | 'cancel_answer'
  /** The result deadline has passed at `nowMs` (S3). */
  | 'result_deadline_passed'
  /** The cancel deadline has passed at `nowMs` (X3). */
  | 'cancel_deadline_passed'
  /** A collect observation that failed: no 2xx response (R4). */
  | 'collect_failure'
  /** A result summary with validation `invalid` (R4). */
  | 'invalid_result'
  /** A well-formed escalation (E1, E2). */
  | 'escalation'
  /** A decision valid against the open escalation, leading to this target (A2). */
  | 'decision'
  /** A recorded resume action, approved, on a provider that supports resume (M1). */
  | 'resume_action';

/** One arrow of the state machine. */
export interface TransitionRule {
  from: readonly LocalState[];
  event: EventType;
  to: LocalState;
  evidence: readonly EvidenceKind[];
  /** Whether the new state states a provider fact (`remote`) or one of ours (`local`), M2. */
  fact: 'local' | 'remote';
  /** The rule(s) the arrow implements, as IDs defined in docs/rules.md. */
  rule: string;
}

const ESCALATABLE = NON_FINAL_STATES.filter((s) => s !== 'escalated');

/** The transition table (M): every arrow, with the evidence it requires. */
export const TRANSITIONS: readonly TransitionRule[] = [
  {
    from: ['create_pending'],
    event: 'create_accepted',
    to: 'accepted',
    evidence: ['create_answer_with_job_id'],
    fact: 'remote',
    rule: 'C2',
  },
  {
    from: ['create_pending'],
    event: 'create_succeeded_sync',
    to: 'result_collecting',
    evidence: ['sync_success'],
    fact: 'remote',
    rule: 'C3',
  },
  {
    from: ['create_pending'],
    event: 'create_ambiguous',
    to: 'create_unknown',
    evidence: ['ambiguous_create'],
    fact: 'local',
    rule: 'U1',
  },
  {
    from: ['create_unknown'],
    event: 'reconciliation_started',
    to: 'reconciliation',
    evidence: ['reconcile_method'],
    fact: 'local',
    rule: 'U2',
  },
  {
    from: ['reconciliation'],
    event: 'reconciliation_matched',
    to: 'accepted',
    evidence: ['reconciliation_match'],
    fact: 'remote',
    rule: 'U2',
  },
  {
    from: ['reconciliation'],
    event: 'reconciliation_no_job',
    to: 'failed',
    evidence: ['reconciliation_no_job'],
    fact: 'remote',
    rule: 'U2',
  },
  {
    from: ['reconciliation'],
    event: 'create_succeeded_sync',
    to: 'result_collecting',
    evidence: ['sync_success'],
    fact: 'remote',
    rule: 'C3, V4',
  },
  {
    from: ['accepted'],
    event: 'status_observed',
    to: 'observing',
    evidence: ['status_answer'],
    fact: 'remote',
    rule: 'P1',
  },
  {
    from: ['observing'],
    event: 'remote_succeeded',
    to: 'result_collecting',
    evidence: ['success_observation'],
    fact: 'remote',
    rule: 'P7, P9',
  },
  {
    from: ['result_collecting', 'cancelling'],
    event: 'result_validated',
    to: 'succeeded',
    evidence: ['success_observation', 'validated_result'],
    fact: 'remote',
    rule: 'S1, R4, X2',
  },
  {
    from: ['result_collecting'],
    event: 'result_unavailable',
    to: 'result_unavailable',
    evidence: ['collect_failure'],
    fact: 'local',
    rule: 'R4',
  },
  {
    from: ['result_collecting'],
    event: 'result_invalid',
    to: 'result_validation_failed',
    evidence: ['invalid_result'],
    fact: 'local',
    rule: 'R4',
  },
  {
    from: ['accepted', 'observing', 'cancelling'],
    event: 'remote_failed',
    to: 'failed',
    evidence: ['failure_observation'],
    fact: 'remote',
    rule: 'S2, X2',
  },
  {
    from: ['observing'],
    event: 'deadline_reached',
    to: 'result_timed_out',
    evidence: ['result_deadline_passed'],
    fact: 'local',
    rule: 'S3',
  },
  {
    from: ['accepted', 'observing'],
    event: 'cancel_requested',
    to: 'cancel_requested',
    evidence: ['cancel_intent'],
    fact: 'local',
    rule: 'X1, M2',
  },
  {
    from: ['cancel_requested'],
    event: 'cancel_sent',
    to: 'cancelling',
    evidence: ['cancel_answer'],
    fact: 'local',
    rule: 'X1',
  },
  {
    from: ['cancelling'],
    event: 'remote_cancelled',
    to: 'cancelled',
    evidence: ['cancelled_observation'],
    fact: 'remote',
    rule: 'M1, M2, X2',
  },
  {
    from: ['cancelling'],
    event: 'cancel_deadline_reached',
    to: 'cancellation_unconfirmed',
    evidence: ['cancel_deadline_passed'],
    fact: 'local',
    rule: 'X3',
  },
  { from: ESCALATABLE, event: 'escalate', to: 'escalated', evidence: ['escalation'], fact: 'local', rule: 'E1' },
  { from: ['escalated'], event: 'decide', to: 'observing', evidence: ['decision'], fact: 'local', rule: 'A2' },
  {
    from: ['escalated'],
    event: 'decide',
    to: 'cancel_requested',
    evidence: ['decision'],
    fact: 'local',
    rule: 'A1, X1',
  },
  { from: ['escalated'], event: 'decide', to: 'closed', evidence: ['decision'], fact: 'local', rule: 'A2' },
  { from: ['escalated'], event: 'decide', to: 'cancelling', evidence: ['decision'], fact: 'local', rule: 'A2, X3' },
  {
    from: ['escalated'],
    event: 'decide',
    to: 'result_collecting',
    evidence: ['decision'],
    fact: 'local',
    rule: 'A1, R5',
  },
  { from: ['escalated'], event: 'decide', to: 'reconciliation', evidence: ['decision'], fact: 'local', rule: 'U2, I3' },
  { from: ['failed'], event: 'resume', to: 'observing', evidence: ['resume_action'], fact: 'local', rule: 'M1' },
];

/** An event with its evidence. Which fields matter depends on `type` (see {@link TRANSITIONS}). */
export interface OperationEvent {
  type: EventType;
  /** Who caused it: `workflow`, `worker:<host>`, a human. */
  actor: string;
  /** The triggering request/response, e.g. `status_response:seq-14` (M3). Defaults to the event type. */
  cause?: string;
  reason?: string;
  /** The journal sequence of the evidence observation, when recorded. */
  evidenceSequence?: number;
  observation?: Observation;
  result?: ResultSummary;
  cancelIntent?: { requestedBy: string; reason: string; expectedEffect: string };
  escalation?: OpenEscalation;
  decision?: Decision;
  reconcileMethod?: 'same_token_resend' | 'client_reference_lookup' | 'operation_id_lookup';
  resume?: { approvedBy: string; reason: string; providerSupportsResume: boolean };
}

/** The result of {@link transition}. */
export type TransitionResult =
  | { kind: 'applied'; record: OperationRecord; transition: RecordedTransition }
  | {
      kind: 'refused';
      code:
        | 'ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED'
        | 'ASYNCJOB_ERR_MISSING_EVIDENCE'
        | 'ASYNCJOB_ERR_OPERATION_FINAL'
        | 'ASYNCJOB_ERR_JOB_ID_CONFLICT';
      missingEvidence: EvidenceKind[];
      message: string;
    };

function applyEffects(
  record: OperationRecord,
  rule: TransitionRule,
  event: OperationEvent,
  nowMs: number,
): OperationRecord {
  const o = event.observation;
  // The evidence is a provider answer: its facts are the provider's (M2), recorded as recordObservation would.
  const next: OperationRecord = {
    ...record,
    localState: rule.to,
    ...(o !== undefined && rule.fact === 'remote' ? { remote: applyRemoteFacts(record.remote, o) } : {}),
  };
  switch (event.type) {
    case 'create_accepted':
    case 'reconciliation_matched':
      // A provider that names jobs only by their poll URL gives no ID (V1): the poll URL, in `remote`, is the job.
      if (o!.remoteJobId !== undefined) next.jobId = o!.remoteJobId;
      next.acceptedAtMs = nowMs;
      break;
    case 'create_succeeded_sync':
      if (o!.remoteJobId !== undefined) next.jobId = o!.remoteJobId;
      next.acceptedAtMs = nowMs;
      break;
    case 'result_validated':
      if (event.result !== undefined) next.result = event.result;
      break;
    case 'result_invalid':
      next.result = event.result!;
      break;
    case 'cancel_requested':
      next.cancel = { ...event.cancelIntent!, requestedAtMs: nowMs };
      next.deadlines = { ...record.deadlines, cancelDeadlineMs: nowMs + record.policy.cancelDeadlineMs };
      next.schedule = {};
      break;
    case 'cancel_sent':
      next.cancel = { ...record.cancel!, sentAtMs: nowMs };
      break;
    case 'escalate':
      next.escalation = event.escalation!;
      next.schedule = {};
      break;
    case 'decide': {
      const d = event.decision!;
      next.escalation = null;
      const bounds: Record<string, number | string> = {};
      if (d.option === 'extend') {
        const extendMs = d.extendMs!;
        bounds.extendMs = extendMs;
        bounds.extraStatusRequests = d.extraStatusRequests!;
        // An extension adds to the bounds; counters are never reset (A2, B1).
        next.budgets = {
          maxStatusRequests: record.budgets.maxStatusRequests + d.extraStatusRequests!,
          maxTransportFailures: record.budgets.maxTransportFailures + (d.extraTransportFailures ?? 0),
          maxRateLimited: record.budgets.maxRateLimited + (d.extraRateLimited ?? 0),
        };
        if (d.extraTransportFailures !== undefined) bounds.extraTransportFailures = d.extraTransportFailures;
        if (d.extraRateLimited !== undefined) bounds.extraRateLimited = d.extraRateLimited;
        next.deadlines =
          rule.to === 'cancelling'
            ? {
                ...record.deadlines,
                cancelDeadlineMs: Math.max(record.deadlines.cancelDeadlineMs ?? nowMs, nowMs) + extendMs,
              }
            : { ...record.deadlines, resultDeadlineMs: Math.max(record.deadlines.resultDeadlineMs, nowMs) + extendMs };
        next.schedule = { nextPollAtMs: nowMs, delaySource: 'manual_extension' };
      }
      if (d.option === 'adopt_job') {
        next.jobId = d.jobId!;
        bounds.jobId = d.jobId!;
        next.schedule = { nextPollAtMs: nowMs, delaySource: 'manual_extension' };
      }
      if (d.option === 'accept_result') next.result = { ...record.result!, acceptedBy: d.approvedBy };
      if (rule.to === 'cancel_requested') {
        // X1, M2: the approval is the cancel intent (who, why), recorded before the one cancel call, with its deadline (X3).
        next.cancel = {
          requestedBy: d.approvedBy,
          reason: d.reason,
          expectedEffect: 'the provider stops the job',
          requestedAtMs: nowMs,
        };
        next.deadlines = { ...record.deadlines, cancelDeadlineMs: nowMs + record.policy.cancelDeadlineMs };
        next.schedule = {};
      }
      next.authorisation = {
        ...record.authorisation,
        approvals: appendBounded(
          record.authorisation.approvals,
          {
            atMs: nowMs,
            approvedBy: d.approvedBy,
            option: d.option,
            reason: d.reason,
            ...(Object.keys(bounds).length > 0 ? { bounds } : {}),
          },
          APPROVAL_TAIL,
        ),
      };
      break;
    }
    case 'resume':
      next.authorisation = {
        ...record.authorisation,
        approvals: appendBounded(
          record.authorisation.approvals,
          { atMs: nowMs, approvedBy: event.resume!.approvedBy, option: 'resume', reason: event.resume!.reason },
          APPROVAL_TAIL,
        ),
      };
      next.schedule = { nextPollAtMs: nowMs, delaySource: 'manual_extension' };
      break;
    default:
      break;
  }
  return next;
}

/**
 * Applies `event` at `nowMs` (M1): finds the arrow from the record's state for the event (for `decide`, the
 * target follows from the chosen option), checks every piece of evidence, and returns the new record with the
 * transition appended to the bounded tail at `journal.nextSequence` (M3), or a refusal naming the missing
 * evidence. Pure and safe to repeat: the input record is not modified.
 */
export function transition(record: OperationRecord, event: OperationEvent, nowMs: number): TransitionResult {
  const from = record.localState;
  if (FINAL_STATES.includes(from) && !(from === 'failed' && event.type === 'resume')) {
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_OPERATION_FINAL',
      missingEvidence: [],
      message: `the operation is ${from}, a final state`,
    };
  }
  const candidates = TRANSITIONS.filter((r) => r.event === event.type && r.from.includes(from));
  const target = targetOf(record, event);
  const rule = event.type === 'decide' ? candidates.find((r) => r.to === target) : candidates[0];
  if (rule === undefined) {
    if (event.type === 'decide' && candidates.length > 0) {
      return {
        kind: 'refused',
        code: 'ASYNCJOB_ERR_MISSING_EVIDENCE',
        missingEvidence: ['decision'],
        message: 'decide: the decision is missing or leads to no state change',
      };
    }
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED',
      missingEvidence: [],
      message: `no transition from ${from} on ${event.type}`,
    };
  }
  const missing = evidenceMissing(rule, record, event, nowMs);
  if (missing.length > 0) {
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_MISSING_EVIDENCE',
      missingEvidence: missing,
      message: `${from} -> ${rule.to} on ${event.type} needs evidence: ${missing.join(', ')} (${rule.rule})`,
    };
  }
  if (event.type === 'cancel_requested' && record.cancel?.sentAtMs !== undefined) {
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED',
      missingEvidence: [],
      message: 'a cancel was already sent for this operation (X3: never cancel twice)',
    };
  }
  if (
    (event.type === 'create_accepted' || event.type === 'reconciliation_matched') &&
    event.observation?.remoteJobId !== undefined
  ) {
    const newId = event.observation.remoteJobId;
    const others = record.remote.jobIds.filter((id) => id !== newId);
    if (others.length > 0) {
      return {
        kind: 'refused',
        code: 'ASYNCJOB_ERR_JOB_ID_CONFLICT',
        missingEvidence: [],
        message: `job ID ${newId} differs from ${others.join(', ')} already reported for this operation (U3): escalate job_id_conflict`,
      };
    }
  }
  const sequence = record.journal.nextSequence;
  const applied = applyEffects(record, rule, event, nowMs);
  const jobId = applied.jobId;
  const recorded: RecordedTransition = {
    sequence,
    atMs: nowMs,
    actor: event.actor,
    body: {
      kind: 'transition',
      from,
      to: rule.to,
      cause: (event.cause ?? event.type).slice(0, 100),
      ...(event.evidenceSequence !== undefined ? { evidenceSequence: event.evidenceSequence } : {}),
      ...(jobId !== undefined ? { remoteJobId: jobId } : {}),
      ...(event.reason !== undefined
        ? { reason: event.reason.slice(0, 2000) }
        : event.escalation
          ? { reason: event.escalation.reason }
          : {}),
    },
  };
  return {
    kind: 'applied',
    transition: recorded,
    record: {
      ...applied,
      journal: {
        ...applied.journal,
        nextSequence: sequence + 1,
        transitions: appendBounded(applied.journal.transitions, recorded, TRANSITION_TAIL),
      },
    },
  };
}

export { evidenceMissing };
