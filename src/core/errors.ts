/**
 * The one base class of every error asyncjob throws, and what is derived from its code (`codes.ts`): the exit
 * status of `asyncjob` and the fields of the Temporal failure it becomes. A subclass only adds typed fields
 * (`issues`, `operationId`, ...); its message is for a person and never starts with the code. Pure.
 */
import { ERROR_CODES, type ErrorCode, type ExitCode } from './codes';

/** An error of ours: `code` is stable and in the registry; `message` is the text for a person. */
export class AsyncJobError extends Error {
  /** The stable code (docs/errors.md). */
  readonly code: ErrorCode;

  /** Builds the error; `cause` is kept for `--verbose` and logs (never a credential). */
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Whether `err` is one of ours, and (when `code` is given) carries that code. */
export function hasCode(err: unknown, code?: ErrorCode): err is AsyncJobError {
  return err instanceof AsyncJobError && (code === undefined || err.code === code);
}

/** The exit status `asyncjob` reports `code` with. */
export function exitStatusOf(code: ErrorCode): ExitCode {
  return ERROR_CODES[code].exit;
}

/** The fields of a Temporal `ApplicationFailure` for one of our errors. */
export interface FailureFields {
  /** Our code, which a client reads instead of the message. */
  type: ErrorCode;
  /** `CODE: text`: the Web UI shows an operator only the message of a failure or a refused update. */
  message: string;
  /** `[text]`: the text alone, for a client to show beside the code it read from `type`. */
  details: [string];
  /** From the registry: a retry of the same input cannot help. */
  nonRetryable: boolean;
}

/** The failure `code` with `text` becomes (an activity's error, or a refusal by the workflow). Pure. */
export function failureFields(code: ErrorCode, text: string): FailureFields {
  return { type: code, message: `${code}: ${text}`, details: [text], nonRetryable: !ERROR_CODES[code].retryable };
}
