/**
 * The state machine of docs/rules.md (M, "Every arrow") as data (M1-M3), and {@link transition}, which applies
 * one event with its evidence. It executes nothing: it returns the new record with the transition appended (the
 * journal sequence consumed), or a typed refusal naming the missing evidence.
 *
 * Some arrows exist only because a rule needs them, each documented in {@link TRANSITIONS}:
 * `create_pending -> result_collecting` (C3, a synchronous success), and from `escalated` the decisions
 * `-> cancelling` (extend while a cancel already sent awaits confirmation, X3: never cancel twice),
 * `-> result_collecting` (accept_result / retry_collect, A1) and `-> reconciliation` (retry_create_same_token, U2),
 * and `create_pending -> failed` on operation variables the adapter refuses, before anything is sent (C5).
 */
import { decisionEffects } from './decision-effects';
import { localStateSchema, type LocalState } from './journal';
import { type EventType, type OperationEvent, observationOf } from './operation-event';
import { type OperationRecord, type RecordedTransition, TRANSITION_TAIL, appendBounded } from './operation';
import { applyRemoteFacts } from './record-observation';
import { evidenceMissing, targetOf } from './transition-evidence';

export { type EventOf, type EventType, type OperationEvent } from './operation-event';

/** The states nothing leaves (M1). */
export const FINAL_STATES: readonly LocalState[] = ['succeeded', 'failed', 'cancelled', 'closed'];

/** The non-final states: each may escalate. */
export const NON_FINAL_STATES: readonly LocalState[] = localStateSchema.options.filter(
  (state) => !FINAL_STATES.includes(state),
);

/**
 * Kinds of evidence a transition may require. That an event carries its evidence is checked by the compiler
 * (`OperationEvent`); what the evidence says, by {@link evidenceMissing}.
 */
export type EvidenceKind =
  /** A create observation: a 2xx response naming a job ID (C2, H2). */
  | 'create_answer_with_job_id'
  /** A create observation: a 2xx response in the success category with a result reference (C3). */
  | 'sync_success'
  /** A create observation that proves nothing: sent then broken, cut off, or a 5xx (U1). */
  | 'ambiguous_create'
  /** The reconciliation method the adapter offers is named (U2): a typed field, checked by the compiler alone. */
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
  /** Problems with the operation variables, found before any create request was reserved (C5). */
  | 'variable_issues'
  /** A well-formed escalation (E1, E2). */
  | 'escalation'
  /** A decision valid against the open escalation, leading to this target (A2). */
  | 'decision';

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

const ESCALATABLE = NON_FINAL_STATES.filter((state) => state !== 'escalated');

/** One arrow, in the column order of the arrow table in docs/rules.md: from, event, to, evidence, fact, rules. */
function arrow(
  from: readonly LocalState[],
  event: EventType,
  to: LocalState,
  evidence: readonly EvidenceKind[],
  fact: TransitionRule['fact'],
  rule: string,
): TransitionRule {
  return { from, event, to, evidence, fact, rule };
}

