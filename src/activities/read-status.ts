/**
 * The `readStatus` activity (P1-P9, T3): one status request for the reservation the workflow made (B2), the
 * answer interpreted by the adapter, and the planner's decision recorded with the observation (`afterStatus`).
 */
import { type OperationRecord } from '../core/operation';
import { afterStatus } from '../core/step';
import { type ProviderCallInput } from './types';
import { alreadyRecorded, commitStep, parseInputRecord } from './journal-writer';
import { sendOnce, stepContext, type ActivityContext } from './provider-call';

/** Makes the activity. */
export function readStatus(ctx: ActivityContext) {
  return async (input: ProviderCallInput): Promise<OperationRecord> => {
    const record = parseInputRecord(input.record);
    const provider = ctx.providers.get(record.provider);
    const recorded = await alreadyRecorded(ctx.store, record);
    if (recorded !== undefined) return recorded;
    const { adapter, http } = provider;
    const built = adapter.buildStatusRequest({
      ...(record.jobId !== undefined ? { jobId: record.jobId } : {}),
      ...(record.remote.statusUrl !== undefined ? { statusUrl: record.remote.statusUrl } : {}),
    });
    const { observation } = await sendOnce(ctx, http, adapter, 'status', built, record, (answer) =>
      adapter.interpretStatus(answer, record.jobId !== undefined ? { jobId: record.jobId } : {}),
    );
    const step = afterStatus(record, observation, stepContext(ctx, provider, input.random));
    return commitStep(ctx.store, step.record, step.entries, ctx.clock());
  };
}
