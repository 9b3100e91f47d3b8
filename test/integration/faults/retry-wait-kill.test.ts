/**
 * F2 in a retry-driven status wait (`activities/retry-wait.ts`): the worker processes keep waits up to 100 ms in
 * their loop, so longer ones are retries of the status activity. A worker is SIGKILLed while the activity waits for
 * its next attempt, or while an attempt's read is in flight; a second worker finishes. Asserted from the
 * simulator's request log and the store's journal: one job, every counted status request answered in the journal
 * or journalled as the failed call the kill left, nothing answered lost, the result collected once.
 */
import { temporal } from '@temporalio/proto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../../src/core/operation';
import { STATUS_WAIT_FAILURE_TYPE } from '../../../src/core/poll-loop';
import { sleep, startFaultWorld, type FaultWorld, type WorkerProcess } from './fault-harness';

const { PendingActivityState } = temporal.api.enums.v1;
const LOOP_KEEPS_100_MS = { ASYNCJOB_POLL_LOOP_MAX_WAIT_MS: '100' };

const scripts = {
  steady: { steps: [{ state: 'running', polls: 5 }, { state: 'succeeded' }] },
  // The fourth status read is answered after 20 s: the kill lands while it is in flight.
  slow_fourth: {
    steps: [{ state: 'running', polls: 10 }, { state: 'succeeded' }],
    faults: [{ on: 'status', nth: 4, fault: { kind: 'delay', ms: 20_000 } }],
  },
};

async function storedRecord(world: FaultWorld, operationId: string): Promise<OperationRecord | undefined> {
  return (await world.store.getOperation(operationId))?.record as unknown as OperationRecord | undefined;
}

/** Polls (no fixed sleep) until `done` holds, or fails naming `what`. */
async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 60_000;
  while (!(await done())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** What the journal and the provider say of an operation's status requests. */
async function statusAccounts(world: FaultWorld, operationId: string) {
  const record = (await storedRecord(world, operationId))!;
  const observations = (await world.store.entries(operationId)).flatMap(({ entry }) =>
    entry.body.kind === 'observation' && entry.body.action === 'status' ? [entry.body] : [],
  );
  return {
    record,
    counted: record.used.statusRequests,
    answered: observations.filter((body) => body.transport === 'response').length,
    failed: observations.filter((body) => body.errorCategory === 'activity_failed').length,
    sent: world.jobRequests('rest', record.jobId!, 'status').length,
  };
}

describe('a worker killed during a retry-driven status wait', () => {
  let world: FaultWorld;
  /** The workers a test started: stopped after it, so the next test's kill reaches the worker that runs its read. */
  const started: WorkerProcess[] = [];
  const spawnWorker = (): WorkerProcess => {
    const worker = world.spawnWorker();
    started.push(worker);
    return worker;
  };

  beforeAll(async () => {
    world = await startFaultWorld('retrykill', { scenarios: { rest: { scripts } } as never, env: LOOP_KEEPS_100_MS });
  });
  afterEach(async () => {
    for (const worker of started.splice(0)) {
      worker.kill('SIGKILL');
      await worker.exited;
    }
  });
  afterAll(async () => world?.stop());

  /**
   * SIGKILLs `first`, starts a second worker and waits for the operation to succeed: one job, the result collected
   * once, the journal's chain intact; then its status accounts.
   */
  async function killAndFinish(first: WorkerProcess, operationId: string) {
    first.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await spawnWorker().ready;
    expect((await world.client.result(operationId)).localState).toBe('succeeded');
    const accounts = await statusAccounts(world, operationId);
    expect(world.sims.rest.jobsByToken(accounts.record.idempotencyToken)).toHaveLength(1);
    expect(world.jobRequests('rest', accounts.record.jobId!, 'result')).toHaveLength(1);
    expect((await world.store.verifyChains({ operationId })).breaks).toEqual([]);
    return accounts;
  }

  it('F2, B2: SIGKILL while the activity waits for its next attempt: the next attempt runs on the second worker, nothing lost, nothing failed', async () => {
    const first = spawnWorker();
    await first.ready;
    const request = world.request('rest', {
      script: 'steady',
      // Reads 2 s apart: the kill lands in the wait, well before the next attempt starts.
      policy: { baseDelayMs: 2_000, maxDelayMs: 2_000, minJitterRatio: 1, notFoundWindowMs: 2_000 },
    });
    await world.client.start(request);
    const handle = world.temporal.workflow.getHandle(request.operationId);
    await until('a status activity waiting for its next attempt after two reads', async () => {
      const pending = (await handle.describe()).raw.pendingActivities?.[0];
      const waiting =
        pending?.state === PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED &&
        pending.lastFailure?.applicationFailureInfo?.type === STATUS_WAIT_FAILURE_TYPE;
      return waiting && ((await storedRecord(world, request.operationId))?.used.statusRequests ?? 0) >= 2;
    });
    const accounts = await killAndFinish(first, request.operationId);
    expect(accounts).toMatchObject({ counted: 6, answered: 6, failed: 0, sent: 6 });
  });

  it('P4, F2, B2: SIGKILL while an attempt reads: the read stays counted, journalled as failed, and is planned again; one job, nothing answered lost', async () => {
    const first = spawnWorker();
    await first.ready;
    const request = world.request('rest', {
      script: 'slow_fourth',
      policy: { baseDelayMs: 300, maxDelayMs: 300, minJitterRatio: 1, notFoundWindowMs: 2_000 },
    });
    await world.client.start(request);
    await until('the fourth status read held at the provider', async () => world.sims.rest.heldRequests() === 1);
    const accounts = await killAndFinish(first, request.operationId);
    // B2: the read in flight at the kill is counted and journalled as the failed call; every other one answered.
    expect(accounts.failed).toBe(1);
    expect(accounts.counted).toBe(accounts.answered + accounts.failed);
    expect(accounts.sent).toBe(accounts.answered + 1);
    const failure = (await world.store.entries(request.operationId)).find(
      ({ entry }) => entry.body.kind === 'observation' && entry.body.errorCategory === 'activity_failed',
    );
    expect(failure?.entry.actor).toMatch(/^worker:/);
  });
});
