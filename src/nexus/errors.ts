/**
 * The Nexus form of asyncjob's errors: each becomes a `HandlerError` of the Nexus type that says how a caller
 * should treat it (BAD_REQUEST, NOT_FOUND, CONFLICT: do not retry; UNAVAILABLE: retry), whose cause is an
 * `ApplicationFailure` carrying our stable code as its `type` and the text (and, for bad input, every issue) as
 * its details, so a caller in any language reads the code, never the message.
 */
import { ApplicationFailure } from '@temporalio/common';
import { HandlerError, type HandlerErrorType } from 'nexus-rpc';
import { type ErrorCode, ERROR_CODES } from '../core/codes';
import { AsyncJobError, failureFields } from '../core/errors';
import { AsyncJobInputError, AsyncJobRequestRefused, InvalidVariableError, type InputIssue } from '../client/errors';

/** The Nexus handler error type of each of our codes a Nexus operation can meet; any other is INTERNAL. */
const HANDLER_ERROR_TYPES: Partial<Record<ErrorCode, HandlerErrorType>> = {
  ASYNCJOB_ERR_INVALID_INPUT: 'BAD_REQUEST',
  ASYNCJOB_ERR_INVALID_VARIABLE: 'BAD_REQUEST',
  ASYNCJOB_ERR_NOT_FOUND: 'NOT_FOUND',
  ASYNCJOB_ERR_FINGERPRINT_MISMATCH: 'CONFLICT',
  ASYNCJOB_ERR_JOIN_MISMATCH: 'CONFLICT',
  ASYNCJOB_ERR_REFUSED: 'CONFLICT',
  ASYNCJOB_ERR_PROVIDER_UNSERVED: 'UNAVAILABLE',
  ASYNCJOB_ERR_CONNECTION: 'UNAVAILABLE',
  ASYNCJOB_ERR_QUERY_TIMEOUT: 'UNAVAILABLE',
  ASYNCJOB_ERR_UPDATE_TIMEOUT: 'UNAVAILABLE',
  ASYNCJOB_ERR_SERVER: 'UNAVAILABLE',
};

/** A `HandlerError` of type `type` for our `code`, with `text` and the details a caller reads. */
function handlerError(
  type: HandlerErrorType,
  code: ErrorCode,
  text: string,
  details: unknown[] = [text],
): HandlerError {
  const fields = failureFields(code, text);
  const cause = ApplicationFailure.create({ ...fields, details });
  return new HandlerError(type, fields.message, { cause, retryableOverride: ERROR_CODES[code].retryable });
}

/** BAD_REQUEST naming every field of `issues` (`ASYNCJOB_ERR_INVALID_INPUT`); details: the issues. */
export function badRequest(issues: readonly InputIssue[]): HandlerError {
  const text = `invalid input: ${issues.map((i) => `${i.path || '(input)'}: ${i.message}`).join('; ')}`;
  return handlerError('BAD_REQUEST', 'ASYNCJOB_ERR_INVALID_INPUT', text, [...issues]);
}

/**
 * The Nexus error an error thrown by the client becomes (a `HandlerError` is kept as it is). A refusal keeps the
 * workflow's own code (`ASYNCJOB_ERR_CANCEL_UNSUPPORTED`, ...) as the failure's type.
 */
export function toHandlerError(err: unknown): HandlerError {
  if (err instanceof HandlerError) return err;
  if (err instanceof AsyncJobInputError || err instanceof InvalidVariableError)
    return handlerError('BAD_REQUEST', err.code, err.message, [...err.issues]);
  if (err instanceof AsyncJobRequestRefused) return handlerError('CONFLICT', err.refusalCode, err.detail);
  if (err instanceof AsyncJobError)
    return handlerError(HANDLER_ERROR_TYPES[err.code] ?? 'INTERNAL', err.code, err.message);
  const text = err instanceof Error ? err.message : String(err);
  return handlerError('INTERNAL', 'ASYNCJOB_ERR_INTERNAL', text);
}
