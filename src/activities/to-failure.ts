/**
 * THE one place where our errors become Temporal `ApplicationFailure`s: `type` is our stable code, and
 * `nonRetryable` is set where retrying the same input cannot help (a fingerprint mismatch, an unknown
 * provider, a journal conflict, invalid input, a contract that does not load). Messages carry no secrets: the
 * errors converted here never include credential values.
 */
import { ApplicationFailure } from '@temporalio/common';
import { AsyncJobHttpError } from '../adapters/http';
import { ProviderContractError } from '../adapters/providers/errors';
import { ProviderRegistryError } from '../adapters/providers/registry';
import { StoreError } from '../adapters/store/store-errors';
import { ActivityError } from './errors';

/** The type of a failure whose cause is not one of ours (a bug, a crash of a dependency). Retryable. */
export const UNEXPECTED_FAILURE_TYPE = 'ASYNCJOB_ERR_ACTIVITY_FAILED';

const NON_RETRYABLE_STORE_CODES = new Set([
  'ASYNCJOB_ERR_JOURNAL_CONFLICT',
  'ASYNCJOB_ERR_JOURNAL_GAP',
  'ASYNCJOB_ERR_INVALID_INPUT',
  'ASYNCJOB_ERR_SECRET_IN_RECORD',
  'ASYNCJOB_ERR_STORE_LOCATION',
]);
const NON_RETRYABLE_HTTP_CODES = new Set(['ASYNCJOB_ERR_HTTP_INVALID_OPTIONS', 'ASYNCJOB_ERR_HTTP_INVALID_REQUEST']);

/** Converts any thrown value into an `ApplicationFailure` with our stable code as its `type`. */
export function toFailure(error: unknown): ApplicationFailure {
  if (error instanceof ApplicationFailure) return error;
  const cause = error instanceof Error ? error : undefined;
  const make = (type: string, message: string, nonRetryable: boolean): ApplicationFailure =>
    ApplicationFailure.create({
      type,
      message: message.slice(0, 4000),
      nonRetryable,
      ...(cause !== undefined ? { cause } : {}),
    });
  if (error instanceof ActivityError) return make(error.code, error.message, error.nonRetryable);
  if (error instanceof ProviderRegistryError) return make(error.code, error.message, true);
  if (error instanceof ProviderContractError) return make(error.code, error.message, true);
  if (error instanceof StoreError) return make(error.code, error.message, NON_RETRYABLE_STORE_CODES.has(error.code));
  if (error instanceof AsyncJobHttpError)
    return make(error.code, error.message, NON_RETRYABLE_HTTP_CODES.has(error.code));
  return make(UNEXPECTED_FAILURE_TYPE, cause?.message ?? String(error), false);
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
