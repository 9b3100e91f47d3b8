/**
 * The HTTP layer's own faults, each an {@link AsyncJobError} with an `ASYNCJOB_ERR_HTTP_*` code of the one
 * registry (`core/codes.ts`): bad options, a malformed request built by our code, a client used after `close()`
 * (`ASYNCJOB_ERR_HTTP_CLIENT_CLOSED`), a download sink that failed (`ASYNCJOB_ERR_HTTP_SINK_FAILED`). Anything the
 * network or the provider did is never thrown: it is returned as an `HttpExchange` (see `exchange.ts`).
 */
import { AsyncJobError } from '../../core/errors';

/** Bad `createHttpClient` options (`ASYNCJOB_ERR_HTTP_INVALID_OPTIONS`); `issues` lists each as `path: message`. */
export class InvalidHttpOptionsError extends AsyncJobError {
  /** Builds the error from the list of problems, each naming the field. */
  constructor(readonly issues: readonly string[]) {
    super('ASYNCJOB_ERR_HTTP_INVALID_OPTIONS', issues.join('; '));
  }
}

/** A malformed request built by our own code (`ASYNCJOB_ERR_HTTP_INVALID_REQUEST`); `field` names the field. */
export class InvalidHttpRequestError extends AsyncJobError {
  /** Builds the error naming the field at fault, e.g. `headers.x-trace-id` or `spanId`. */
  constructor(
    readonly field: string,
    message: string,
  ) {
    super('ASYNCJOB_ERR_HTTP_INVALID_REQUEST', `${field}: ${message}`);
  }
}
