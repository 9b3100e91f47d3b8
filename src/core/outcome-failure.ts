/**
 * How an operation that did not succeed ends the workflow that waited for it (a parent of a child operation, a
 * Nexus caller): its final summary becomes one typed failure, whose `type` is our stable code, so the caller catches
 * by code and never parses a message. One table from the final local state to the code; used by `asyncjob/workflow`
 * and the Nexus service alike. Pure.
 */
import type { ErrorCode } from './codes';
import type { LocalState } from './journal';
import type { operationSummary } from './step-next';

/** An operation's summary, as `AsyncJobWorkflow` returns it. */
type OperationSummary = ReturnType<typeof operationSummary>;

/**
 * The fields of the `ApplicationFailure` a caller gets (`ApplicationFailure.create(fields)`): `type` is the code,
 * `message` is `CODE: text` (what the Web UI shows), `details` holds the summary so a caller reads the state, the
 * job ID and the provider's error as data. Never retryable: the operation has ended.
 */
export interface OutcomeFailure {
  type: ErrorCode;
  message: string;
  details: [OperationSummary];
  nonRetryable: true;
}

/**
 * The code of each state an operation's workflow can end in without a result: the final states and `escalated`
 * (the decision deadline passed, E2). `succeeded` is not here: it is no failure.
 */
export const OUTCOME_CODES = {
  failed: 'ASYNCJOB_ERR_OPERATION_FAILED',
  cancelled: 'ASYNCJOB_ERR_OPERATION_CANCELLED',
  closed: 'ASYNCJOB_ERR_OPERATION_CLOSED',
  escalated: 'ASYNCJOB_ERR_ESCALATION_EXPIRED',
} as const satisfies Partial<Record<LocalState, ErrorCode>>;

/** What the summary says beyond its state: the provider's error, the refusal's issues, the open escalation. */
function detailOf(summary: OperationSummary): string {
  if (summary.refusal !== undefined)
    return summary.refusal.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  if (summary.providerError !== undefined)
    return [summary.providerError.code, summary.providerError.message].filter((part) => part !== undefined).join(': ');
  if (summary.escalation !== null) return `${summary.escalation.reason}: ${summary.escalation.text}`;
  return '';
}

/**
 * The failure an operation's final summary is to its caller, or null when it succeeded. A `failed` operation that
 * was refused before anything was sent (C5) keeps the refusal's own code (`ASYNCJOB_ERR_INVALID_VARIABLE`). A
 * summary in a state that is no end (a workflow never returns one) is `ASYNCJOB_ERR_WORKFLOW_FAILED`. Pure.
 */
export function outcomeFailure(summary: OperationSummary): OutcomeFailure | null {
  const state = summary.localState;
  if (state === 'succeeded') return null;
  const code: ErrorCode =
    state === 'failed' && summary.refusal !== undefined
      ? summary.refusal.code
      : state in OUTCOME_CODES
        ? OUTCOME_CODES[state as keyof typeof OUTCOME_CODES]
        : 'ASYNCJOB_ERR_WORKFLOW_FAILED';
  const detail = detailOf(summary);
  const ended = state in OUTCOME_CODES ? `ended ${state}` : `returned in state ${state}, which is no end`;
  const text = `operation ${summary.operationId} ${ended}${detail === '' ? '' : ` (${detail})`}`;
  return {
    type: code,
    message: `${code}: ${text}`,
    details: [summary],
    nonRetryable: true,
  };
}
