/**
 * The errors {@link AsyncJobClient} throws, one base class with a stable `code` (STYLE.md "Errors and outcomes").
 * Callers, the CLI and agents match on `code`, never on the message text.
 */

/** The stable codes of the client's own errors, each with a one-line description. */
export const CLIENT_CODES = {
  /** A start request (or a cancel request, decision, option) failed validation; `issues` name every field. */
  ASYNCJOB_ERR_INVALID_INPUT: 'the input failed validation',
  /** The operation ID is already used by a different request (I2): a changed request needs a new operation ID. */
  ASYNCJOB_ERR_FINGERPRINT_MISMATCH: 'the operation ID is already used by a different request',
  /** No operation (workflow) with this ID exists in the namespace. */
  ASYNCJOB_ERR_NOT_FOUND: 'no operation with this ID',
  /** The Temporal server could not be reached or refused the connection (address, TLS, API key). */
  ASYNCJOB_ERR_CONNECTION: 'the Temporal server could not be reached',
  /** No worker answered a query in time (is a worker running on the operation's task queue?). */
  ASYNCJOB_ERR_QUERY_TIMEOUT: 'no worker answered the query in time',
  /**
   * No worker accepted (or refused) a cancel or a decision in time. Not refused: the server may still hand it to a
   * worker later, so the operation is checked before asking again.
   */
  ASYNCJOB_ERR_UPDATE_TIMEOUT: 'no worker took the request in time; it may still be applied',
  /** The workflow itself failed, was terminated or timed out (not an operation that ended badly: that is a summary). */
  ASYNCJOB_ERR_WORKFLOW_FAILED: "the operation's workflow failed or was terminated",
  /** The workflow refused a cancel or a decision; the refusal's own code is in `refusalCode`. */
  ASYNCJOB_ERR_REFUSED: 'the workflow refused the request',
  /** No worker serves the provider (nobody polled its activity task queue recently): nothing was started. */
  ASYNCJOB_ERR_PROVIDER_UNSERVED: 'no worker serves this provider',
  /** The operation exists with the same payload but a different policy, deadline, starter or authoriser. */
  ASYNCJOB_ERR_JOIN_MISMATCH: 'the operation exists with different settings',
  /** A wait (`result`, `watch`) reached its `timeoutMs`; the operation goes on. */
  ASYNCJOB_ERR_WAIT_TIMEOUT: 'the wait timed out',
  /** A wait was aborted by the caller's AbortSignal; the operation goes on. */
  ASYNCJOB_ERR_ABORTED: 'the wait was aborted',
  /** The Temporal server answered with an error of its own (its gRPC status is in `grpcCode`). */
  ASYNCJOB_ERR_SERVER: 'the Temporal server refused or failed the call',
} as const;
/** A stable client error code. */
export type ClientCode = keyof typeof CLIENT_CODES;

/** One problem with one field of an input. */
export interface InputIssue {
  /** Dotted path of the field, e.g. `createDeadline.afterMs`; empty for the input as a whole. */
  path: string;
  message: string;
}

/** The base of every client error: a stable `code`. */
export abstract class AsyncJobClientError extends Error {
  abstract readonly code: string;
}

/** Bad input: nothing was started or sent. `issues` names every bad field at once. */
export class AsyncJobInputError extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_INVALID_INPUT';
  constructor(readonly issues: InputIssue[]) {
    super(`invalid input: ${issues.map((i) => `${i.path || '(input)'}: ${i.message}`).join('; ')}`);
    this.name = 'AsyncJobInputError';
  }
}

/**
 * I2: the operation ID already belongs to a request with a different fingerprint (or provider). The existing
 * operation is left as it is; a changed request needs a new operation ID (and so a new idempotency token).
 */
export class FingerprintMismatchError extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_FINGERPRINT_MISMATCH';
  constructor(
    readonly operationId: string,
    readonly existing: string,
    readonly incoming: string,
  ) {
    super(
      `operation ${operationId} already exists with a different request (${existing}, now ${incoming}); ` +
        'a changed request needs a new operation ID',
    );
    this.name = 'FingerprintMismatchError';
  }
}

/** No operation with this ID exists. */
export class OperationNotFoundError extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_NOT_FOUND';
  constructor(readonly operationId: string) {
    super(`no operation ${operationId}`);
    this.name = 'OperationNotFoundError';
  }
}

