/**
 * What the workflow does next (the command for the record now), and the summary a finished workflow returns.
 */
import { renderEscalation } from './escalation';
import { type EscalationReason } from './journal';
import { type OperationRecord, type ResultSummary } from './operation';
import { type ReconciliationMethod } from './step-draft';

/** What the workflow does next, from the record alone. */
export type Command =
  | { kind: 'finished' }
  | { kind: 'create' }
  /**
   * Reconcile an ambiguous create. Re-sending create with the same token is a create request: it reserves and
   * counts a create attempt first (B2, I3), which `reservesCreateAttempt` says.
   */
  | { kind: 'reconcile'; reservesCreateAttempt: boolean }
  | { kind: 'read_status' }
  | { kind: 'cancel' }
  | { kind: 'collect' }
  | { kind: 'wait'; untilMs: number }
  | { kind: 'await_decision'; untilMs: number };

/**
 * The next command for a record at `nowMs`, for a provider that reconciles by `reconciliation`. Pure; the workflow
 * runs it in a loop. A wait returns the instant to wake at; the workflow wakes earlier for a message. Polling states
 * go through {@link onWake} when due.
 */
export function nextCommand(
  record: OperationRecord,
  nowMs: number,
  reconciliation: ReconciliationMethod = 'none',
): Command {
  const due = (record.schedule.nextPollAtMs ?? nowMs) <= nowMs;
  const wait = (): Command => ({ kind: 'wait', untilMs: record.schedule.nextPollAtMs ?? nowMs });
  switch (record.localState) {
    case 'succeeded':
    case 'failed':
    case 'cancelled':
    case 'closed':
      return { kind: 'finished' };
    case 'escalated':
      return { kind: 'await_decision', untilMs: record.escalation?.decisionDeadlineMs ?? nowMs };
    case 'create_pending':
      return due ? { kind: 'create' } : wait();
    case 'create_unknown':
    case 'reconciliation':
      if (!due) return wait();
      return {
        kind: 'reconcile',
        reservesCreateAttempt: reconciliation === 'same_token_resend' || record.reconcileBy === 'resend',
      };
    case 'cancel_requested':
      return due ? { kind: 'cancel' } : wait();
    case 'result_collecting':
      return due ? { kind: 'collect' } : wait();
    case 'cancelling':
      // X2: a success that crossed its commit point during the cancel is collected, not ignored.
      if (record.remote.category === 'success' && record.remote.resultReference !== undefined && record.result === null)
        return due ? { kind: 'collect' } : wait();
      return due ? { kind: 'read_status' } : wait();
    case 'accepted':
    case 'observing':
      return due ? { kind: 'read_status' } : wait();
    default:
      // Transient states are always followed by an escalation within the same step; reaching one here is a bug.
      return { kind: 'await_decision', untilMs: nowMs };
  }
}

/** A compact summary for the workflow's result and the Web UI: never the result body (R2). */
export function operationSummary(record: OperationRecord): {
  operationId: string;
  provider: string;
  localState: OperationRecord['localState'];
  jobId?: string;
  /** The poll URL, which names the job when the provider gives no job ID (V1). */
  pollUrl?: string;
  remoteState?: string;
  /** The provider's last error code and message (a failed job, a refused request). */
  providerError?: { code?: string; message?: string };
  /** Why the operation was refused before anything was sent (C5): its code and every issue. */
  refusal?: NonNullable<OperationRecord['refusal']>;
  result: ResultSummary | null;
  escalation: { reason: EscalationReason; text: string } | null;
  statusRequestsUsed: number;
  statusRequestsAllowed: number;
} {
  return {
    operationId: record.operationId,
    provider: record.provider,
    localState: record.localState,
    ...(record.jobId !== undefined ? { jobId: record.jobId } : {}),
    ...(record.remote.statusUrl !== undefined ? { pollUrl: record.remote.statusUrl } : {}),
    ...(record.remote.state !== undefined ? { remoteState: record.remote.state } : {}),
    ...(record.remote.lastError !== undefined ? { providerError: record.remote.lastError } : {}),
    ...(record.refusal !== undefined ? { refusal: record.refusal } : {}),
    result: record.result,
    escalation: record.escalation
      ? { reason: record.escalation.reason, text: renderEscalation(record.escalation) }
      : null,
    statusRequestsUsed: record.used.statusRequests,
    statusRequestsAllowed: record.budgets.maxStatusRequests,
  };
}
