/**
 * Why the workflow refused a cancel or a decision: its stable code (`ASYNCJOB_ERR_OPTION_NOT_OFFERED`, ...) and
 * its text, read as data from the failure the update ended with, never parsed out of the message.
 */
import { ApplicationFailure, type WorkflowUpdateFailedError } from '@temporalio/client';
import { type ErrorCode, isErrorCode } from '../core/codes';

/** A refusal: the workflow's code and its text. */
export interface Refusal {
  code: ErrorCode;
  message: string;
}

/**
 * The refusal an update failed with. The workflow refuses with an `ApplicationFailure` whose `type` is our code and
 * whose first detail is the text alone (its message, `CODE: text`, is for the Web UI; `core/errors.ts`
 * `failureFields`). A failure whose type is not one of our codes (the SDK's own, an unknown update) is
 * `ASYNCJOB_ERR_REFUSED` with its message as it is. Pure.
 */
export function updateRefusal(err: WorkflowUpdateFailedError): Refusal {
  const failure = err.cause;
  if (failure instanceof ApplicationFailure && isErrorCode(failure.type)) {
    const [text] = failure.details ?? [];
    return { code: failure.type, message: typeof text === 'string' ? text : failure.message };
  }
  return { code: 'ASYNCJOB_ERR_REFUSED', message: failure?.message ?? err.message };
}
