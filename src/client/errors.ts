/**
 * The errors {@link AsyncJobClient} throws: each an {@link AsyncJobError} with a stable `code` from the one
 * registry (`src/core/codes.ts`, docs/errors.md), as a thin subclass that adds the typed fields of its case.
 * Callers, the CLI and agents match on `code`, never on the message text.
 */
import { type ErrorCode } from '../core/codes';
import { issueText } from '../core/issues';
import { AsyncJobError } from '../core/errors';

export { ERROR_CODES, isErrorCode, type ErrorCode, type ErrorCodeInfo, type ExitCode } from '../core/codes';
export { AsyncJobError, exitStatusOf, hasCode } from '../core/errors';

/** One problem with one field of an input. */
export interface InputIssue {
  /** Dotted path of the field, e.g. `createDeadline.afterMs`; empty for the input as a whole. */
  path: string;
  message: string;
}

/** Bad input (`ASYNCJOB_ERR_INVALID_INPUT`): nothing was started or sent. `issues` names every bad field at once. */
export class AsyncJobInputError extends AsyncJobError {
  constructor(readonly issues: InputIssue[]) {
    super('ASYNCJOB_ERR_INVALID_INPUT', `invalid input: ${issueText(issues)}`);
  }
}

/**
 * C5 (`ASYNCJOB_ERR_INVALID_VARIABLE`): the operation variables do not fit the adapter's declarations; nothing was
 * started or sent. `issues` names every variable at once (`variables.<name>`).
 */
export class InvalidVariableError extends AsyncJobError {
  constructor(readonly issues: InputIssue[]) {
    super('ASYNCJOB_ERR_INVALID_VARIABLE', `invalid operation variables: ${issueText(issues, 'variables')}`);
  }
}

/**
 * I2 (`ASYNCJOB_ERR_FINGERPRINT_MISMATCH`): the operation ID already belongs to a request with a different
 * fingerprint (or provider). The existing operation is left as it is; a changed request needs a new operation ID.
 */
export class FingerprintMismatchError extends AsyncJobError {
  constructor(
    readonly operationId: string,
    readonly existing: string,
    readonly incoming: string,
  ) {
    super(
      'ASYNCJOB_ERR_FINGERPRINT_MISMATCH',
      `operation ${operationId} already exists with a different request (${existing}, now ${incoming}); ` +
        'a changed request needs a new operation ID',
    );
  }
}

/** Why {@link ResultUnavailableError} was thrown. */
export type ResultUnavailableReason = 'no_result' | 'unreadable' | 'mismatch';

/**
 * R2 (`ASYNCJOB_ERR_RESULT_UNAVAILABLE`): the operation's result cannot be given: none is stored (`no_result`), the
 * artifact store cannot read it (`unreadable`: absent, no access, another machine's file), or its bytes do not
 * match the sha256 and size recorded when it was validated (`mismatch`, raised at the end of the stream or as
 * soon as more bytes arrive than were recorded).
 */
export class ResultUnavailableError extends AsyncJobError {
  constructor(
    readonly operationId: string,
    readonly reason: ResultUnavailableReason,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super('ASYNCJOB_ERR_RESULT_UNAVAILABLE', `the result of ${operationId} ${detail}`, options);
  }
}

/** No operation with this ID exists (`ASYNCJOB_ERR_NOT_FOUND`). */
export class OperationNotFoundError extends AsyncJobError {
  constructor(readonly operationId: string) {
    super('ASYNCJOB_ERR_NOT_FOUND', `no operation ${operationId}`);
  }
}

/** The Temporal server could not be reached, or refused our credentials (`ASYNCJOB_ERR_CONNECTION`). */
export class AsyncJobConnectionError extends AsyncJobError {
  constructor(
    readonly address: string,
    options: { cause: unknown },
  ) {
    const detail = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super('ASYNCJOB_ERR_CONNECTION', `cannot reach Temporal at ${address}: ${detail}`, options);
  }
}

/**
 * No worker answered a query (`ASYNCJOB_ERR_QUERY_TIMEOUT`): none within `timeoutMs`, or the server said at once
 * that no worker polls the task queue (`detail`). The workflow exists, but nothing is running it right now.
 */
export class AsyncJobQueryTimeout extends AsyncJobError {
  /** The server's own reason when it said at once that no worker can answer (no poller seen lately). */
  readonly serverSays: string | undefined;

  constructor(
    readonly operationId: string,
    readonly timeoutMs: number,
    options: { cause: unknown; detail?: string },
  ) {
    super(
      'ASYNCJOB_ERR_QUERY_TIMEOUT',
      options.detail !== undefined
        ? `operation ${operationId}: no worker answered (the server says: ${options.detail}; is a worker running on its task queue?)`
        : `operation ${operationId}: no worker answered within ${timeoutMs} ms (is a worker running on its task queue?)`,
      { cause: options.cause },
    );
    this.serverSays = options.detail;
  }
}

/**
 * No worker accepted (or refused) a cancel or a decision within `timeoutMs`, or the server said at once that none
 * can (`detail`; `ASYNCJOB_ERR_UPDATE_TIMEOUT`). The outcome is unknown: the server may still deliver the request
 * when a worker comes, so read the operation before asking again (a second cancel is refused, never sent twice, X3).
 */
