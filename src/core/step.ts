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
export {
  type ReconciliationMethod,
  type StepContext,
  type StepEntry,
  type StepResult,
  type StepRefusal,
  isRefusal,
} from './step-draft';
export { afterCreate, afterReconcile, reserveCreateAttempt, stopAtCreateDeadline } from './step-create';
export { onWake, afterStatus, applyWebhookHint } from './step-poll';
export { requestCancel, afterCancel, cancelWaitsForJob } from './step-cancel';
export { type CollectOutcome, afterCollect } from './step-collect';
export { applyDecision, recordRejectedDecision, decisionDeadlinePassed } from './step-decide';
export { afterActivityFailure, type FailedCallSent, NOTHING_SENT_FAILURE_TYPE } from './step-failure';
export { extensionRequestSchema, requestExtension } from './step-extension';
export { type Command, nextCommand, operationSummary } from './step-next';
