/**
 * The activity options of the workflow, written once: store calls and the provider lookup (local activities), and
 * provider calls (never retried by Temporal: the workflow decides every retry, so every request is counted, B2).
 */
import { proxyActivities, proxyLocalActivities, type ActivityOptions } from '@temporalio/workflow';
import type { AsyncJobActivities, ProviderFacts } from '../activities/types';
import { DESCRIBE_RETRY, PROVIDER_CALL_RETRY, STORE_CALL_RETRY } from '../core/loop-bounds';
import { PROVIDER_CALL_HEARTBEAT_TIMEOUT_MS } from '../core/poll-loop';

const storeRetry = { ...STORE_CALL_RETRY, nonRetryableErrorTypes: [...STORE_CALL_RETRY.nonRetryableErrorTypes] };
const describeRetry = { ...DESCRIBE_RETRY, nonRetryableErrorTypes: [...DESCRIBE_RETRY.nonRetryableErrorTypes] };

/**
 * The store calls (`recordIntent`, `appendJournal`, `readStoredState`) as local activities: they run in the workflow
 * task that needs them, so a step costs one marker event instead of an activity's three events and a workflow-task
 * round trip. Safe to retry: a write is idempotent by sequence, a read changes nothing.
 */
export const localStore = proxyLocalActivities<AsyncJobActivities>({
  startToCloseTimeout: '1 minute',
  retry: storeRetry,
});

/**
 * The provider lookup (`describeProvider`) as a local activity, for the same reason as {@link localStore}; given the
 * start, it records the intent too, so it is timed and retried as a store call.
 */
export const localDescribe = proxyLocalActivities<AsyncJobActivities>({
  startToCloseTimeout: '1 minute',
  retry: describeRetry,
}).describeProvider;

/** The token draw (`drawIdempotencyToken`) as a local activity: once, before anything is recorded. */
export const localDrawToken = proxyLocalActivities<AsyncJobActivities>({
  startToCloseTimeout: '10 seconds',
  retry: describeRetry,
}).drawIdempotencyToken;

/**
 * The wake of a status loop (`wakeStatusLoop`) as a local activity: it runs in the worker process that runs the
 * workflow's task, where a loop of the operation may be waiting, and publishes the wake to every other worker on a
 * PostgreSQL store. Tried once: the loop's cancellation, requested beside it, ends the loop anyway.
 */
export const localWakeStatusLoop = proxyLocalActivities<AsyncJobActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 1 },
}).wakeStatusLoop;

/**
 * The activity options of provider calls: never retried by Temporal, the workflow decides every retry, so every
 * request is counted (B2); a failed attempt is planned again by `afterActivityFailure`. Each call passes them with
 * its own summary to `executeWithOptions`. On the provider's own queue when its facts name one (a rate-limited
 * provider), else on the workflow's queue, where the server hands the call back eagerly (F9).
 */
export function providerCallOptions(facts: ProviderFacts) {
  return {
    ...(facts.taskQueue !== undefined ? { taskQueue: facts.taskQueue } : {}),
    startToCloseTimeout: '10 minutes',
    // Provider calls heartbeat while in flight (every 10 s, `activities/heartbeat.ts`): a dead worker is noticed
    // within 30 s (F2, F5). Not less: a live create timed out is a create of unknown fate (reconcile, maybe a human),
    // far costlier than a slower notice; at 10 s, workers starved of CPU (load 15 on 2 cores) had live creates timed out.
    heartbeatTimeout: PROVIDER_CALL_HEARTBEAT_TIMEOUT_MS,
    retry: { ...PROVIDER_CALL_RETRY },
  } as const;
}

/** The provider-call activities, proxied with their options (see {@link providerCallOptions}). */
export const providerActivities = (options: ActivityOptions) => proxyActivities<AsyncJobActivities>(options);
