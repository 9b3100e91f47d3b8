/**
 * Figure 3: the scale of waiting. Many operations at once whose jobs stay running and whose next poll is 10
 * minutes away: each has its intent, create and first record written and sits on a durable timer. Measured: the
 * time to start them all (until every one is accepted and waiting), the worker process's RSS and the dev
 * server's RSS (`/proc/<pid>/status` VmRSS), and the worker's own memory report (its V8 heaps, before and after a
 * forced GC, to tell live data from garbage and from memory outside V8), with RSS sampled as operations start (a
 * plateau and a linear growth look alike at one point). Then every one is terminated (a batch operation).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { deploy, type BenchContext, type Deployment } from '../lib/context';
import { nowMs, round, rssMiB, runPool, sleepMs } from '../lib/stats';
import type { WorkerMemory } from '../lib/worker-process';

/** The worker's memory at one moment, without and with a forced GC first. */
export interface WorkerMemoryPair {
  asIs: WorkerMemory;
  afterGc: WorkerMemory;
}

/** One sample of the worker's RSS while operations start. */
export interface RssSample {
  seconds: number;
  waiting: number;
  workerRssMiB: number;
}

/** Figure 3. */
export interface WaitingResult {
  /** Operations asked for. */
  targetOperations: number;
  /** Operations started and waiting when measured (fewer than the target when the time budget ran out). */
  operations: number;
  /** Worker RSS extrapolated linearly to the target from the measured per-operation growth, MiB. */
  workerRssAtTargetMiB: number;
  /** Next poll after this long, ms. */
  pollDelayMs: number;
  /** From the first start until every operation was accepted and waiting on its timer, s. */
  startAllSeconds: number;
  /** Operations started per second over that time. */
  startedPerSecond: number;
  workerRssIdleMiB: number;
  workerRssMiB: number;
  workerRssPerOperationKiB: number;
  serverRssIdleMiB: number;
  serverRssMiB: number;
  /** How long terminating them all took, s. */
  terminateSeconds: number;
  /** The worker's memory report idle (before any start) and loaded (every operation waiting). */
  workerMemoryIdle: WorkerMemoryPair;
  workerMemoryLoaded: WorkerMemoryPair;
  /** After every operation was terminated, GC forced. */
  workerMemoryAfterTerminate: WorkerMemory;
  /** Live V8 heap (every isolate's used heap after a forced GC) gained per waiting operation, KiB. */
  liveHeapPerOperationKiB: number;
  /** Worker RSS as operations started, every ~5 s. */
  rssCurve: RssSample[];
}

/** Used heap of every isolate of the worker process (main thread and workflow threads), MiB. */
function heapUsedMiB(m: WorkerMemory): number {
  return m.mainHeap.usedMiB + m.workflowThreads.reduce((sum, t) => sum + t.usedMiB, 0);
}

async function memoryPair(dep: Deployment): Promise<WorkerMemoryPair> {
  const asIs = await dep.worker.memory();
  return { asIs, afterGc: await dep.worker.memory({ gc: true }) };
}

function describe(label: string, m: WorkerMemory): string {
  const wf = m.workflowThreads.map((t) => `${round(t.usedMiB, 0)}/${round(t.totalMiB, 0)}`).join(', ');
  return (
    `  ${label}: RSS ${round(m.rssMiB, 0)} MiB; main heap used/total ${round(m.heapUsedMiB, 0)}/${round(m.heapTotalMiB, 0)}, ` +
    `external ${round(m.externalMiB, 0)}; workflow thread heap used/total ${wf || 'n/a'} MiB; ` +
    `cached workflows ${m.workflowWorker.numCachedWorkflows}/${m.workflowWorker.maxCachedWorkflows}`
  );
}

async function terminateAll(ctx: BenchContext, dep: Deployment, ids: readonly string[]): Promise<void> {
  const query = `TaskQueue = '${dep.taskQueue}' AND ExecutionStatus = 'Running'`;
  try {
    await ctx.connection.workflowService.startBatchOperation({
      namespace: ctx.server.namespace,
      jobId: `terminate-${dep.taskQueue}`,
      reason: 'benchmark finished',
      visibilityQuery: query,
      terminationOperation: { identity: 'asyncjob-bench' },
    });
  } catch {
    // No batch support: terminate one by one.
    await runPool(ids.length, 100, async (i) => {
      await ctx.temporal.workflow.getHandle(ids[i]!).terminate('benchmark finished').catch(() => undefined);
    });
  }
  const deadline = nowMs() + 300_000;
  while (nowMs() < deadline) {
    if ((await ctx.temporal.workflow.count(query)).count === 0) return;
    await sleepMs(1_000);
  }
  throw new Error(`waiting: operations of ${dep.taskQueue} still running 5 minutes after the terminate`);
}

