/**
 * The step after an activity of ours failed (B2, S5, U1, R5, X3): planned again or escalated, never retried blindly.
 */
import { actionSchema } from './journal';
import { type Observation } from './observation';
import { type OperationRecord } from './operation';
import { type StepContext, type StepResult, Builder } from './step-draft';
import { enterReconciliation } from './step-create';

/**
 * An outside-call activity failed for a reason of ours (worker lost, timeout, bug), so nothing was observed:
 * the reservation stays counted (B2: an unused reservation beats an invisible request), the failure counts
 * against the transport-failure budget, is journalled as an observation with `errorCategory: 'activity_failed'`
 * (T3), and the call is planned again after a backoff, or automation stops when the budget is spent (S5). A
 * call that may have reached the provider and must not be repeated blindly is not planned again: a create goes
 * to reconciliation (U1, U2), a cancel escalates `cancellation_unconfirmed` (X3), a collect that is not safe to
 * repeat escalates (R5).
 */
export function afterActivityFailure(
  record: OperationRecord,
  action: string,
  message: string,
  ctx: StepContext,
): StepResult {
  const used = {
    ...record.used,
    transportFailures: record.used.transportFailures + 1,
    backoffAttempt: record.used.backoffAttempt + 1,
  };
  const b = new Builder(record, { ...record, used, schedule: {} });
  const cause = `${action.slice(0, 60)}_activity_failed`;
  const detail = `the ${action.slice(0, 60)} activity failed (${used.transportFailures} transport failures of ${record.budgets.maxTransportFailures}); last: ${message.slice(0, 500)}`;
  // T3: the failed call is explained in the journal too (it may or may not have reached the provider).
  const known = actionSchema.safeParse(action);
  const note = (
    decision: string,
    nextPollAtMs?: number,
  ): { observation: Observation; sequence: number } | undefined => {
    if (!known.success) return undefined;
    const observation: Observation = {
      action: known.data,
      transport: 'ambiguous',
      receivedAtMs: ctx.nowMs,
      errorCategory: 'activity_failed',
    };
    const sequence = b.observe(observation, ctx, {
      decision,
      note: detail,
      ...(nextPollAtMs !== undefined ? { nextPollAtMs, delaySource: 'local_backoff' as const } : {}),
    });
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
  if (
    action === 'collect' &&
    !ctx.capabilities.repeatableCollect &&
    (record.localState === 'result_collecting' || record.localState === 'cancelling')
  ) {
    // R5: collecting again is not known to be safe; a human decides.
    const noted = note('escalate');
    if (noted !== undefined && record.localState === 'result_collecting') {
      b.apply(
        [
          {
            type: 'result_unavailable',
            actor: ctx.actor,
            cause,
            evidenceSequence: noted.sequence,
            observation: noted.observation,
            reason: `${detail} (R4, R5)`,
          },
        ],
        ctx,
      );
    }
    b.escalate('provider_failure', `${detail}; collecting is not safe to repeat (R5)`, ctx, cause);
    return b.result();
  }
  if (action === 'cancel' && record.localState === 'cancel_requested' && record.cancel !== null) {
    // X3: the one cancel call may have arrived; it is never sent again. A human decides with the history at hand.
    note('escalate');
    b.record = { ...b.record, cancel: { ...record.cancel, sentAtMs: ctx.nowMs } };
    b.escalate(
      'cancellation_unconfirmed',
      `${detail}; the cancel request may have arrived and is not repeated (X3)`,
      ctx,
      cause,
    );
    return b.result();
  }
  if (used.transportFailures >= record.budgets.maxTransportFailures) {
    note('escalate');
    b.escalate('provider_failure', `${detail} (S5)`, ctx, cause);
    return b.result();
  }
  const delayMs = Math.min(
    record.policy.maxDelayMs,
    record.policy.baseDelayMs * 2 ** Math.min(record.used.backoffAttempt, 30),
  );
  note('retry', ctx.nowMs + delayMs);
  b.record = { ...b.record, schedule: { nextPollAtMs: ctx.nowMs + delayMs, delaySource: 'local_backoff' } };
  return b.result();
}
