/**
 * Fast messages across worker PROCESSES sharing a PostgreSQL store: a cancel that one worker's workflow receives
 * reaches a status loop waiting in another worker within moments (the store's loop wake, `activities/loop-wake.ts`),
 * not at the loop's first heartbeat (30 s into the loop at this policy). Each cancel is sent once the loop runs, a
 * second into it, so Temporal's own cancellation would come half a minute later; the test asserts the provider's own
 * clock of the cancel request, and that some loops were woken in a process other than their workflow's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresFleet, type FaultWorld, type PostgresFleet, type WorkerProcess } from './fault-harness';

const url = process.env.ASYNCJOB_TEST_PG_URL;
const WORKERS = 2;
/** Operations per round; rounds go on until some loop ran in another process than its workflow's task. */
const PER_ROUND = 4;
const MAX_ROUNDS = 4;
/** Well under the 29 s the loop's first heartbeat would take, far over the wake's milliseconds on a busy machine. */
const CANCEL_REACHES_LOOP_MS = 4_000;
/** A pending activity's state when it runs (`PENDING_ACTIVITY_STATE_STARTED`). */
const STARTED = 2;

const scripts = { cancellable: { steps: [{ state: 'running' }], cancel: { afterMs: 50, outcome: 'cancelled' } } };

const title = url
  ? 'a cancel reaches a status loop in another worker process at once (PostgreSQL)'
  : 'a cancel reaches a status loop in another worker process at once (PostgreSQL): SKIPPED because ASYNCJOB_TEST_PG_URL is unset (eval "$(bash scripts/postgres-for-tests.sh start)")';

describe.skipIf(!url)(title, () => {
  let fleet: PostgresFleet;
  let world: FaultWorld;
  let workers: WorkerProcess[] = [];

  beforeAll(async () => {
    fleet = await startPostgresFleet('fleet-wake', url!, {
      scenarios: { rest: { scripts } } as never,
      workers: WORKERS,
      // Under a rate limit the provider calls run on the provider's own queue, where either worker may take a loop
      // (F9). Without one they are dispatched eagerly to the worker that ran the workflow's task, so a loop is in
      // another process only after its workflow moved (an eviction, a restart, a retry-driven wait's attempt).
      env: { ASYNCJOB_PROVIDER_RATE_LIMIT: '100' },
    });
    ({ world, workers } = fleet);
  });
  afterAll(async () => fleet?.stop());

  /**
   * Until the operation's status activity has run for a second: its loop waits for its first read, 20 s away, and
   * beats first 30 s into it (`beatEveryMs` of its 50 s heartbeat timeout), so no heartbeat brings a cancel sooner.
   */
  async function untilLoopRuns(operationId: string): Promise<void> {
    const end = Date.now() + 60_000;
    let seenRunningAtMs: number | undefined;
    for (;;) {
      const { raw: d } = await world.temporal.workflow.getHandle(operationId).describe();
      const pending = d.pendingActivities?.find((a) => a.activityType?.name === 'pollStatus');
      if (pending?.state === STARTED) seenRunningAtMs ??= Date.now();
      if (seenRunningAtMs !== undefined && Date.now() - seenRunningAtMs >= 1_000) {
        expect(pending?.lastHeartbeatTime ?? null).toBeNull();
        return;
      }
      if (Date.now() > end) throw new Error(`${operationId}: no status loop running within 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Starts one operation, cancels it while its loop waits; the time the cancel took to reach the provider. */
  async function cancelWhileLooping(): Promise<{ operationId: string; tookMs: number }> {
    // Reads 20 s apart, all inside the loop (30 s): the loop is waiting when the cancel comes.
    const request = world.request('rest', {
      script: 'cancellable',
      policy: { baseDelayMs: 20_000, maxDelayMs: 20_000, minJitterRatio: 1, cancelDeadlineMs: 60_000 },
    });
    await world.client.start(request);
    await untilLoopRuns(request.operationId);
    const cancelledAtMs = Date.now();
    await world.client.cancel(request.operationId, {
      requestedBy: 'alice@example.com',
      reason: 'no longer needed',
      expectedEffect: 'the report is not produced',
    });
    const summary = await world.client.result(request.operationId);
    expect(summary.localState).toBe('cancelled');
    const cancels = world.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(summary.jobId!));
    expect(cancels).toHaveLength(1);
    return { operationId: request.operationId, tookMs: cancels[0]!.atMs - cancelledAtMs };
  }

  it('X1, P4: every cancel reaches the provider within moments, including those whose loop ran in the other worker', async () => {
    const relayed = () =>
      workers.flatMap((w) =>
        [
          ...w.logs().matchAll(/"status loop woken for a message another worker received".*?"operationId":"([^"]+)"/g),
        ].map((m) => m[1]),
      );
    const results: { operationId: string; tookMs: number }[] = [];
    for (let round = 0; round < MAX_ROUNDS && relayed().length === 0; round += 1)
      results.push(...(await Promise.all(Array.from({ length: PER_ROUND }, () => cancelWhileLooping()))));
    expect(relayed().length, 'no loop ran in another process than its workflow in any round').toBeGreaterThan(0);
    for (const result of results) expect(result.tookMs, result.operationId).toBeLessThan(CANCEL_REACHES_LOOP_MS);
  });
});
