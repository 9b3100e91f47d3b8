/**
 * The step after an activity of ours failed (B2, S5, U1, R5, X3): planned again or escalated, never retried blindly.
 */
import { reactionTo } from './answer-policy';
import { type ErrorCode } from './codes';
import { actionSchema, type Action } from './journal';
import { type Observation } from './observation';
import { type OperationRecord } from './operation';
import { type StepContext, type StepResult, Builder } from './step-draft';
import { enterReconciliation } from './step-create';

/**
 * What a failed activity sent: `maybe` (it may have reached the provider: a worker lost, a timeout, a failure
 * after the write) or `nothing` (the activity failed before any request was written, which it reports itself:
 * `NOTHING_SENT_FAILURE_TYPE`).
 */
export type FailedCallSent = 'maybe' | 'nothing';

/** The failure type of a provider-call activity that failed before writing any request: nothing was sent. */
export const NOTHING_SENT_FAILURE_TYPE: ErrorCode = 'ASYNCJOB_ERR_NOTHING_SENT';

/**
 * Journals the failed call as an observation with `errorCategory: 'activity_failed'` and the decision taken (T3):
 * `ambiguous` when it may have reached the provider, `not_sent` when it provably did not. Nothing was heard from
 * the provider, so its facts are unchanged (M2). Returns undefined, journalling nothing, for an action the journal
 * does not know.
 */
function noteFailedCall(
  draft: Builder,
  action: Action | undefined,
  signal: 'not_sent' | 'ambiguous',
  detail: string,
  ctx: StepContext,
  decision: string,
  nextPollAtMs?: number,
): { observation: Observation; sequence: number } | undefined {
  if (action === undefined) return undefined;
  const observation: Observation = {
    action,
    transport: signal,
    signal,
    receivedAtMs: ctx.nowMs,
    errorCategory: 'activity_failed',
  };
  const remote = draft.record.remote;
  const sequence = draft.observe(observation, ctx, {
    decision,
    note: detail,
    ...(nextPollAtMs !== undefined ? { nextPollAtMs, delaySource: 'local_backoff' as const } : {}),
  });
  draft.record = { ...draft.record, remote };
  return { observation, sequence };
}

/**
 * An outside-call activity failed for a reason of ours (worker lost, timeout, bug, the store unreachable), so
 * nothing was observed: the reservation stays counted (B2: an unused reservation beats an invisible request), the
 * failure counts against the transport-failure budget, is journalled as an observation with `errorCategory:
 * 'activity_failed'` (T3), and the call is planned again after a backoff, or automation stops when the budget is
 * spent (S5). What a call that may have reached the provider does next is the answer policy's `ambiguous` row: a
 * create goes to reconciliation (U1, U2), a cancel escalates `cancellation_unconfirmed` (X3), a collect that is
 * not safe to repeat escalates (R5). A call the activity never wrote (`sent: 'nothing'`) is its `not_sent` row:
 * sent again, as a connection refused is.
 */
export function afterActivityFailure(
  record: OperationRecord,
  action: string,
  message: string,
  ctx: StepContext,
  sent: FailedCallSent = 'maybe',
): StepResult {
  const used = {
    ...record.used,
    transportFailures: record.used.transportFailures + 1,
    backoffAttempt: record.used.backoffAttempt + 1,
  };
  const draft = new Builder(record, { ...record, used, schedule: {} });
  const cause = `${action.slice(0, 60)}_activity_failed`;
  const before = sent === 'nothing' ? ' before sending anything' : '';
  const detail = `the ${action.slice(0, 60)} activity failed${before} (${used.transportFailures} transport failures of ${record.budgets.maxTransportFailures}); last: ${message.slice(0, 500)}`;
  const known = actionSchema.safeParse(action);
  const call = known.success ? known.data : undefined;
  // The answer policy's row for an exchange that may have happened (ambiguous), or that certainly did not.
  const signal = sent === 'nothing' ? 'not_sent' : 'ambiguous';
  const note = (decision: string, nextPollAtMs?: number) =>
    noteFailedCall(draft, call, signal, detail, ctx, decision, nextPollAtMs);
  const reaction = call !== undefined && call !== 'webhook' ? reactionTo(call, signal) : undefined;
  if (reaction?.kind === 'reconcile' && record.localState === 'create_pending') {
    // U1: the create may have been sent before the activity failed: the same ambiguity as a lost answer.
    const noted = note('reconcile');
    if (noted !== undefined) enterReconciliation(draft, noted.observation, noted.sequence, ctx);
    return draft.result();
  }
  if (
    reaction?.kind === 'retry' &&
    reaction.onlyIfRepeatable === true &&
    !ctx.capabilities.repeatableCollect &&
    (record.localState === 'result_collecting' || record.localState === 'cancelling')
  ) {
    // R5: collecting again is not known to be safe; a human decides.
    const noted = note('escalate');
    if (noted !== undefined && record.localState === 'result_collecting') {
      const { observation, sequence } = noted;
      const reason = `${detail} (R4, R5)`;
      const unavailable = { type: 'result_unavailable' as const, actor: ctx.actor, cause, observation, reason };
      draft.apply([{ ...unavailable, evidenceSequence: sequence }], ctx);
    }
    draft.escalate('provider_failure', `${detail}; collecting is not safe to repeat (R5)`, ctx, cause);
    return draft.result();
  }
  if (reaction?.kind === 'escalate' && record.localState === 'cancel_requested' && record.cancel !== null) {
    // X3: the one cancel call may have arrived; it is never sent again. A human decides with the history at hand.
    note('escalate');
    draft.record = { ...draft.record, cancel: { ...record.cancel, sentAtMs: ctx.nowMs } };
    const detailSent = `${detail}; the cancel request may have arrived and is not repeated (X3)`;
    draft.escalate(reaction.reason, detailSent, ctx, cause);
    return draft.result();
  }
  if (used.transportFailures >= record.budgets.maxTransportFailures) {
    note('escalate');
    draft.escalate('provider_failure', `${detail} (S5)`, ctx, cause);
    return draft.result();
  }
  const delayMs = Math.min(
    record.policy.maxDelayMs,
    record.policy.baseDelayMs * 2 ** Math.min(record.used.backoffAttempt, 30),
  );
  note('retry', ctx.nowMs + delayMs);
  draft.record = { ...draft.record, schedule: { nextPollAtMs: ctx.nowMs + delayMs, delaySource: 'local_backoff' } };
  return draft.result();
}
