/**
 * How the workflow refuses: an `ApplicationFailure` whose `type` is our error code, so the client reads the code from
 * the failure, never from the message. The message starts with the code too: the Web UI shows an operator only the
 * message of a refused update or a failed run.
 */
import { ApplicationFailure } from '@temporalio/workflow';

/** A refusal with a stable code (an update validator's, or the workflow's own). */
export function refusal(code: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: code, message: `${code}: ${message}`, nonRetryable: true });
}

/** The workflow's input (or a message) does not hold what it must. */
export function invalidInput(message: string): ApplicationFailure {
  return refusal('ASYNCJOB_ERR_INVALID_INPUT', message);
}
