/**
 * Why the workflow refused a cancel or a decision: its stable code (`ASYNCJOB_ERR_OPTION_NOT_OFFERED`, ...) and
 * its human text, read from the failure the update ended with.
 */
import { ApplicationFailure, type WorkflowUpdateFailedError } from '@temporalio/client';
import { parseRefusal } from './errors';

const OUR_CODE = /^ASYNCJOB_ERR_[A-Z0-9_]+$/;

/** A refusal: the workflow's code and its text. */
export interface Refusal {
  code: string;
  message: string;
}

/**
 * The refusal an update failed with. The workflow refuses with an `ApplicationFailure` whose `type` is our code
 * (its message leads with the code too, for the Web UI, and is stripped of it here); the type is read first. Workflows still running older code refuse
 * with a plain `Error('CODE: text')` (its failure's type is then `Error`): for them, and for a failure of anyone
 * else, the code is parsed from the message's prefix (`ASYNCJOB_ERR_REFUSED` when it has none). Pure.
 */
export function updateRefusal(err: WorkflowUpdateFailedError): Refusal {
  const failure = err.cause;
  if (failure instanceof ApplicationFailure && typeof failure.type === 'string' && OUR_CODE.test(failure.type)) {
    // A workflow between the two shapes may still prefix its own code: shown once.
    const prefix = `${failure.type}:`;
    const text = failure.message.startsWith(prefix) ? failure.message.slice(prefix.length).trim() : failure.message;
    return { code: failure.type, message: text };
  }
  return parseRefusal(failure?.message ?? err.message);
}
