/**
 * What the main loop does with each queued message: a cancel or a decision is applied by the core's rules, or
 * refused and answered with a code (a refused decision is recorded too, A2); a webhook hint moves the next read.
 */
import { log, patched } from '@temporalio/workflow';
import {
  applyDecision,
  applyWebhookHint,
  cancelWaitsForJob,
  isRefusal,
  recordRejectedDecision,
  requestCancel,
  requestExtension,
} from '../core/step';
import type { PendingMessage } from './messages';
import type { OperationRun } from './operation-run';

/** Older histories refused a cancel that came before the job: the marker keeps them replaying as they ran (X5). */
const HELD_CANCEL_PATCH = 'asyncjob-held-cancel';

/** Older histories joined an escalation without a journal entry (D4): the marker keeps them replaying as they ran. */
const JOURNALLED_JOIN_PATCH = 'asyncjob-journalled-join';

/**
 * The cancel intent of a Temporal cancellation request. The SDK does not give the workflow the requester's
 * identity or reason: they stay in the history's WorkflowExecutionCancelRequested event, which the intent names.
 */
export const TEMPORAL_CANCEL_REQUEST = {
  requestedBy: 'temporal:request-cancellation',
  reason:
    'Request Cancellation in Temporal (Web UI, CLI or API); who asked and why: the WorkflowExecutionCancelRequested event',
  expectedEffect: 'the provider stops the job',
};

/** Handles one message taken off the inbox. */
export async function handleMessage(run: OperationRun, message: PendingMessage): Promise<void> {
  if (message.kind === 'cancel') return handleCancel(run, message);
  if (message.kind === 'decide') return handleDecision(run, message);
  if (message.kind === 'extension') return handleExtension(run, message);
  await run.commit(
    applyWebhookHint(run.record, { ...message.hint, receivedAtMs: message.receivedAtMs }, run.stepContext()),
  );
}

async function handleCancel(run: OperationRun, message: Extract<PendingMessage, { kind: 'cancel' }>): Promise<void> {
  const context = run.stepContext();
  const step = requestCancel(run.record, message.request, context);
  if (isRefusal(step) && cancelWaitsForJob(run.record, step) && patched(HELD_CANCEL_PATCH)) {
    // X5: no job yet, but there may be one: held, and applied (or refused) once the create is settled.
    run.inbox.hold(message);
    run.inbox.answer(message.id, { accepted: true, localState: run.record.localState });
    return;
  }
  if (isRefusal(step)) {
    run.inbox.answer(message.id, { accepted: false, code: step.code, message: step.message });
    log.warn('cancel refused', { code: step.code, message: step.message });
    // A refused Temporal cancellation request leaves no other trace: it is journalled, who asked and why not.
    if (message.request.requestedBy === TEMPORAL_CANCEL_REQUEST.requestedBy) {
      const attempted = { option: 'cancel', approvedBy: message.request.requestedBy, reason: message.request.reason };
      await run.commit(recordRejectedDecision(run.record, attempted, step, context));
    }
    return;
  }
  await run.commit(step);
  run.inbox.answer(message.id, { accepted: true, localState: run.record.localState });
}

async function handleDecision(run: OperationRun, message: Extract<PendingMessage, { kind: 'decide' }>): Promise<void> {
  const context = run.stepContext();
  const step = applyDecision(run.record, message.decision, context, message.transport);
  if (isRefusal(step)) {
    // A2: a refused decision is recorded too (who tried what, by which route, and why it was refused).
    const attempted = typeof message.decision === 'object' && message.decision !== null ? message.decision : {};
    await run.commit(
      recordRejectedDecision(run.record, attempted as Record<string, unknown>, step, context, message.transport),
    );
    run.inbox.answer(message.id, { accepted: false, code: step.code, message: step.message });
    return;
  }
  await run.commit(step);
  run.inbox.answer(message.id, { accepted: true, localState: run.record.localState });
}

/**
 * An extension request raises (or joins, journalled) an escalation a human answers (G2, D4); a refusal is answered,
 * not recorded.
 */
async function handleExtension(
  run: OperationRun,
  message: Extract<PendingMessage, { kind: 'extension' }>,
): Promise<void> {
  const joins = run.record.localState === 'escalated';
  const journalJoin = !joins || patched(JOURNALLED_JOIN_PATCH);
  const step = requestExtension(run.record, message.request, run.stepContext(), journalJoin);
  if (isRefusal(step)) {
    run.inbox.answer(message.id, { accepted: false, code: step.code, message: step.message });
    return;
  }
  await run.commit(step);
  run.inbox.answer(message.id, { accepted: true, localState: run.record.localState });
}
