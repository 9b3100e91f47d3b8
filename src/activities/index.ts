/**
 * The activities of asyncjob, made by a factory that receives their dependencies (the store, the provider
 * registry, the artifact store, a clock and a logger), as in temporalio/samples-typescript. Each activity does
 * at most one outside call, records what it observed in the same activity, and is idempotent (see `types.ts`).
 * Every failure reaches Temporal through `to-failure.ts` with our stable code as its type.
 */
import { appendJournal } from './append-journal';
import { collectResult } from './collect-result';
import { createJob } from './create-job';
import { describeProvider } from './describe-provider';
import { drawIdempotencyToken } from './draw-idempotency-token';
import { activityContext, type ActivityDependencies } from './provider-call';
import { pollStatus } from './poll-status';
import { readStatus } from './read-status';
import { readStoredState } from './read-stored-state';
import { reconcileJob } from './reconcile-job';
import { recordIntent } from './record-intent';
import { requestCancel } from './request-cancel';
import { withFailures } from './to-failure';
import { wakeStatusLoop } from './wake-status-loop';
import { type AsyncJobActivities } from './types';

export { type ActivityDependencies, type ActivityLogger } from './provider-call';
export { toFailure, UNEXPECTED_FAILURE_TYPE } from './to-failure';
export type { AsyncJobActivities, ProviderFacts } from './types';

/** Makes the activities over their dependencies. Register the result with a worker: `activities: createActivities(deps)`. */
export function createActivities(deps: ActivityDependencies): AsyncJobActivities {
  const ctx = activityContext(deps);
  return {
    describeProvider: withFailures(describeProvider(ctx)),
    drawIdempotencyToken: withFailures(drawIdempotencyToken()),
    recordIntent: withFailures(recordIntent(ctx)),
    appendJournal: withFailures(appendJournal(ctx)),
    createJob: withFailures(createJob(ctx)),
    reconcileJob: withFailures(reconcileJob(ctx)),
    readStatus: withFailures(readStatus(ctx)),
    pollStatus: withFailures(pollStatus(ctx)),
    readStoredState: withFailures(readStoredState(ctx)),
    wakeStatusLoop: withFailures(wakeStatusLoop(ctx)),
    requestCancel: withFailures(requestCancel(ctx)),
    collectResult: withFailures(collectResult(ctx)),
  };
}
