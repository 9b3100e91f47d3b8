/**
 * The pending status activity's last answer (P8): while the status activity holds a running job, the workflow's copy
 * of it is refreshed only once it is 30 status reads and 15 s old and something it shows moved, and the activity
 * carries each answer in its heartbeat details and in a waiting attempt's failure, which Temporal keeps in the
 * workflow's mutable state (no history). Reading it costs one `DescribeWorkflowExecution` after the query, made only
 * for a record still polled.
 */
import type { Payload } from '@temporalio/client';
import { isPolling, withPendingRead } from '../core/poll-loop';
import type { OperationRecord } from '../core/operation';
import { type ClientContext } from './context';
import { describeRaw } from './describe';
import { decodePayloads } from './history';

/** The name of the status activity, as the workflow schedules it. */
const STATUS_ACTIVITY = 'pollStatus';

/** The first of `payloads`, decoded as every payload the client reads (`decodePayloads`). */
async function firstDecoded(ctx: ClientContext, payloads: Payload[] | null | undefined): Promise<unknown> {
  return payloads?.length ? (await decodePayloads(ctx, payloads.slice(0, 1)))[0] : undefined;
}

/** The details the pending status activity carries, decoded, in order: its heartbeat's, then its last failure's. */
async function pendingDetails(ctx: ClientContext, operationId: string): Promise<unknown[]> {
  const { raw } = await describeRaw(ctx, operationId);
  const pending = raw.pendingActivities?.find((activity) => activity.activityType?.name === STATUS_ACTIVITY);
  if (!pending) return [];
  const failureDetails = pending.lastFailure?.applicationFailureInfo?.details?.payloads;
  return Promise.all([
    firstDecoded(ctx, pending.heartbeatDetails?.payloads as Payload[] | undefined),
    firstDecoded(ctx, failureDetails as Payload[] | undefined),
  ]);
}

/**
 * The record the query returned with the pending status activity's newest answer over it (`withPendingRead`), when
 * the record is still polled. The query's record is the authority: when the description cannot be read or decoded,
 * it is returned as it is.
 */
export async function withPendingAnswer(
  ctx: ClientContext,
  operationId: string,
  queried: Promise<OperationRecord>,
): Promise<OperationRecord> {
  const record = await queried;
  if (!isPolling(record)) return record;
  return withPendingRead(record, await pendingDetails(ctx, operationId).catch(() => []));
}
