/**
 * Whether a provider-call activity wrote any request. Every provider request is written in a request slot
 * (`withRequestSlot`), whose write check marks the activity holding it. A call that fails before any write sent
 * nothing, and says so (`ASYNCJOB_ERR_NOTHING_SENT`): the workflow then takes it as a request that never left (the
 * answer policy's `not_sent` row: a create sent again with its token, a cancel sent again), not as one that may
 * have arrived (a create reconciled, a cancel escalated unconfirmed). Hand-written: no library knows when our
 * requests are written.
 *
 * The mark is found through the activity's async context when the slot is taken, inside the activity; the write
 * check itself runs in undici's context, so it marks the attempt it was given, never one it looks up.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TemporalFailure } from '@temporalio/common';
import { ERROR_CODES } from '../core/codes';
import { AsyncJobError } from '../core/errors';

/** One activity attempt's writes. */
interface Writes {
  written: boolean;
}

const attempts = new AsyncLocalStorage<Writes>();

/** A write check that also marks the current attempt as having written a request, when it lets the write go. */
export function markingWrites(): (written: (atMs: number) => boolean) => (atMs: number) => boolean {
  const attempt = attempts.getStore();
  if (attempt === undefined) return (written) => written;
  return (written) => (atMs) => {
    const goes = written(atMs);
    if (goes) attempt.written = true;
    return goes;
  };
}

/**
 * Runs a provider call; a failure it meets before any request was written (the store unreachable, no send slot,
 * any retryable error) becomes `ASYNCJOB_ERR_NOTHING_SENT`, with the error as its cause. A final error of ours (a
 * broken invariant: the workflow stops on it) and Temporal's own (a cancellation) are kept as they are.
 */
export async function reportingNothingSent<T>(call: () => Promise<T>): Promise<T> {
  const attempt: Writes = { written: false };
  try {
    return await attempts.run(attempt, call);
  } catch (error) {
    const final = error instanceof AsyncJobError && !ERROR_CODES[error.code].retryable;
    if (attempt.written || final || error instanceof TemporalFailure) throw error;
    const message =
      error instanceof AsyncJobError ? `${error.code}: ${error.message}` : String((error as Error)?.message ?? error);
    throw new AsyncJobError('ASYNCJOB_ERR_NOTHING_SENT', `nothing was sent: ${message}`.slice(0, 2000), {
      cause: error,
    });
  }
}