/** The transition table (M): every arrow, with the evidence it requires. */
export const TRANSITIONS: readonly TransitionRule[] = [
  arrow(['create_pending'], 'create_accepted', 'accepted', ['create_answer_with_job_id'], 'remote', 'C2'),
  arrow(['create_pending'], 'create_succeeded_sync', 'result_collecting', ['sync_success'], 'remote', 'C3'),
  arrow(['create_pending'], 'create_ambiguous', 'create_unknown', ['ambiguous_create'], 'local', 'U1'),
  arrow(['create_pending'], 'variables_refused', 'failed', ['variable_issues'], 'local', 'C5'),
  arrow(['create_unknown'], 'reconciliation_started', 'reconciliation', ['reconcile_method'], 'local', 'U2'),
  arrow(['reconciliation'], 'reconciliation_matched', 'accepted', ['reconciliation_match'], 'remote', 'U2'),
  arrow(['reconciliation'], 'reconciliation_no_job', 'failed', ['reconciliation_no_job'], 'remote', 'U2'),
  arrow(['reconciliation'], 'create_succeeded_sync', 'result_collecting', ['sync_success'], 'remote', 'C3, V4'),
  arrow(['accepted'], 'status_observed', 'observing', ['status_answer'], 'remote', 'P1'),
  arrow(['observing'], 'remote_succeeded', 'result_collecting', ['success_observation'], 'remote', 'P7, P9'),
  arrow(
    ['result_collecting', 'cancelling'],
    'result_validated',
    'succeeded',
    ['success_observation', 'validated_result'],
    'remote',
    'S1, R4, X2',
  ),
  arrow(['result_collecting'], 'result_unavailable', 'result_unavailable', ['collect_failure'], 'local', 'R4'),
  arrow(['result_collecting'], 'result_invalid', 'result_validation_failed', ['invalid_result'], 'local', 'R4'),
  arrow(
    ['accepted', 'observing', 'cancelling'],
    'remote_failed',
    'failed',
    ['failure_observation'],
    'remote',
    'S2, X2',
  ),
  arrow(['observing'], 'deadline_reached', 'result_timed_out', ['result_deadline_passed'], 'local', 'S3'),
  arrow(['accepted', 'observing'], 'cancel_requested', 'cancel_requested', ['cancel_intent'], 'local', 'X1, M2'),
  arrow(['cancel_requested'], 'cancel_sent', 'cancelling', ['cancel_answer'], 'local', 'X1'),
  arrow(['cancelling'], 'remote_cancelled', 'cancelled', ['cancelled_observation'], 'remote', 'M1, M2, X2'),
  arrow(
    ['cancelling'],
    'cancel_deadline_reached',
    'cancellation_unconfirmed',
    ['cancel_deadline_passed'],
    'local',
    'X3',
  ),
  arrow(ESCALATABLE, 'escalate', 'escalated', ['escalation'], 'local', 'E1'),
  arrow(['escalated'], 'decide', 'observing', ['decision'], 'local', 'A2'),
  arrow(['escalated'], 'decide', 'cancel_requested', ['decision'], 'local', 'A1, X1'),
  arrow(['escalated'], 'decide', 'closed', ['decision'], 'local', 'A2'),
  arrow(['escalated'], 'decide', 'cancelling', ['decision'], 'local', 'A2, X3'),
  arrow(['escalated'], 'decide', 'result_collecting', ['decision'], 'local', 'A1, R5'),
  arrow(['escalated'], 'decide', 'reconciliation', ['decision'], 'local', 'U2, I3'),
];

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

type Refusal = Extract<TransitionResult, { kind: 'refused' }>;

function refusal(code: Refusal['code'], message: string, missingEvidence: EvidenceKind[] = []): Refusal {
  return { kind: 'refused', code, missingEvidence, message };
}

/** The arrow `event` takes from the record's state (for `decide`, the one its option leads to), or why none. */
function arrowFor(record: OperationRecord, event: OperationEvent): { kind: 'arrow'; rule: TransitionRule } | Refusal {
  const from = record.localState;
  if (FINAL_STATES.includes(from))
    return refusal('ASYNCJOB_ERR_OPERATION_FINAL', `the operation is ${from}, a final state`);
  const candidates = TRANSITIONS.filter((rule) => rule.event === event.type && rule.from.includes(from));
  const target = event.type === 'decide' ? targetOf(record, event.decision) : undefined;
  const rule = event.type === 'decide' ? candidates.find((candidate) => candidate.to === target) : candidates[0];
  if (rule !== undefined) return { kind: 'arrow', rule };
  if (event.type === 'decide' && candidates.length > 0)
    return refusal('ASYNCJOB_ERR_MISSING_EVIDENCE', 'decide: the decision leads to no state change', ['decision']);
  return refusal('ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED', `no transition from ${from} on ${event.type}`);
}

/** What no single piece of evidence can refuse: a second cancel (X3), a second job for one token (U3). */
function conflictOf(record: OperationRecord, event: OperationEvent): Refusal | undefined {
  if (event.type === 'cancel_requested' && record.cancel?.sentAtMs !== undefined)
    return refusal(
      'ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED',
      'a cancel was already sent for this operation (X3: never cancel twice)',
    );
  if (event.type !== 'create_accepted' && event.type !== 'reconciliation_matched') return undefined;
  const newId = event.observation.remoteJobId;
  const others = record.remote.jobIds.filter((id) => id !== newId);
  if (newId === undefined || others.length === 0) return undefined;
  return refusal(
    'ASYNCJOB_ERR_JOB_ID_CONFLICT',
    `job ID ${newId} differs from ${others.join(', ')} already reported for this operation (U3): escalate job_id_conflict`,
  );
}

