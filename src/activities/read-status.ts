/**
 * The `readStatus` activity (P1-P9, T3): one status request for the reservation the workflow made (B2), the
 * answer interpreted by the adapter, and the planner's decision recorded with the observation (`afterStatus`).
 */
import { type StatusContext } from '../adapters/providers';
import { type RegisteredProvider } from '../adapters/providers/registry';
import { type OperationRecord } from '../core/operation';
import { type StepOutcome } from '../core/step-outcome';
import { afterStatus, type StepContext, type StepResult } from '../core/step';
import { effectiveDeadlineMs } from '../core/wait-planner';
import { type ProviderCallInput } from './types';
import { inCallFrame } from './call-frame';
import { deadlinePassed, overtakenByDeadline, requestFactsOf, sendOnce, type ActivityContext } from './provider-call';
import { stageInlineResult } from './stage-inline';

/** What interpreting a status answer needs from the record: the job, its poll URL and reading, the create's URLs (V1, V2). */
export function statusContextOf(record: OperationRecord): StatusContext {
  const { remote } = record;
  return {
    ...(record.jobId !== undefined ? { jobId: record.jobId } : {}),
    ...(record.variables !== undefined ? { variables: record.variables } : {}),
    ...(remote.statusUrl !== undefined ? { statusUrl: remote.statusUrl } : {}),
    ...(remote.pollReading !== undefined ? { pollReading: remote.pollReading } : {}),
    ...(remote.createUrls?.request !== undefined ? { requestUrl: remote.createUrls.request } : {}),
    ...(remote.createUrls?.headers !== undefined ? { createHeaders: remote.createUrls.headers } : {}),
  };
}

/**
 * One status read for a record holding its reservation (B2): the deadline checked again right before sending (the
 * reservation was made earlier; a request never leaves after the deadline, S3, and the reservation stays counted),
 * the answer interpreted by the adapter, and the planner's decision (`afterStatus`). Records nothing itself.
 */
export async function sendStatusRead(
  ctx: ActivityContext,
  record: OperationRecord,
  { adapter, http }: RegisteredProvider,
  step: StepContext,
): Promise<StepResult> {
  const nowMs = ctx.clock();
  const deadlineMs = effectiveDeadlineMs(record);
  if (nowMs >= deadlineMs) return afterStatus(record, deadlinePassed('status', nowMs), { ...step, nowMs });
  const built = adapter.buildStatusRequest({
    ...requestFactsOf(record, nowMs),
    ...(record.jobId !== undefined ? { jobId: record.jobId } : {}),
    ...(record.remote.statusUrl !== undefined ? { statusUrl: record.remote.statusUrl } : {}),
  });
  const { observation } = await sendOnce(
    ctx,
    http,
    adapter,
    'status',
    built,
    record,
    (answer) => adapter.interpretStatus(answer, statusContextOf(record)),
    deadlineMs,
  );
  if (overtakenByDeadline(observation))
    return afterStatus(record, observation, { ...step, nowMs: observation.receivedAtMs });
  return afterStatus(record, await stageInlineResult(ctx, record, observation), step);
}

/** Makes the activity: one status read for the reservation the workflow made. */
export function readStatus(ctx: ActivityContext) {
  return async (input: ProviderCallInput): Promise<StepOutcome> =>
    inCallFrame(ctx, input, 'status', (record, provider, step) => sendStatusRead(ctx, record, provider, step));
}
