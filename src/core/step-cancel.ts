/**
 * Cancel steps (X1-X3): the cancel intent and the answer to the one cancel call.
 */
import { type Observation } from './observation';
import { type OperationRecord } from './operation';
import { refusalText } from './status-verdict';
import { transition } from './transitions';
import { type StepContext, type StepResult, type StepRefusal, Builder, is2xx } from './step-draft';

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

/**
 * After the single cancel call (X1-X3): an answer (2xx, or 409 "already final") moves to `cancelling` and the
 * status loop goes on until the provider says how it ended; a call that may have arrived is never repeated; a
 * 501 or 405 (`cancel_unsupported`) is the provider saying it does not support cancel for this job: escalated
 * as such, never retried.
 */
export function afterCancel(record: OperationRecord, observation: Observation, ctx: StepContext): StepResult {
  const draft = new Builder(record, record);
  const sequence = draft.observe(observation, ctx, {});
  draft.callSequence = sequence;
  const cause = `cancel_response:${sequence}`;
  const status = observation.httpStatus ?? 0;
  const cancel = draft.record.cancel;
  if (
    observation.transport !== 'not_sent' &&
    observation.transport !== 'refused' &&
    cancel !== null &&
    cancel.sentAtMs === undefined
  ) {
    // X3: the one cancel call reached the provider, whatever it answered: it is never offered or sent again.
    draft.record = { ...draft.record, cancel: { ...cancel, sentAtMs: ctx.nowMs } };
  }
  if ((is2xx(observation) && observation.parseProblem === undefined) || status === 409) {
    draft.apply([{ type: 'cancel_sent', actor: ctx.actor, cause, evidenceSequence: sequence, observation }], ctx);
    if (draft.record.localState === 'cancelling') {
      const { policy, used } = draft.record;
      // A 409 that states the job's final view is confirmed by a status read at once (M1: the cancel answer is not one).
      const finalView =
        status === 409 &&
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
  } else if (status === 401 || status === 403) {
    draft.escalate(
      'authorization_denied',
      `HTTP ${status} on cancel; no retry with the same credential (H4)`,
      ctx,
      cause,
    );
  } else if (observation.transport === 'refused') {
    // Refused by us before sending (another origin, no credential): nothing reached the provider, so a human may still authorise the call.
    draft.escalate('provider_failure', `the cancel ${refusalText(observation)}`, ctx, cause);
  } else if (observation.transport === 'not_sent') {
    // Nothing reached the provider: one more attempt is still "the" cancel call (X1). It counts as a transport
    // failure (S5), so the attempts are bounded by the budget as well as by the cancel deadline.
    const used = { ...draft.record.used, transportFailures: draft.record.used.transportFailures + 1 };
    draft.record = {
      ...draft.record,
      used,
      schedule: { nextPollAtMs: ctx.nowMs + draft.record.policy.baseDelayMs, delaySource: 'local_backoff' },
    };
    if (used.transportFailures >= draft.record.budgets.maxTransportFailures) {
      const detail = `the cancel request could not be sent ${used.transportFailures} times (${observation.errorCategory ?? 'not sent'}) (S5)`;
      draft.escalate('provider_failure', detail, ctx, cause);
    } else if (ctx.nowMs >= (draft.record.deadlines.cancelDeadlineMs ?? Number.POSITIVE_INFINITY)) {
      // Nothing was sent, so nothing is unconfirmed: a human may authorise the one cancel call again (A1).
      draft.escalate(
        'provider_failure',
        `the cancel request could not be sent before the cancel deadline (${observation.errorCategory ?? 'not sent'}) (X3)`,
        ctx,
        cause,
      );
    }
  } else if (observation.errorCategory === 'cancel_unsupported') {
    // A definite refusal (HTTP 501 or 405): the job goes on; asking again would get the same answer (X1, X3).
    draft.escalate(
      'cancellation_unconfirmed',
      `the provider does not support cancel for this job: it answered HTTP ${status} to the cancel request, which is not retried; the job goes on until the provider reports its end (X1)`,
      ctx,
      cause,
    );
  } else {
    // It may have arrived (or its answer is unreadable): never send it again (X3); a human decides with the request history at hand.
    draft.escalate(
      'cancellation_unconfirmed',
      `the cancel request got no usable answer (${observation.errorCategory ?? `HTTP ${status}`}); it is not repeated (X3)`,
      ctx,
      cause,
    );
  }
  return draft.result();
}
