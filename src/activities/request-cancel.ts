/**
 * The `requestCancel` activity (X1-X3): the one cancel request, sent with the stored job ID, and `afterCancel`.
 * A retried activity that finds the cancel recorded returns the record and never sends it twice.
 */
import { type StepOutcome } from '../core/step-outcome';
import { afterCancel } from '../core/step';
import { type ProviderCallInput } from './types';
import { inCallFrame } from './call-frame';
import { requestFactsOf, sendOnce, type ActivityContext } from './provider-call';

/** Makes the activity. */
export function requestCancel(ctx: ActivityContext) {
  return async (input: ProviderCallInput): Promise<StepOutcome> => {
    return inCallFrame(ctx, input, 'cancel', async (record, { adapter, http }, step) => {
      const built =
        record.jobId === undefined
          ? ({
              kind: 'refused',
              errorCategory: 'missing_input',
              problem: 'the record names no provider job to cancel',
            } as const)
          : adapter.buildCancelRequest({
              ...requestFactsOf(record, ctx.clock()),
              jobId: record.jobId,
              ...(record.remote.statusUrl !== undefined ? { statusUrl: record.remote.statusUrl } : {}),
            });
      const { observation } = await sendOnce(ctx, http, adapter, 'cancel', built, record, (answer) =>
        adapter.interpretCancel(answer, record.jobId !== undefined ? { jobId: record.jobId } : {}),
      );
      return afterCancel(record, observation, step);
    });
  };
}
