/**
 * The HTTP layer's own faults: bad options, a malformed request built by our code, a client used after
 * `close()`, a download sink that failed. Anything the network or the provider did is never thrown: it is
 * returned as an `HttpExchange` (see `exchange.ts`). Codes are stable strings; add new ones, never rename.
 */

/** Stable error codes of the HTTP layer, each with a one-line description. */
export const HTTP_ERROR_CODES = {
  /** `createHttpClient` options failed validation; the message names every bad field. */
  ASYNCJOB_ERR_HTTP_INVALID_OPTIONS: 'the HTTP client options failed validation',
  /** A request built by our code is malformed (bad method, header value, trace ID, span ID...). */
  ASYNCJOB_ERR_HTTP_INVALID_REQUEST: 'the request is malformed',
  /** The client was used after `close()`. */
  ASYNCJOB_ERR_HTTP_CLIENT_CLOSED: 'the HTTP client is closed',
  /** The caller's download sink failed to accept data (a local fault, e.g. the disk is full). */
  ASYNCJOB_ERR_HTTP_SINK_FAILED: 'the download sink failed',
} as const;

/** A stable HTTP-layer error code. */
export type HttpErrorCode = keyof typeof HTTP_ERROR_CODES;

/** Base class of every error the HTTP layer throws; `code` is stable, `message` is for humans. */
export class AsyncJobHttpError extends Error {
  /** The stable code. */
  readonly code: HttpErrorCode;

  /** Builds an error with a stable code; `cause` is kept for debugging (never contains a credential). */
  constructor(code: HttpErrorCode, message: string, options?: { cause?: unknown }) {
    super(`${code}: ${message}`, options);
    this.name = 'AsyncJobHttpError';
    this.code = code;
  }
}

/** Bad `createHttpClient` options; `issues` lists each problem as `path: message`. */
export class InvalidHttpOptionsError extends AsyncJobHttpError {
  /** One entry per problem, each naming the field. */
  readonly issues: readonly string[];

  /** Builds the error from the list of problems. */
  constructor(issues: readonly string[]) {
    super('ASYNCJOB_ERR_HTTP_INVALID_OPTIONS', issues.join('; '));
    this.name = 'InvalidHttpOptionsError';
    this.issues = issues;
  }
}

/** A malformed request built by our own code; `field` names the offending request field. */
export class InvalidHttpRequestError extends AsyncJobHttpError {
  /** The request field at fault, e.g. `headers.x-trace-id` or `spanId`. */
  readonly field: string;

  /** Builds the error naming the field. */
  constructor(field: string, message: string) {
    super('ASYNCJOB_ERR_HTTP_INVALID_REQUEST', `${field}: ${message}`);
    this.name = 'InvalidHttpRequestError';
    this.field = field;
  }
}
