/**
 * Cancel steps (X1-X3): the cancel intent and the answer to the one cancel call.
 */
import { type Observation } from './observation';
import { type OperationRecord } from './operation';
import { answerText, rateLimitedInARow } from './answer-policy';
import { openAnswerStep, type AnswerStep } from './step-answer';
import { refusalText } from './status-verdict';
import { effectiveDeadlineMs } from './wait-planner';
import { planWait } from './wait-time';
import { transition } from './transitions';
import { type StepContext, type StepResult, type StepRefusal, Builder } from './step-draft';

/** States in which the provider may not have the job yet, but may still get it: create pending or unknown, reconciliation. */
const JOB_NOT_YET_KNOWN: ReadonlySet<string> = new Set(['create_pending', 'create_unknown', 'reconciliation']);

/**
 * X5: true when a cancel that `requestCancel` refused for `record` is held until the provider has the job, not
 * refused: it was refused only because no job is known yet, and one may still be. Pure.
 */
export function cancelWaitsForJob(record: OperationRecord, refusal: StepRefusal): boolean {
  return refusal.code === 'ASYNCJOB_ERR_CANCEL_NOT_ALLOWED' && JOB_NOT_YET_KNOWN.has(record.localState);
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
  if (!ctx.capabilities.cancel)
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_CANCEL_UNSUPPORTED',
      message: `provider ${record.provider} has no cancel endpoint`,
    };
  const polling = record.localState === 'accepted' || record.localState === 'observing';
  // An earlier intent whose call never left (and was given up by a decision) does not block a new one; a sent one does (X3).
  if (record.cancel !== null && (record.cancel.sentAtMs !== undefined || !polling)) {
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_CANCEL_ALREADY_REQUESTED',
      message: `cancel already requested by ${record.cancel.requestedBy} (X3)`,
    };
  }
  if (!polling) {
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_CANCEL_NOT_ALLOWED',
      message: `an operation in state ${record.localState} cannot be cancelled`,
    };
  }
  const draft = new Builder(record, record);
  const cancelIntent = {
    requestedBy: intent.requestedBy,
    reason: intent.reason,
    expectedEffect: intent.expectedEffect ?? 'the provider stops the job',
  };
  const reason = `${cancelIntent.reason}; expected effect: ${cancelIntent.expectedEffect}`;
  const result = transition(
    record,
    { type: 'cancel_requested', actor: intent.requestedBy, cause: 'cancel_request', cancelIntent, reason },
    ctx.nowMs,
  );
  if (result.kind === 'refused') return { kind: 'refused', code: result.code, message: result.message };
  draft.record = result.record;
  return draft.result();
}

/** The detail of a cancel answer that stops automation (X1, X3, H4). */
function cancelStopDetail(observation: Observation): string {
  const what = answerText(observation);
  switch (observation.signal) {
    case 'auth_denied':
      return `${what} on cancel; no retry with the same credential (H4)`;
    case 'refused':
    case 'no_credential':
      return `the cancel ${refusalText(observation)}`;
    case 'unsupported':
      // A definite refusal: the job goes on; asking again would get the same answer (X1, X3).
      return `the provider does not support cancel for this job: it answered ${what} to the cancel request, which is not retried; the job goes on until the provider reports its end (X1)`;
    default:
      // It may have arrived (or its answer is unreadable): never send it again (X3); a human decides with the
      // request history at hand.
      return `the cancel request got no usable answer (${observation.errorCategory ?? what}); it is not repeated (X3)`;
  }
}

/** The provider accepted the one cancel call, or said the job is already final (409): poll until it says how it ended (X2). */
function cancelAnswered(draft: Builder, observation: Observation, ctx: StepContext, sequence: number): void {
  const cause = `cancel_response:${sequence}`;
  draft.apply([{ type: 'cancel_sent', actor: ctx.actor, cause, evidenceSequence: sequence, observation }], ctx);
  if (draft.record.localState !== 'cancelling') return;
  const { policy, used } = draft.record;
  // A 409 that states the job's final view is confirmed by a status read at once (M1: the cancel answer is not one).
  const finalView =
    observation.signal === 'conflict' &&
    observation.category !== undefined &&
    observation.category !== 'pending' &&
    observation.category !== 'unknown';
  const delayMs = finalView ? 0 : Math.min(policy.baseDelayMs, 1000);
  draft.record = {
    ...draft.record,
    used: { ...used, backoffAttempt: 0 },
    schedule: { nextPollAtMs: ctx.nowMs + delayMs, delaySource: 'local_backoff' },
  };
}

/**
 * A cancel call that certainly did not take effect (never sent, 429, 503): the intent stays unsent and the one
 * cancel call is made again after a backoff (Retry-After a minimum, H1), inside its budget and the cancel deadline
 * (X1, X3, S5). Nothing is unconfirmed, so when it stops a human may still authorise the call (A1).
 */
function retryCancel({ draft, spent, frame }: AnswerStep, observation: Observation, ctx: StepContext): void {
  const { cause } = frame;
  const what = observation.errorCategory ?? answerText(observation);
  if (spent !== undefined) {
    draft.escalate(spent.reason, `the cancel request could not be made (${what}): ${spent.detail}`, ctx, cause);
    return;
  }
  const { record } = draft;
  const plan = planWait(
    {
      observation,
      policy: record.policy,
      deadlineMs: record.deadlines.cancelDeadlineMs ?? effectiveDeadlineMs(record),
      backoffAttempt: record.used.backoffAttempt,
      rateLimitedInARow: rateLimitedInARow(record.used, observation.signal),
    },
    ctx,
  );
  if (plan.kind !== 'poll') {
    const detail = `the cancel request could not be made before the cancel deadline (${what}) (X3)`;
    draft.escalate('provider_failure', detail, ctx, cause);
    return;
  }
  draft.record = {
    ...record,
    used: { ...record.used, backoffAttempt: record.used.backoffAttempt + 1 },
    schedule: { nextPollAtMs: plan.atMs, delaySource: plan.source },
  };
}

/**
 * After the single cancel call (X1-X3), as the answer policy's cancel row says: an acceptance (or 409 "already
 * final") moves to `cancelling` and the status loop goes on until the provider says how it ended; a call that
 * certainly did not take effect is made again; any other answer marks the call sent (it is never repeated) and
 * stops for a human.
 */
export function afterCancel(record: OperationRecord, observation: Observation, ctx: StepContext): StepResult {
  const step = openAnswerStep(record, 'cancel', observation, ctx);
  const { draft, sequence, frame, reaction } = step;
  const { cause } = frame;
  const cancel = draft.record.cancel;
  if (
    reaction.kind !== 'retry' &&
    observation.transport !== 'refused' &&
    cancel !== null &&
    cancel.sentAtMs === undefined
  ) {
    // X3: the one cancel call reached the provider, whatever it answered: it is never offered or sent again.
    draft.record = { ...draft.record, cancel: { ...cancel, sentAtMs: ctx.nowMs } };
  }
  if (reaction.kind === 'read') cancelAnswered(draft, observation, ctx, sequence);
  else if (reaction.kind === 'retry') retryCancel(step, observation, ctx);
  else {
    const reason = reaction.kind === 'escalate' ? reaction.reason : 'cancellation_unconfirmed';
    draft.escalate(reason, cancelStopDetail(observation), ctx, cause);
  }
  return draft.result();
}
