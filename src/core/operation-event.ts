/**
 * The events of the state machine (M1): one member per kind of cause, each carrying exactly the evidence its
 * arrow needs, so building an event without its evidence does not compile (`{ type: 'escalate' }` without its
 * escalation, `{ type: 'cancel_requested' }` without the cancel intent). What the evidence says (a provider's
 * answer, a person's words, the time) is data the compiler cannot see: `evidenceMissing` checks that when the
 * event is applied. Pure.
 */
import { type Decision, type OpenEscalation } from './escalation';
import { type Observation } from './observation';
import { type VariableIssue } from './operation-variables';
import { type ResultSummary } from './operation';

/** What every event carries besides its evidence. */
interface EventFrame {
  /** Who caused it: `workflow`, `worker:<host>`, a human. */
  actor: string;
  /** The triggering request/response, e.g. `status_response:seq-14` (M3). Defaults to the event type. */
  cause?: string;
  /** Why, in words, recorded with the transition (shortened to 2000 characters). */
  reason?: string;
  /** The journal sequence of the evidence observation, when recorded. */
  evidenceSequence?: number;
}

/** A provider answer as evidence: the observation of the outside call that caused the event. */
type AnsweredEvent<Type extends string> = EventFrame & { type: Type; observation: Observation };

/** Who asks to cancel, why, and what they expect to happen (X1). */
interface CancelIntent {
  requestedBy: string;
  reason: string;
  expectedEffect: string;
}

/** An event with its evidence; the arrows it may take are in `TRANSITIONS`. */
export type OperationEvent =
  /** C2: the create answer names the job. */
  | AnsweredEvent<'create_accepted'>
  /** C3, V4: the create (or its repetition) answered with the finished job and its result. */
  | AnsweredEvent<'create_succeeded_sync'>
  /** U1: the create may have arrived; its answer proves nothing. */
  | AnsweredEvent<'create_ambiguous'>
  /** U2: reconciliation starts, by the adapter's method. */
  | (EventFrame & {
      type: 'reconciliation_started';
      reconcileMethod: 'same_token_resend' | 'client_reference_lookup' | 'operation_id_lookup' | 'job_lookup';
    })
  /** U2: a reconciliation answer names our job. */
  | AnsweredEvent<'reconciliation_matched'>
  /** U2: a reconciliation answer says there is no job, after the create deadline. */
  | AnsweredEvent<'reconciliation_no_job'>
  /** P1: the first status answer after acceptance. */
  | AnsweredEvent<'status_observed'>
  /** P7, P9: a status answer reports success with its result reference. */
  | AnsweredEvent<'remote_succeeded'>
  /**
   * S1, R4: the collected result passed validation. Without `result`, the result on record that a person
   * accepted (A1); without `observation`, the success answer on record.
   */
  | (EventFrame & { type: 'result_validated'; result?: ResultSummary; observation?: Observation })
  /** R4: collecting the result failed. */
  | AnsweredEvent<'result_unavailable'>
  /** R4: the collected result failed validation. */
  | (EventFrame & { type: 'result_invalid'; result: ResultSummary })
  /** S2, X2: a status answer reports failure or expiry. */
  | AnsweredEvent<'remote_failed'>
  /** S3: the result deadline has passed (the time is the evidence). */
  | (EventFrame & { type: 'deadline_reached' })
  /** X1, M2: our intent to cancel, recorded before the one cancel call. */
  | (EventFrame & { type: 'cancel_requested'; cancelIntent: CancelIntent })
  /** X1: the provider answered the one cancel call. */
  | AnsweredEvent<'cancel_sent'>
  /** M1, M2, X2: a status answer reports the job cancelled: the provider's word, not ours. */
  | AnsweredEvent<'remote_cancelled'>
  /** X3: the cancel deadline has passed (the time is the evidence). */
  | (EventFrame & { type: 'cancel_deadline_reached' })
  /** C5: the operation variables do not fit the adapter's declarations; nothing was sent. */
  | (EventFrame & { type: 'variables_refused'; issues: readonly VariableIssue[] })
  /** E1: automation stops and a person decides. */
  | (EventFrame & { type: 'escalate'; escalation: OpenEscalation })
  /** A1, A2: a person's decision on the open escalation. */
  | (EventFrame & { type: 'decide'; decision: Decision });

/** Event types: one per kind of cause. */
export type EventType = OperationEvent['type'];

/** The event of one type, e.g. `EventOf<'decide'>`. */
export type EventOf<Type extends EventType> = Extract<OperationEvent, { type: Type }>;

/** The provider answer an event carries as its evidence, if any. */
export function observationOf(event: OperationEvent): Observation | undefined {
  return 'observation' in event ? event.observation : undefined;
}
