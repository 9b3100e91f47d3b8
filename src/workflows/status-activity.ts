/**
 * The workflow's side of the activities that hold an operation while it is polled: the status activity
 * (`pollStatus`), scheduled for a read the workflow reserved or a wait it hands over, and the create that reads on
 * (`createJob` with its `loop`). Asks for the operation back when a message arrives, and takes up what the store
 * holds when such an activity ends without an outcome.
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
import {
  handedBackUnread,
  readOnAfterCreateLimits,
  statusActivityLimits,
  statusHeartbeatTimeoutMs,
  storeIsAhead,
} from '../core/poll-loop';
import { afterActivityFailure } from '../core/step';
import { foldOutcome, type StepOutcome } from '../core/step-outcome';
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
  await holdInActivity(
    run,
    facts,
    () =>
      providerActivities(options).pollStatus.executeWithOptions({ ...options, summary }, [
        { ...run.callInput(), ...statusActivityLimits(facts.pollLoop!) },
      ]),
    async (err) => {
      await adoptStoredState(run, fromSequence);
      await journalLostRead(run, String(err.cause?.message ?? err.message));
    },
  );
}

/**
 * The create, whose activity reads on while the reads are due within `readOnAfterCreateLimits` (a job done by then
 * costs one activity, no workflow task between create and result). A message asks for the operation back by the
 * wake alone, never Temporal's cancellation: a create cancelled before its activity started (waiting in a
 * rate-limited provider's queue) would end as a failure that cannot say whether the request was sent, where it never
 * was. A wake that misses (another process on a store that relays none) waits out the read-on's 2 s at most. When
 * the activity ends without an outcome, what the store holds is adopted when it holds the create; otherwise the
 * create failed as any provider call fails (nothing or maybe sent, planned again, B2).
 */
export async function createAndReadOn(run: OperationRun, facts: ProviderFacts, summary: string): Promise<void> {
  const options = providerCallOptions(facts);
  const fromSequence = run.record.journal.nextSequence;
  await holdInActivity(
    run,
    facts,
    () =>
      providerActivities(options).createJob.executeWithOptions({ ...options, summary }, [
        { ...run.startedCallInput(), ...readOnAfterCreateLimits(facts.pollLoop!) },
      ]),
    async (err) => {
      if (!(await adoptStoredState(run, fromSequence))) return run.callFailed('create', err);
      await journalLostRead(run, String(err.cause?.message ?? err.message));
    },
    'wake',
  );
}

/**
 * Runs an activity that holds the operation (`call`) until it returns, asking for the operation back when a message
 * arrives ({@link askLoopBack}; `askBack: 'wake'` without the cancellation), and folds what it returns; a status read
 * it handed back unread is waited for here. An activity that ends without an outcome (a worker lost, a wait
 * cancelled, its attempts spent) goes to `lost`.
 */
async function holdInActivity(
  run: OperationRun,
  facts: ProviderFacts,
  call: () => Promise<StepOutcome>,
  lost: (err: ActivityFailure) => Promise<void>,
  askBack: 'cancel_and_wake' | 'wake' = 'cancel_and_wake',
): Promise<void> {
  const scope = new CancellationScope();
  let ended = false;
  const holding = scope.run(call);
  const markEnded = () => void (ended = true);
  holding.then(markEnded, markEnded);
  await condition(() => ended || run.inbox.hasPending());
  if (!ended) await askLoopBack(run, askBack === 'cancel_and_wake' ? scope : undefined);
  try {
    const before = run.record;
    run.record = foldOutcome(run.record, await holding);
    const untilMs = handedBackUnread(before, run.record, Date.now(), facts.pollLoop!);
    if (untilMs !== undefined && !run.inbox.hasPending()) await run.sleepUntil(untilMs, Date.now());
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    if (err.cause instanceof ApplicationFailure && err.cause.nonRetryable) throw err.cause;
    await lost(err);
  }
}

/**
 * Asks the status loop for the operation back: Temporal's cancellation of `scope`, given one, which reaches the loop
 * at its next heartbeat sent (every 10 to 40 s, `activities/heartbeat.ts`), and the wake (`activities/loop-wake.ts`),
 * which reaches a loop running in this worker process at once and, on a PostgreSQL store, one in any other worker
 * within moments. A wake that fails changes nothing: the cancellation, or the loop's own bound, ends it.
 */
async function askLoopBack(run: OperationRun, scope: CancellationScope | undefined): Promise<void> {
  scope?.cancel();
  if (!patched(LOOP_WAKE_PATCH)) return;
  try {
    await localWakeStatusLoop({ operationId: run.record.operationId });
  } catch (err) {
    log.warn('status loop not woken; its cancellation or its bound ends it', { error: String(err) });
  }
}

/** After an activity that held the operation ended without an outcome: adopts the store's state when it is ahead. */
async function adoptStoredState(run: OperationRun, fromSequence: number): Promise<boolean> {
  const stored = await localStore.readStoredState({ operationId: run.record.operationId, fromSequence });
  if (!storeIsAhead(run.record, stored.state)) return false;
  run.record = foldOutcome(run.record, stored);
  return true;
}

/** A status read reserved and never recorded (its activity ended without an outcome) is journalled as failed (B2). */
async function journalLostRead(run: OperationRun, message: string): Promise<void> {
  if (run.record.schedule.reservedAtMs === undefined) return;
  log.warn('status loop ended without an outcome; planned again', { error: message });
  await run.commit(afterActivityFailure(run.record, 'status', message, run.stepContext()));
}
