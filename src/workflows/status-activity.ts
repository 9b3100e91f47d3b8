/**
 * The workflow's side of the status activity (`pollStatus`): scheduling it for a read the workflow reserved or a
 * wait it hands over, asking for the operation back when a message arrives, and taking up what the store holds
 * when the activity ends without an outcome.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  log,
  patched,
} from '@temporalio/workflow';
import type { ProviderFacts } from '../activities/types';
import { retryDrivenWaitRetry } from '../core/loop-bounds';
import { handedBackUnread, statusActivityLimits, statusHeartbeatTimeoutMs, storeIsAhead } from '../core/poll-loop';
import { afterActivityFailure } from '../core/step';
import { foldOutcome } from '../core/step-outcome';
import { localStore, localWakeStatusLoop, providerActivities, providerCallOptions } from './activity-options';
import type { OperationRun } from './operation-run';

/** The in-process wake of a status loop on a message (`askLoopBack`): histories from before it replay without. */
const LOOP_WAKE_PATCH = 'asyncjob-message-wakes-loop';

/**
 * Status reads in one activity while the waits are short (`core/poll-loop.ts`), from a read the workflow reserved
 * or from a wait it hands over (no durable timer then); with `pollLoop.retryWaits`, longer waits are retries of the
 * same activity (`activities/retry-wait.ts`), which returns only on a change the workflow must see. A message asks
 * for the operation back ({@link askLoopBack}): the activity finishes any read in flight, records it and returns the
 * stored state; an activity waiting for its next attempt is cancelled at once by the server. When it ends without
 * an outcome (a worker lost mid-loop, a wait cancelled, its attempts spent), the workflow adopts what the store
 * holds and, when a read was reserved and never recorded, journals the failed call as for any provider call (B2).
 */
export async function pollInActivity(run: OperationRun, facts: ProviderFacts, summary: string): Promise<void> {
  const options = {
    ...providerCallOptions(facts),
    heartbeatTimeout: statusHeartbeatTimeoutMs(run.record, facts.pollLoop!),
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    ...(facts.pollLoop?.retryWaits === true ? { retry: retryDrivenWaitRetry(run.record) } : {}),
  };
  const fromSequence = run.record.journal.nextSequence;
  const scope = new CancellationScope();
  let ended = false;
  const polling = scope.run(() =>
    providerActivities(options).pollStatus.executeWithOptions({ ...options, summary }, [
      { ...run.callInput(), ...statusActivityLimits(facts.pollLoop!) },
    ]),
  );
  const markEnded = () => void (ended = true);
  polling.then(markEnded, markEnded);
  await condition(() => ended || run.inbox.hasPending());
  if (!ended) await askLoopBack(run, scope);
  try {
    const before = run.record;
    run.record = foldOutcome(run.record, await polling);
    const untilMs = handedBackUnread(before, run.record, Date.now(), facts.pollLoop!);
    if (untilMs !== undefined && !run.inbox.hasPending()) await run.sleepUntil(untilMs, Date.now());
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    if (err.cause instanceof ApplicationFailure && err.cause.nonRetryable) throw err.cause;
    await adoptStoredState(run, fromSequence, String(err.cause?.message ?? err.message));
  }
}

/**
 * Asks the status loop for the operation back: Temporal's cancellation, which reaches the loop at its next
 * heartbeat sent (every 10 to 40 s, `activities/heartbeat.ts`), and the wake (`activities/loop-wake.ts`), which
 * reaches a loop running in this worker process at once and, on a PostgreSQL store, one in any other worker within
 * moments. A wake that fails changes nothing: the cancellation is on its way.
 */
async function askLoopBack(run: OperationRun, scope: CancellationScope): Promise<void> {
  scope.cancel();
  if (!patched(LOOP_WAKE_PATCH)) return;
  try {
    await localWakeStatusLoop({ operationId: run.record.operationId });
  } catch (err) {
    log.warn('status loop not woken; its cancellation ends it', { error: String(err) });
  }
}

/** After a status loop ended without an outcome: the store's state, and a reserved read journalled as failed. */
async function adoptStoredState(run: OperationRun, fromSequence: number, message: string): Promise<void> {
  const stored = await localStore.readStoredState({ operationId: run.record.operationId, fromSequence });
  if (storeIsAhead(run.record, stored.state)) run.record = foldOutcome(run.record, stored);
  if (run.record.schedule.reservedAtMs === undefined) return;
  log.warn('status loop ended without an outcome; planned again', { error: message });
  await run.commit(afterActivityFailure(run.record, 'status', message, run.stepContext()));
}