/** The Temporal server could not be reached (or refused our credentials). `cause` holds the SDK's error. */
export class AsyncJobConnectionError extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_CONNECTION';
  constructor(
    readonly address: string,
    options: { cause: unknown },
  ) {
    const detail = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(`cannot reach Temporal at ${address}: ${detail}`, options);
    this.name = 'AsyncJobConnectionError';
  }
}

/**
 * No worker answered a query: none within `timeoutMs`, or the server said at once that no worker polls the task
 * queue (`detail`). The workflow exists, but nothing is running it right now.
 */
export class AsyncJobQueryTimeout extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_QUERY_TIMEOUT';
  constructor(
    readonly operationId: string,
    readonly timeoutMs: number,
    options: { cause: unknown; detail?: string },
  ) {
    super(
      options.detail !== undefined
        ? `operation ${operationId}: no worker answered (the server says: ${options.detail}; is a worker running on its task queue?)`
        : `operation ${operationId}: no worker answered within ${timeoutMs} ms (is a worker running on its task queue?)`,
      { cause: options.cause },
    );
    this.name = 'AsyncJobQueryTimeout';
  }
}

/**
 * No worker accepted (or refused) a cancel or a decision within `timeoutMs`, or the server said at once that none
 * can (`detail`). The outcome is unknown: the server may still deliver the request when a worker comes, so read the
 * operation before asking again (a second cancel is refused as already requested, never sent twice, X3).
 */
export class AsyncJobUpdateTimeout extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_UPDATE_TIMEOUT';
  constructor(
    readonly operationId: string,
    readonly timeoutMs: number,
    options: { cause: unknown; detail?: string },
  ) {
    const why = options.detail !== undefined ? `the server says: ${options.detail}` : `none within ${timeoutMs} ms`;
    super(
      `operation ${operationId}: no worker took the request (${why}; is a worker running on its task queue?); ` +
        'it was not refused and may still be applied: read the operation before asking again',
      { cause: options.cause },
    );
    this.name = 'AsyncJobUpdateTimeout';
  }
}

/** Why a workflow closed without a summary: its failure's type (our code, when it is ours) and message. */
export interface WorkflowFailure {
  /** Temporal's execution status: `FAILED`, `TERMINATED`, `TIMED_OUT` or `CANCELLED`. */
  executionStatus: string;
  /** The failure's type, e.g. `ASYNCJOB_ERR_INVALID_INPUT`; null when it has none (a termination). */
  type: string | null;
  message: string;
}

/**
 * The workflow failed, was terminated or timed out instead of returning a summary. `failure` says how and why
 * (when known); `cause` holds the SDK's error.
 */
export class OperationFailedError extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_WORKFLOW_FAILED';
  /** How the workflow ended, when known. */
  readonly failure: WorkflowFailure | null;
  constructor(
    readonly operationId: string,
    detail: string,
    options: { cause: unknown; failure?: WorkflowFailure },
  ) {
    super(
      `operation ${operationId}: the workflow ${options.failure ? options.failure.executionStatus : 'failed'}: ${detail}`,
      { cause: options.cause },
    );
    this.name = 'OperationFailedError';
    this.failure = options.failure ?? null;
  }
}

/**
 * The workflow refused a cancel or a decision (an update validator, or the main loop's answer). `refusalCode` is
 * the workflow's own stable code (e.g. `ASYNCJOB_ERR_OPTION_NOT_OFFERED`, `ASYNCJOB_ERR_CANCEL_UNSUPPORTED`).
 */
export class AsyncJobRequestRefused extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_REFUSED';
  constructor(
    readonly operationId: string,
    readonly refusalCode: string,
    readonly detail: string,
  ) {
    super(`${refusalCode}: ${detail}`);
    this.name = 'AsyncJobRequestRefused';
  }
}

/**
 * The operation has ended (its workflow is closed): a cancel or a decision can no longer reach it. The refusal
 * code is `ASYNCJOB_ERR_OPERATION_FINAL`, as the workflow's own refusal of a final operation.
 */
