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
  /** The workflow itself failed, was terminated or timed out (not an operation that ended badly: that is a summary). */
  ASYNCJOB_ERR_WORKFLOW_FAILED: 'the operation\'s workflow failed or was terminated',
  /** The workflow refused a cancel or a decision; the refusal's own code is in `refusalCode`. */
  ASYNCJOB_ERR_REFUSED: 'the workflow refused the request',
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

/** No worker answered a query within `timeoutMs`: the workflow exists, but nothing is running it right now. */
export class AsyncJobQueryTimeout extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_QUERY_TIMEOUT';
  constructor(
    readonly operationId: string,
    readonly timeoutMs: number,
    options: { cause: unknown },
  ) {
    super(`operation ${operationId}: no worker answered within ${timeoutMs} ms (is a worker running on its task queue?)`, options);
    this.name = 'AsyncJobQueryTimeout';
  }
}

/** The workflow failed, was terminated or timed out instead of returning a summary. `cause` holds the SDK's error. */
export class OperationFailedError extends AsyncJobClientError {
  readonly code = 'ASYNCJOB_ERR_WORKFLOW_FAILED';
  constructor(
    readonly operationId: string,
    detail: string,
    options: { cause: unknown },
  ) {
    super(`operation ${operationId}: the workflow failed: ${detail}`, options);
    this.name = 'OperationFailedError';
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

const PREFIXED = /^(ASYNCJOB_ERR_[A-Z0-9_]+):\s*([\s\S]*)$/;

/** Splits `ASYNCJOB_ERR_X: text` into code and text; a message without that prefix is `ASYNCJOB_ERR_REFUSED`. */
export function parseRefusal(message: string): { code: string; message: string } {
  const m = PREFIXED.exec(message);
  return m ? { code: m[1]!, message: m[2]! } : { code: 'ASYNCJOB_ERR_REFUSED', message };
}