/** Measures figure 3. */
export async function measureWaiting(ctx: BenchContext, log: (line: string) => void): Promise<WaitingResult> {
  const operations = ctx.quick ? 1_000 : 10_000;
  const pollDelayMs = 600_000;
  const dep = await deploy(ctx, 'wait', { providers: { main: {} } });
  const db = new Database(path.join(dep.dataDir, 'asyncjob.db'), { readonly: true, fileMustExist: true });
  try {
    await sleepMs(2_000);
    const workerRssIdleMiB = rssMiB(dep.worker.pid);
    const serverRssIdleMiB = rssMiB(ctx.server.pid);
    const workerMemoryIdle = await memoryPair(dep);
    log(describe('idle', workerMemoryIdle.asIs));
    log(describe('idle after GC', workerMemoryIdle.afterGc));
    const t0 = nowMs();
    const rssCurve: RssSample[] = [];
    let nextSample = t0;
    const sample = (waitingNow: number): void => {
      if (nowMs() < nextSample) return;
      nextSample += 5_000;
      rssCurve.push({ seconds: round((nowMs() - t0) / 1000, 1), waiting: waitingNow, workerRssMiB: round(rssMiB(dep.worker.pid), 1) });
    };
    const ids: string[] = [];
    const waiting = db.prepare("SELECT count(*) FROM operations WHERE local_state IN ('accepted', 'observing')").pluck();
    // Starts are paced by what is already waiting (at most 500 ahead), so the budget stops a slow system cleanly.
    const budgetMs = ctx.quick ? 60_000 : 150_000;
    const startWindow = 500;
    let reached = 0;
    while (ids.length < operations && nowMs() - t0 < budgetMs) {
      reached = waiting.get() as number;
      sample(reached);
      const batch = Math.min(operations - ids.length, Math.max(0, reached + startWindow - ids.length), 200);
      if (batch === 0) {
        await sleepMs(200);
        continue;
      }
      const started = await Promise.all(
        Array.from({ length: batch }, () => dep.client.start(dep.request('main', 'forever', { baseDelayMs: pollDelayMs, maxDelayMs: pollDelayMs }))),
      );
      ids.push(...started.map((h) => h.operationId));
    }
    log(`  ${ids.length} starts sent in ${round((nowMs() - t0) / 1000, 1)} s`);
    const deadline = nowMs() + 180_000;
    while ((reached = waiting.get() as number) < ids.length) {
      if (nowMs() > deadline) throw new Error(`waiting: only ${reached} of ${ids.length} operations waiting 3 minutes after the last start`);
      sample(reached);
      await sleepMs(250);
    }
    const startAllSeconds = (nowMs() - t0) / 1000;
    log(`  all ${reached} waiting after ${round(startAllSeconds, 1)} s`);
    await sleepMs(3_000); // the last workflow tasks (timers scheduled) settle
    const workerRssMiB = rssMiB(dep.worker.pid);
    const serverRssMiB = rssMiB(ctx.server.pid);
    rssCurve.push({ seconds: round((nowMs() - t0) / 1000, 1), waiting: reached, workerRssMiB: round(workerRssMiB, 1) });
    const workerMemoryLoaded = await memoryPair(dep);
    log(describe('loaded', workerMemoryLoaded.asIs));
    log(describe('loaded after GC', workerMemoryLoaded.afterGc));
    const tt = nowMs();
    await terminateAll(ctx, dep, ids);
    const terminateSeconds = (nowMs() - tt) / 1000;
    log(`  worker RSS ${round(workerRssMiB, 0)} MiB, server RSS ${round(serverRssMiB, 0)} MiB; terminated in ${round(terminateSeconds, 1)} s`);
    const workerMemoryAfterTerminate = await dep.worker.memory({ gc: true });
    log(describe('terminated, after GC', workerMemoryAfterTerminate));
    const perOperationMiB = (workerRssMiB - workerRssIdleMiB) / ids.length;
    const liveHeapPerOperationMiB = (heapUsedMiB(workerMemoryLoaded.afterGc) - heapUsedMiB(workerMemoryIdle.afterGc)) / ids.length;
    return {
      targetOperations: operations,
      operations: ids.length,
      workerRssAtTargetMiB: round(workerRssIdleMiB + perOperationMiB * operations, 0),
      pollDelayMs,
      startAllSeconds: round(startAllSeconds, 1),
      startedPerSecond: round(ids.length / startAllSeconds, 1),
      workerRssIdleMiB: round(workerRssIdleMiB, 1),
      workerRssMiB: round(workerRssMiB, 1),
      workerRssPerOperationKiB: round(perOperationMiB * 1024, 1),
      serverRssIdleMiB: round(serverRssIdleMiB, 1),
      serverRssMiB: round(serverRssMiB, 1),
      terminateSeconds: round(terminateSeconds, 1),
      workerMemoryIdle,
      workerMemoryLoaded,
      workerMemoryAfterTerminate,
      liveHeapPerOperationKiB: round(liveHeapPerOperationMiB * 1024, 1),
      rssCurve,
    };
  } finally {
    db.close();
    await dep.stop();
  }
}