export class OperationEndedError extends AsyncJobRequestRefused {
  constructor(
    operationId: string,
    /** Temporal's execution status (`COMPLETED`, `FAILED`, `TERMINATED`, ...). */
    readonly executionStatus: string,
    /** The last local state known (search attributes), or null. */
    readonly localState: string | null,
    /** Why the workflow failed, when it did. */
    readonly failure: WorkflowFailure | null,
  ) {
    const why = failure ? `: ${failure.message}` : '';
    super(
      operationId,
      'ASYNCJOB_ERR_OPERATION_FINAL',
      `operation ${operationId} has ended (workflow ${executionStatus}${why}; state ${localState ?? 'unknown'})`,
    );
    this.name = 'OperationEndedError';
  }
}

/** No worker has polled the provider's activity task queue recently, so nothing would run the operation. */
export class ProviderUnservedError extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_PROVIDER_UNSERVED';
  constructor(
    readonly provider: string,
    readonly taskQueue: string,
    /** Providers a worker serves now, as far as the client can see them (from recent operations). */
    readonly servedProviders: string[],
  ) {
    super(
      `no worker serves provider ${provider} (nobody polled task queue ${taskQueue} recently); ` +
        `${servedProviders.length > 0 ? `served now: ${servedProviders.join(', ')}` : 'no served provider seen'} ` +
        '(a worker names its providers when it starts; ASYNCJOB_PROVIDERS sets them); to start anyway while the workers are down: --allow-unserved-provider (allowUnservedProvider: true)',
    );
    this.name = 'ProviderUnservedError';
  }
}

/** One setting of a join that differs from the operation's: the field, its value in the operation and as given. */
export interface JoinDifference {
  field: string;
  existing: unknown;
  given: unknown;
}

/**
 * The operation exists with the same request payload and provider, but the start gave other settings (policy,
 * deadlines, starter, authoriser, client reference). Nothing is changed; `differences` names each field.
 */
export class JoinMismatchError extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_JOIN_MISMATCH';
  constructor(
    readonly operationId: string,
    readonly differences: JoinDifference[],
  ) {
    const show = (v: unknown): string => (v === undefined ? '(none)' : JSON.stringify(v));
    super(
      `operation ${operationId} already exists with other settings: ${differences.map((d) => `${d.field} is ${show(d.existing)}, given ${show(d.given)}`).join('; ')} ` +
        '(nothing was changed; start it with the same settings to join it, or use a new operation ID)',
    );
    this.name = 'JoinMismatchError';
  }
}

/** A wait (`result`, `watch`) reached its `timeoutMs` before the operation ended or escalated. The operation goes on. */
export class AsyncJobWaitTimeout extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_WAIT_TIMEOUT';
  constructor(
    readonly operationId: string,
    readonly timeoutMs: number,
  ) {
    super(`operation ${operationId}: still going after ${timeoutMs} ms (the wait timed out; the operation goes on)`);
    this.name = 'AsyncJobWaitTimeout';
  }
}

/** A wait was aborted by the caller's AbortSignal (`name` is `AbortError`, as `fetch` reports it). `cause` is the signal's reason. */
export class AsyncJobAborted extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_ABORTED';
  constructor(
    readonly operationId: string,
    options: { cause: unknown },
  ) {
    super(`operation ${operationId}: the wait was aborted (the operation goes on)`, options);
    this.name = 'AbortError';
  }
}

/** The Temporal server answered a call with an error we have no better name for; `grpcCode` is its gRPC status. */
export class AsyncJobServerError extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_SERVER';
  constructor(
    readonly operationId: string,
    readonly grpcCode: number | null,
    detail: string,
    options: { cause: unknown },
  ) {
    super(
      `operation ${operationId}: the Temporal server answered with an error${grpcCode !== null ? ` (gRPC ${grpcCode})` : ''}: ${detail}`,
      options,
    );
    this.name = 'AsyncJobServerError';
  }
}

const PREFIXED = /^(ASYNCJOB_ERR_[A-Z0-9_]+):\s*([\s\S]*)$/;

/** Splits `ASYNCJOB_ERR_X: text` into code and text; a message without that prefix is `ASYNCJOB_ERR_REFUSED`. */
export function parseRefusal(message: string): { code: string; message: string } {
  const m = PREFIXED.exec(message);
  return m ? { code: m[1]!, message: m[2]! } : { code: 'ASYNCJOB_ERR_REFUSED', message };
}
