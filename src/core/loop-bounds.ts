/**
 * The bounds of the loops Temporal runs for us (B3): activity retry policies and the history length at which a run
 * continues as new. Every other loop is a pure step bounded by the record's budgets (see docs/rules.md#b3).
 * Workflow code reads these constants; tests read the same ones.
 */
import { type OperationRecord } from './operation';

/** Store calls are idempotent by sequence: retried, at most this many attempts, then the workflow task fails loudly. */
export const STORE_CALL_RETRY = {
  initialInterval: '200 ms',
  maximumInterval: '10 seconds',
  maximumAttempts: 20,
  nonRetryableErrorTypes: ['ASYNCJOB_ERR_FINGERPRINT_MISMATCH', 'ASYNCJOB_ERR_JOURNAL_CONFLICT'],
} as const;

/**
 * The provider lookup, which also records a start's intent: retried as a store call is, and an unknown provider or a
 * start it cannot make a record of is final.
 */
export const DESCRIBE_RETRY = {
  ...STORE_CALL_RETRY,
  nonRetryableErrorTypes: [
    ...STORE_CALL_RETRY.nonRetryableErrorTypes,
    'ASYNCJOB_ERR_PROVIDER_UNKNOWN',
    'ASYNCJOB_ERR_INVALID_INPUT',
  ],
} as const;

/** The attempts a retry-driven status activity may make beyond one per read left: its first wait and lost attempts. */
export const RETRY_ATTEMPTS_BEYOND_READS = 20;

/**
 * The retry policy of a retry-driven status activity (B3): attempts bounded by the reads the budget still allows,
 * plus room for attempts lost with their worker or failed on the store (each planned again from the store), with
 * Temporal's backoff for those; a wait's own delay is the planner's (`nextRetryDelay`).
 */
export function retryDrivenWaitRetry(record: OperationRecord) {
  const readsLeft = Math.max(0, record.budgets.maxStatusRequests - record.used.statusRequests);
  return {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    // Attempts number in the reads made, so Temporal's backoff for a lost attempt is soon at its maximum.
    maximumInterval: '10 seconds',
    maximumAttempts: Math.min(readsLeft + RETRY_ATTEMPTS_BEYOND_READS, 1_000_000),
  } as const;
}

/**
 * Provider calls are never retried by Temporal: the workflow plans every retry, so every request is counted (B2). The
 * one exception is a retry-driven status wait ({@link retryDrivenWaitRetry}), whose every attempt reserves its read.
 */
export const PROVIDER_CALL_RETRY = { maximumAttempts: 1 } as const;

/**
 * The most create requests one operation sends, first and re-sends together (B3, I3): a re-send after a lookup
 * that found no job, or after a lost answer, is safe with the same token, but a provider that keeps answering
 * neither with a job nor with a failure is an incident for a human, not a loop until the create deadline.
 */
export const MAX_CREATE_ATTEMPTS = 20;

/**
 * A run continues as new once its history holds this many events (or the server suggests it), so no run's history
 * grows without bound whatever an operation's budgets allow.
 */
export const DEFAULT_HISTORY_EVENT_LIMIT = 5_000;

/** Whether a run with `historyLength` events continues as new now (B3). Pure. */
export function continuesAsNew(
  historyLength: number,
  suggested: boolean,
  limit = DEFAULT_HISTORY_EVENT_LIMIT,
): boolean {
  return suggested || historyLength >= limit;
}
