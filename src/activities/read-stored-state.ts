/**
 * The `readStoredState` activity: the state the store holds and its entries from a sequence on. The workflow adopts
 * it when a status loop ended without returning its outcome (a worker lost mid-loop, a cancel that ended in a
 * failure): the store, not the workflow, saw the loop's reads. Reads only, so it is safe to retry.
 */
import { z } from 'zod';
import { type StepOutcome } from '../core/step-outcome';
import { issueText } from '../core/issues';
import { AsyncJobError } from '../core/errors';
import { storedOutcome } from './journal-writer';
import { type ActivityContext } from './provider-call';

const inputSchema = z.object({ operationId: z.string().min(1).max(200), fromSequence: z.number().int().positive() });

/** Makes the activity. */
export function readStoredState(ctx: ActivityContext) {
  return async (input: { operationId: string; fromSequence: number }): Promise<StepOutcome> => {
    const parsed = inputSchema.safeParse(input);
    if (!parsed.success) throw new AsyncJobError('ASYNCJOB_ERR_INVALID_INPUT', issueText(parsed.error.issues));
    return storedOutcome(ctx.store, parsed.data.operationId, parsed.data.fromSequence);
  };
}