/** The record moved along `rule` by `event` at `nowMs`, with what the event's evidence changes (A2, M2, X1). */
function applyEffects(
  record: OperationRecord,
  rule: TransitionRule,
  event: OperationEvent,
  nowMs: number,
): OperationRecord {
  const observation = observationOf(event);
  // The evidence is a provider answer: its facts are the provider's (M2), recorded as recordObservation would.
  const next: OperationRecord = {
    ...record,
    localState: rule.to,
    ...(observation !== undefined && rule.fact === 'remote'
      ? { remote: applyRemoteFacts(record.remote, observation) }
      : {}),
  };
  switch (event.type) {
    case 'create_accepted':
    case 'reconciliation_matched':
    case 'create_succeeded_sync': {
      // A provider that names jobs only by their poll URL gives no ID (V1): the poll URL, in `remote`, is the job.
      const jobId = event.observation.remoteJobId;
      return { ...next, acceptedAtMs: nowMs, ...(jobId !== undefined ? { jobId } : {}) };
    }
    case 'result_validated':
      return event.result !== undefined ? { ...next, result: event.result } : next;
    case 'result_invalid':
      return { ...next, result: event.result };
    case 'cancel_requested':
      return {
        ...next,
        cancel: { ...event.cancelIntent, requestedAtMs: nowMs },
        deadlines: { ...record.deadlines, cancelDeadlineMs: nowMs + record.policy.cancelDeadlineMs },
        schedule: {},
      };
    case 'cancel_sent':
      return record.cancel === null ? next : { ...next, cancel: { ...record.cancel, sentAtMs: nowMs } };
    case 'variables_refused':
      return { ...next, refusal: { code: 'ASYNCJOB_ERR_INVALID_VARIABLE', issues: [...event.issues] }, schedule: {} };
    case 'escalate':
      return { ...next, escalation: event.escalation, schedule: {} };
    case 'decide':
      return decisionEffects(record, next, rule.to, event.decision, nowMs);
    default:
      return next;
  }
}

/** The journal entry of a transition (M3): from, to, cause, evidence, job ID and reason. */
function recordedTransition(
  sequence: number,
  from: LocalState,
  applied: OperationRecord,
  event: OperationEvent,
  nowMs: number,
): RecordedTransition {
  const reason = event.reason?.slice(0, 2000) ?? (event.type === 'escalate' ? event.escalation.reason : undefined);
  return {
    sequence,
    atMs: nowMs,
    actor: event.actor,
    body: {
      kind: 'transition',
      from,
      to: applied.localState,
      cause: (event.cause ?? event.type).slice(0, 100),
      ...(event.evidenceSequence !== undefined ? { evidenceSequence: event.evidenceSequence } : {}),
      ...(applied.jobId !== undefined ? { remoteJobId: applied.jobId } : {}),
      ...(reason !== undefined ? { reason } : {}),
    },
  };
}

/**
 * Applies `event` at `nowMs` (M1): finds the arrow from the record's state for the event (for `decide`, the
 * target follows from the chosen option), checks what its evidence says, and returns the new record with the
 * transition appended to the bounded tail at `journal.nextSequence` (M3), or a refusal naming the missing
 * evidence. Pure and safe to repeat: the input record is not modified.
 */
export function transition(record: OperationRecord, event: OperationEvent, nowMs: number): TransitionResult {
  const found = arrowFor(record, event);
  if (found.kind === 'refused') return found;
  const { rule } = found;
  const missing = evidenceMissing(rule, record, event, nowMs);
  if (missing.length > 0) {
    const arrowText = `${record.localState} -> ${rule.to} on ${event.type}`;
    return refusal(
      'ASYNCJOB_ERR_MISSING_EVIDENCE',
      `${arrowText} needs evidence: ${missing.join(', ')} (${rule.rule})`,
      missing,
    );
  }
  const conflict = conflictOf(record, event);
  if (conflict !== undefined) return conflict;
  const sequence = record.journal.nextSequence;
  const applied = applyEffects(record, rule, event, nowMs);
  const recorded = recordedTransition(sequence, record.localState, applied, event, nowMs);
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
