/**
 * How the workflow refuses: an `ApplicationFailure` made from our error code (`core/errors.ts` `failureFields`):
 * its `type` is the code and its first detail the text, so a client reads both as data, never from the message.
 * The message is `CODE: text`: the Web UI shows an operator only the message of a refused update or a failed run.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import { type ErrorCode } from '../core/codes';
import { failureFields } from '../core/errors';

/** A refusal with a stable code (an update validator's, or the workflow's own). */
export function refusal(code: ErrorCode, message: string): ApplicationFailure {
  return ApplicationFailure.create(failureFields(code, message));
}

/** The workflow's input (or a message) does not hold what it must. */
export function invalidInput(message: string): ApplicationFailure {
  return refusal('ASYNCJOB_ERR_INVALID_INPUT', message);
}