export class AsyncJobUpdateTimeout extends AsyncJobError {
  constructor(
    readonly operationId: string,
    readonly timeoutMs: number,
    options: { cause: unknown; detail?: string },
  ) {
    const why = options.detail !== undefined ? `the server says: ${options.detail}` : `none within ${timeoutMs} ms`;
    super(
      'ASYNCJOB_ERR_UPDATE_TIMEOUT',
      `operation ${operationId}: no worker took the request (${why}; is a worker running on its task queue?); ` +
        'it was not refused and may still be applied: read the operation before asking again',
      { cause: options.cause },
    );
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
 * The workflow failed, was terminated or timed out instead of returning a summary (`ASYNCJOB_ERR_WORKFLOW_FAILED`).
 * `failure` says how and why (when known); `cause` holds the SDK's error.
 */
export class OperationFailedError extends AsyncJobError {
  /** How the workflow ended, when known. */
  readonly failure: WorkflowFailure | null;
  constructor(
    readonly operationId: string,
    detail: string,
    options: { cause: unknown; failure?: WorkflowFailure },
  ) {
    super(
      'ASYNCJOB_ERR_WORKFLOW_FAILED',
      `operation ${operationId}: the workflow ${options.failure ? options.failure.executionStatus : 'failed'}: ${detail}`,
      { cause: options.cause },
    );
    this.failure = options.failure ?? null;
  }
}

/**
 * The workflow refused a cancel or a decision (`ASYNCJOB_ERR_REFUSED`; an update validator, or the main loop's
 * answer). `refusalCode` is the workflow's own stable code (e.g. `ASYNCJOB_ERR_OPTION_NOT_OFFERED`), read from the
 * failure's type, and `detail` its text; the message is `refusalCode: detail`.
 */
export class AsyncJobRequestRefused extends AsyncJobError {
  constructor(
    readonly operationId: string,
    readonly refusalCode: ErrorCode,
    readonly detail: string,
  ) {
    super('ASYNCJOB_ERR_REFUSED', `${refusalCode}: ${detail}`);
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
  }
}

/** No worker has polled the provider's activity task queue recently (`ASYNCJOB_ERR_PROVIDER_UNSERVED`). */
export class ProviderUnservedError extends AsyncJobError {
  constructor(
    readonly provider: string,
    readonly taskQueue: string,
    /** Providers a worker serves now, as far as the client can see them (from recent operations). */
    readonly servedProviders: string[],
  ) {
    super(
      'ASYNCJOB_ERR_PROVIDER_UNSERVED',
      `no worker serves provider ${provider} (nobody polled task queue ${taskQueue} recently); ` +
        `${servedProviders.length > 0 ? `served now: ${servedProviders.join(', ')}` : 'no served provider seen'} ` +
        '(a worker names its providers when it starts; ASYNCJOB_PROVIDERS sets them); to start anyway while the workers are down: --allow-unserved-provider (allowUnservedProvider: true)',
    );
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
 * deadlines, starter, authoriser, client reference, operation variables; `ASYNCJOB_ERR_JOIN_MISMATCH`). Nothing
 * is changed; `differences` names each field.
 */
export class JoinMismatchError extends AsyncJobError {
  constructor(
    readonly operationId: string,
    readonly differences: JoinDifference[],
  ) {
    const show = (v: unknown): string => (v === undefined ? '(none)' : JSON.stringify(v));
    super(
      'ASYNCJOB_ERR_JOIN_MISMATCH',
      `operation ${operationId} already exists with other settings: ${differences.map((d) => `${d.field} is ${show(d.existing)}, given ${show(d.given)}`).join('; ')} ` +
        '(nothing was changed; start it with the same settings to join it, or use a new operation ID)',
    );
  }
}

/** A wait (`result`, `watch`) reached its `timeoutMs` first (`ASYNCJOB_ERR_WAIT_TIMEOUT`). The operation goes on. */
export class AsyncJobWaitTimeout extends AsyncJobError {
  constructor(
    readonly operationId: string,
    readonly timeoutMs: number,
  ) {
    super(
      'ASYNCJOB_ERR_WAIT_TIMEOUT',
      `operation ${operationId}: still going after ${timeoutMs} ms (the wait timed out; the operation goes on)`,
    );
  }
}

/**
 * A wait was aborted by the caller's AbortSignal (`ASYNCJOB_ERR_ABORTED`; `name` is `AbortError`, as `fetch`
 * reports it). `cause` is the signal's reason.
 */
export class AsyncJobAborted extends AsyncJobError {
  constructor(
    readonly operationId: string,
    options: { cause: unknown },
  ) {
    super('ASYNCJOB_ERR_ABORTED', `operation ${operationId}: the wait was aborted (the operation goes on)`, options);
    this.name = 'AbortError';
  }
}

/** The Temporal server answered with an error we have no better name for (`ASYNCJOB_ERR_SERVER`; gRPC `grpcCode`). */
export class AsyncJobServerError extends AsyncJobError {
  constructor(
    readonly operationId: string,
    readonly grpcCode: number | null,
    detail: string,
    options: { cause: unknown },
  ) {
    super(
      'ASYNCJOB_ERR_SERVER',
      `operation ${operationId}: the Temporal server answered with an error${grpcCode !== null ? ` (gRPC ${grpcCode})` : ''}: ${detail}`,
      options,
    );
  }
}

/**
 * The code and text a person or an agent is shown for one of our errors: a refusal shows the workflow's own code
 * and its text; any other error its code and message.
 */
export function shownError(err: AsyncJobError): { code: ErrorCode; text: string } {
  return err instanceof AsyncJobRequestRefused
    ? { code: err.refusalCode, text: err.detail }
    : { code: err.code, text: err.message };
}
