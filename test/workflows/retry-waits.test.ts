/**
 * Retry-driven status waits (`activities/retry-wait.ts`) on a real server: the worker's loop keeps waits up to 100 ms,
 * so every longer wait is a retry of the status activity. Asserted from the simulator's request log, the store's
 * journal and the workflow's history: reads happen at their planned times without a timer or workflow task each,
 * the budget and the deadline stop them exactly, and a cancel ends a wait at once.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactFolderOf } from '../../src/adapters/artifacts/artifact-store';
import type { PollStatusInput } from '../../src/activities/poll-status';
import { STATUS_WAIT_FAILURE_TYPE } from '../../src/core/poll-loop';
import { stateQuery } from '../../src/workflows/messages';
import { startHarness, type Harness } from './harness';
import { expectBudgetStop, expectDeadlineStop, journal, scheduledActivities } from './status-loop-checks';

/**
 * The status activity the workflow waits on, once it waits for its next attempt after a failed (waiting) one: the
 * message of that attempt's failure, as the Web UI shows it on the pending activity.
 */
async function untilWaitingForAttempt(h: Harness, operationId: string): Promise<string> {
  const end = Date.now() + 60_000;
  for (;;) {
    const { raw } = await h.env.client.workflow.getHandle(operationId).describe();
    const pending = raw.pendingActivities?.[0];
    if (pending?.lastFailure?.applicationFailureInfo?.type === STATUS_WAIT_FAILURE_TYPE && (pending.attempt ?? 0) > 1)
      return pending.lastFailure.message ?? '';
    if (Date.now() > end) throw new Error(`${operationId}: no status activity waiting for its next attempt`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Runs a job that succeeds on its ninth status read, reads 300 ms apart, to its success. */
async function nineReadsSucceeded(h: Harness) {
  const request = h.request('rest', {
    script: 'nine_reads',
    policy: { baseDelayMs: 300, maxDelayMs: 300, minJitterRatio: 1 },
  });
  await h.client.start(request);
  const summary = await h.client.result(request.operationId);
  expect(summary.localState).toBe('succeeded');
  return { request, summary, record: await h.client.get(request.operationId) };
}

async function historyEvents(h: Harness, operationId: string) {
  return (await h.env.client.workflow.getHandle(operationId).fetchHistory()).events ?? [];
}

describe('status waits as retries of one activity (P4, B2)', () => {
  let h: Harness;

  beforeAll(async () => {
    const scripts = {
      nine_reads: { steps: [{ state: 'running', polls: 8 }, { state: 'succeeded' }] },
      forever: { steps: [{ state: 'running' }] },
      cancellable: { steps: [{ state: 'running' }], cancel: { afterMs: 50, outcome: 'cancelled' } },
      progressing: {
        steps: [
          { state: 'running', polls: 2, progress: 20 },
          { state: 'running', progress: 60 },
        ],
      },
    };
    h = await startHarness('retry-waits', {
      scenarios: { rest: { scripts } } as never,
      pollLoop: { maxWaitMs: 100, maxLoopMs: 60_000, retryWaits: true },
    });
  });
  afterAll(async () => h?.stop());

  it('P4: reads 300 ms apart are attempts of one activity, which collects the result: no timer, no workflow task between them, each read at its planned time', async () => {
    const { request, summary, record } = await nineReadsSucceeded(h);
    const reads = h.statusReads('rest', record.jobId);
    expect(reads).toHaveLength(9);
    expect(record.used.statusRequests).toBe(9);
    // All nine reads are attempts of one activity, which also collected the result its last read announced: read 1
    // leaving `accepted` waits for the copy's refresh (P8), and no collect activity or workflow turn comes between.
    expect(await scheduledActivities(h, request.operationId)).toEqual(['createJob', 'pollStatus']);
    expect(summary.result?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(h.sims.rest.requests({ action: 'result' }).filter((r) => r.jobId?.endsWith(record.jobId!))).toHaveLength(1);
    const events = await historyEvents(h, request.operationId);
    expect(events.some((event) => event.timerStartedEventAttributes)).toBe(false);
    const attempts = events.flatMap((event) => event.activityTaskStartedEventAttributes?.attempt ?? []);
    expect(Math.max(...attempts)).toBeGreaterThanOrEqual(8);
    // Each read waited its planned 300 ms (Temporal's own backoff would have doubled from 1 s).
    const observed = (await journal(h, request.operationId)).filter(
      (entry) => entry.body.kind === 'observation' && entry.body.action === 'status',
    );
    for (const [index, read] of reads.slice(2).entries()) {
      const plannedAtMs = Date.parse((observed[index + 1]!.body as { nextPollAt: string }).nextPollAt);
      expect(read.atMs).toBeGreaterThanOrEqual(plannedAtMs);
      expect(read.atMs - plannedAtMs).toBeLessThan(5_000);
    }
  });

  it('S4, B2: the budget is reached in a retry-driven wait: exactly maxStatusRequests reads, the stop recorded by the worker', async () => {
    const request = h.request('rest', {
      script: 'forever',
      policy: { baseDelayMs: 200, maxDelayMs: 200, maxStatusRequests: 6, decisionDeadlineMs: 300 },
    });
    await h.client.start(request);
    await expectBudgetStop(h, request.operationId, 6);
  });

  it('S3, B2: the deadline is reached in a retry-driven wait: no read at or after it, every counted read sent or unused', async () => {
    const request = h.request('rest', {
      script: 'forever',
      // A create is never written after its deadline (I3): all of the window, for a loaded machine.
      createDeadline: { afterMs: 3_000 },
      resultDeadline: { afterMs: 3_000 },
      policy: { baseDelayMs: 250, maxDelayMs: 250, decisionDeadlineMs: 300 },
    });
    await h.client.start(request);
    await expectDeadlineStop(h, request.operationId);
  });

  it('S5: a failure of ours collecting inside the status activity is journalled once as the collect activity failed, and escalates at the transport-failure budget', async () => {
    const request = h.request('rest', {
      script: 'nine_reads',
      policy: {
        baseDelayMs: 300,
        maxDelayMs: 300,
        minJitterRatio: 1,
        maxTransportFailures: 1,
        decisionDeadlineMs: 300,
      },
    });
    // A file where the worker makes the operation's artifact folder: the collect fails with our error.
    const folder = path.join(h.dataDir, 'artifacts', artifactFolderOf(request.operationId));
    await mkdir(path.dirname(folder), { recursive: true });
    await writeFile(folder, 'not a folder');
    await h.client.start(request);
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('escalated');
    const failures = (await journal(h, request.operationId)).filter(
      (entry) => entry.body.kind === 'observation' && entry.body.errorCategory === 'activity_failed',
    );
    expect(failures).toHaveLength(1);
    expect(failures[0]!.actor).toMatch(/^worker:/);
    expect(JSON.stringify(failures[0]!.body)).toContain('ASYNCJOB_ERR_ARTIFACT_FAILED');
    // It failed before the download was written: nothing was sent.
    expect(failures[0]!.body).toMatchObject({ action: 'collect', transport: 'not_sent' });
    // Never retried by Temporal: no activity failed in history, and the status activity ran no attempt for it.
    const events = await historyEvents(h, request.operationId);
    expect(events.some((event) => event.activityTaskFailedEventAttributes)).toBe(false);
    expect(await scheduledActivities(h, request.operationId)).not.toContain('collectResult');
  });

  it("P8: between refreshes of the workflow's copy, the client shows the pending activity's last answer over it", async () => {
    const request = h.request('rest', {
      script: 'progressing',
      policy: { baseDelayMs: 300, maxDelayMs: 300, minJitterRatio: 1 },
    });
    await h.client.start(request);
    const workflowCopy = () => h.env.client.workflow.getHandle(request.operationId).query(stateQuery);
    let shown = await h.client.get(request.operationId);
    while (shown.remote.progress !== 0.6) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      shown = await h.client.get(request.operationId);
    }
    // Three reads and more, far fewer than a refresh needs: the workflow still holds the copy it handed over.
    const copy = await workflowCopy();
    expect(copy.localState).toBe('accepted');
    expect(copy.remote.progress).not.toBe(0.6);
    expect(shown).toMatchObject({ localState: 'observing', remote: { state: 'running', progress: 0.6 } });
    expect(shown.used.statusRequests).toBeGreaterThanOrEqual(3);
    expect(shown.used.statusRequests).toBeLessThanOrEqual((await journal(h, request.operationId)).length);
    // A watcher sees the same, and never goes back to the copy's older state.
    for await (const watched of h.client.watch(request.operationId, { intervalMs: 50, timeoutMs: 2_000 })) {
      expect(watched.localState).toBe('observing');
      expect(watched.remote.progress).toBe(0.6);
      break;
    }
    await h.env.client.workflow.getHandle(request.operationId).terminate('test over');
  });

  it("X1, B2, P8: the attempt waiting names the job's last answer, and a cancel arriving meanwhile is taken at once: the cancel sent once, every counted read accounted for", async () => {
    const request = h.request('rest', {
      script: 'cancellable',
      // Reads 30 s apart: a cancel that had to wait for the next attempt would take that long.
      policy: { baseDelayMs: 30_000, maxDelayMs: 30_000, minJitterRatio: 1, cancelDeadlineMs: 10_000 },
    });
    await h.client.start(request);
    // P8: the pending activity names the job's last answer, which the workflow's copy shows only at its refresh.
    expect(await untilWaitingForAttempt(h, request.operationId)).toMatch(
      /^(accepted|observing) \(provider: "running"\) after \d+ status reads?; the next status read is due in \d+ ms$/,
    );
    const cancelledAtMs = Date.now();
    await h.client.cancel(request.operationId, {
      requestedBy: 'alice@example.com',
      reason: 'no longer needed',
      expectedEffect: 'the report is not produced',
    });
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('cancelled');
    const cancels = h.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(summary.jobId!));
    expect(cancels).toHaveLength(1);
    expect(cancels[0]!.atMs - cancelledAtMs).toBeLessThan(15_000);
    const record = await h.client.get(request.operationId);
    expect(h.statusReads('rest', record.jobId)).toHaveLength(record.used.statusRequests);
  });
});

describe('an operation with retry waits served by a worker of an earlier version (upgrades)', () => {
  let h: Harness;

  beforeAll(async () => {
    const scripts = { nine_reads: { steps: [{ state: 'running', polls: 8 }, { state: 'succeeded' }] } };
    h = await startHarness('earlier-worker', {
      scenarios: { rest: { scripts } } as never,
      pollLoop: { maxWaitMs: 100, maxLoopMs: 60_000, retryWaits: true },
      // The status activity as an earlier version runs it: it knows nothing of retryWaits and ignores it.
      activities: (made) => ({
        ...made,
        pollStatus: ({ retryWaits: _ignored, ...input }: PollStatusInput) => made.pollStatus(input),
      }),
    });
  });
  afterAll(async () => h?.stop());

  it('P4: long waits handed back unread are waited on timers, never handed over again at once; every read counted', async () => {
    const { request, record } = await nineReadsSucceeded(h);
    expect(h.statusReads('rest', record.jobId)).toHaveLength(9);
    expect(record.used.statusRequests).toBe(9);
    const events = await historyEvents(h, request.operationId);
    expect(events.filter((event) => event.timerStartedEventAttributes).length).toBeGreaterThanOrEqual(8);
    // Each long wait was handed over once and came back unread: one activity per read and per wait, no more.
    const polls = (await scheduledActivities(h, request.operationId)).filter((name) => name === 'pollStatus');
    expect(polls.length).toBeLessThanOrEqual(2 * 9 + 1);
  });
});
