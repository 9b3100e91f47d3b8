/**
 * THE one place where errors thrown in an activity become Temporal `ApplicationFailure`s, as the registry says
 * (`core/codes.ts`): `type` is our stable code and `nonRetryable` is set where retrying the same input cannot help.
 * Anything that is not ours is `ASYNCJOB_ERR_ACTIVITY_FAILED` (retryable). Messages carry no secrets: our errors
 * never include credential values.
 */
import { ApplicationFailure } from '@temporalio/common';
import { type ErrorCode } from '../core/codes';
import { AsyncJobError, failureFields } from '../core/errors';

/** The type of a failure whose cause is not one of ours (a bug, a crash of a dependency). Retryable. */
export const UNEXPECTED_FAILURE_TYPE: ErrorCode = 'ASYNCJOB_ERR_ACTIVITY_FAILED';

/** Converts any thrown value into an `ApplicationFailure` with our stable code as its `type`. */
export function toFailure(error: unknown): ApplicationFailure {
  if (error instanceof ApplicationFailure) return error;
  const cause = error instanceof Error ? error : undefined;
  const code = error instanceof AsyncJobError ? error.code : UNEXPECTED_FAILURE_TYPE;
  const text = (cause?.message ?? String(error)).slice(0, 4000);
  return ApplicationFailure.create({ ...failureFields(code, text), ...(cause !== undefined ? { cause } : {}) });
}

/** Wraps an activity so that whatever it throws reaches Temporal as {@link toFailure} made it. */
export function withFailures<I, O>(activity: (input: I) => Promise<O>): (input: I) => Promise<O> {
  return async (input: I): Promise<O> => {
    try {
      return await activity(input);
    } catch (error) {
      throw toFailure(error);
    }
  };
}
