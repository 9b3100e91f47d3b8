/**
 * What the evidence of an event says, checked when the event is applied (M1): what makes a create answer an
 * acceptance, a status answer a success or failure, a decision valid. That an event carries its evidence at
 * all is the compiler's check (`OperationEvent`); what is left here is data the compiler cannot see: what a
 * provider answered (observations), what a person or caller wrote (cancel intent, decision), what a
 * validation found (result summaries), the bounds of an escalation's text, and the time. Pure.
 */
import { reactionTo, type ProviderCall, type Reaction } from './answer-policy';
import { type Decision, openEscalationSchema, validateDecision, decisionTarget } from './escalation';
import { type LocalState, actorSchema } from './journal';
import { locatesResult, namesJob, type Observation } from './observation';
import { type OperationEvent, observationOf } from './operation-event';
import { type OperationRecord } from './operation';
import { type EvidenceKind, type TransitionRule } from './transitions';

/** What one evidence check looks at. */
interface EvidenceFacts {
  record: OperationRecord;
  event: OperationEvent;
  /** The provider answer the event carries, if any. */
  observation: Observation | undefined;
  /** Epoch ms. */
  nowMs: number;
  /** The state the arrow leads to. */
  to: LocalState;
}

/** Evidence the compiler checks in full: a typed field of its event with nothing outside data could get wrong. */
type TypedEvidence = 'reconcile_method';

/** A readable 2xx answer (the signal `ok`). */
const is2xx = (observation: Observation | undefined): observation is Observation => observation?.signal === 'ok';

/** Whether the answer policy reacts to this call's answer with `kind`. */
const reacts = (observation: Observation | undefined, call: ProviderCall, kind: Reaction['kind']): boolean =>
  observation?.action === call && reactionTo(call, observation.signal).kind === kind;

/** A person or caller named, and a reason that says something (A2, X1). */
const signed = (actor: string, reason: string): boolean =>
  actorSchema.safeParse(actor).success && reason.trim().length > 0;

function successEvidence({ record, observation }: EvidenceFacts): boolean {
  if (
    is2xx(observation) &&
    (observation.action === 'status' || observation.action === 'create') &&
    observation.category === 'success' &&
    locatesResult(observation.resultReference)
  )
    return true;
  // Recorded by recordObservation from a 2xx status/create answer (M2): the same fact, seen earlier.
  return record.remote.category === 'success' && record.remote.resultReference !== undefined;
}

/** The state a decision leads to from `escalated`, or null when it changes no state. */
export function targetOf(record: OperationRecord, decision: Decision): LocalState | null {
  return decisionTarget(decision.option, record.cancel?.sentAtMs !== undefined);
}

/** One check per kind of evidence that outside data decides (see the module comment). */
const CHECKS: Record<Exclude<EvidenceKind, TypedEvidence>, (facts: EvidenceFacts) => boolean> = {
  create_answer_with_job_id: ({ observation }) =>
    is2xx(observation) && observation.action === 'create' && namesJob(observation),
  // The create's own answer, or the answer to repeating it (same token, or an idempotent PUT/DELETE, V4).
  sync_success: ({ observation }) =>
    is2xx(observation) &&
    (observation.action === 'create' || observation.action === 'reconcile') &&
    observation.category === 'success' &&
    locatesResult(observation.resultReference),
  ambiguous_create: ({ observation }) => reacts(observation, 'create', 'reconcile'),
  reconciliation_match: ({ observation }) =>
    is2xx(observation) && observation.action === 'reconcile' && namesJob(observation),
  reconciliation_no_job: ({ observation, record, nowMs }) =>
    observation?.action === 'reconcile' &&
    (reacts(observation, 'reconcile', 'no_job') || (is2xx(observation) && !namesJob(observation))) &&
    nowMs >= record.deadlines.createDeadlineMs,
  status_answer: ({ observation }) =>
    is2xx(observation) && observation.action === 'status' && observation.category !== undefined,
  success_observation: successEvidence,
  validated_result: ({ event, record }) =>
    event.type === 'result_validated' &&
    (event.result?.validation === 'valid' || (event.result === undefined && record.result?.acceptedBy !== undefined)),
  // A provider's own "cancelled" with no cancel of ours is its failure to finish the job (provider_cancelled).
  failure_observation: ({ observation, record }) =>
    is2xx(observation) &&
    observation.action === 'status' &&
    (observation.category === 'failure' ||
      observation.category === 'expired' ||
      (observation.category === 'cancelled' && record.cancel === null)),
  cancelled_observation: ({ observation }) =>
    is2xx(observation) && observation.action === 'status' && observation.category === 'cancelled',
  cancel_intent: ({ event }) =>
    event.type === 'cancel_requested' &&
    signed(event.cancelIntent.requestedBy, event.cancelIntent.reason) &&
    event.cancelIntent.expectedEffect.trim().length > 0,
  // The provider answered the one cancel call: accepted (2xx) or already final (409); polling tells how it ended (X2).
  cancel_answer: ({ observation }) => reacts(observation, 'cancel', 'read'),
  result_deadline_passed: ({ record, nowMs }) => nowMs >= record.deadlines.resultDeadlineMs,
  cancel_deadline_passed: ({ record, nowMs }) =>
    record.deadlines.cancelDeadlineMs !== undefined && nowMs >= record.deadlines.cancelDeadlineMs,
  collect_failure: ({ observation }) => observation?.action === 'collect' && !is2xx(observation),
  invalid_result: ({ event }) => event.type === 'result_invalid' && event.result.validation === 'invalid',
  // Refused before anything reached the provider: no create request was ever reserved.
  variable_issues: ({ event, record }) =>
    event.type === 'variables_refused' && event.issues.length > 0 && record.used.createAttempts === 0,
  // The escalation's text carries provider words (state, error) whose bounds its type does not state.
  escalation: ({ event }) => event.type === 'escalate' && openEscalationSchema.safeParse(event.escalation).success,
  decision: ({ event, record, nowMs, to }) =>
    event.type === 'decide' &&
    record.escalation !== null &&
    validateDecision(record.escalation, event.decision, { nowMs }).kind === 'ok' &&
    targetOf(record, event.decision) === to &&
    (event.decision.option !== 'accept_result' || record.result !== null),
};

/** Returns the evidence kinds `rule` needs that `event` (with `record` and `nowMs`) does not supply, in order. */
export function evidenceMissing(
  rule: TransitionRule,
  record: OperationRecord,
  event: OperationEvent,
  nowMs: number,
): EvidenceKind[] {
  const facts: EvidenceFacts = { record, event, observation: observationOf(event), nowMs, to: rule.to };
  return rule.evidence.filter((kind) => kind !== 'reconcile_method' && !CHECKS[kind](facts));
}
