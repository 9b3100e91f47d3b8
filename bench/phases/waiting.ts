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
import { cpuMs, nowMs, round, rssMiB, runPool, sleepMs } from '../lib/stats';
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
  /**
   * Worker RSS extrapolated to the target: the highest RSS sampled over the second half of the starts plus that
   * half's growth per operation (least squares, never below 0) for the rest. Not linear from idle: RSS rises while
   * the workflow cache fills (the first few hundred operations) and then plateaus in a GC sawtooth.
   */
  workerRssAtTargetMiB: number;
  /** Next poll after this long, ms. */
  pollDelayMs: number;
  /** From the first start until every operation was accepted and waiting on its timer, s. */
  startAllSeconds: number;
  /** Operations started per second over that time. */
  startedPerSecond: number;
  /** Worker process CPU (all threads) over that time per operation, ms: replays after evictions show here. */
  workerCpuMsPerOperation: number;
  workerRssIdleMiB: number;
  workerRssMiB: number;
  /** (loaded - idle) / operations: the average, which falls as operations are added to a plateau. */
  workerRssPerOperationKiB: number;
  /** RSS growth per operation over the second half of the starts (least squares over the samples), KiB. */
  workerRssLateSlopeKiB: number;
  serverRssIdleMiB: number;
  serverRssMiB: number;
  /** How long terminating them all took, s. */
  terminateSeconds: number;
  /** The worker's memory report idle (before any start) and loaded (every operation waiting). */
  workerMemoryIdle: WorkerMemoryPair;
  workerMemoryLoaded: WorkerMemoryPair;
  /** After every operation was terminated, GC forced. */
  workerMemoryAfterTerminate: WorkerMemory;
  /**
   * Live V8 heap (every isolate's used heap after a forced GC) gained, averaged over the waiting operations, KiB.
   * It is the workflow cache filling (~1.75 MiB per cached workflow), so it falls as operations are added.
   */
  liveHeapPerOperationKiB: number;
  /** Worker RSS as operations started, every ~5 s. */
  rssCurve: RssSample[];
  /** Operations started but not waiting when measured (at most 1%), with their states. */
  stragglers: Straggler[];
}

/** An operation that was started but never reached the waiting state. */
export interface Straggler {
  operationId: string;
  /** Its row's `local_state`, or null when it has no row. */
  localState: string | null;
  /** Its workflow's status and history length, when described. */
  workflow?: string;
}

async function findStragglers(ctx: BenchContext, db: Database.Database, ids: readonly string[]): Promise<Straggler[]> {
  const stateOf = db.prepare('SELECT local_state FROM operations WHERE operation_id = ?').pluck();
  const found: Straggler[] = [];
  for (const operationId of ids) {
    const localState = (stateOf.get(operationId) as string | null | undefined) ?? null;
    if (localState === 'accepted' || localState === 'observing') continue;
    const straggler: Straggler = { operationId, localState };
    if (found.length < 10) {
      const d = await ctx.temporal.workflow
        .getHandle(operationId)
        .describe()
        .catch(() => undefined);
      if (d) straggler.workflow = `${d.status.name}, ${d.historyLength} events`;
    }
    found.push(straggler);
  }
  return found;
}

/** Least-squares slope of y over x; 0 with fewer than two distinct x. */
function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return n < 2 || sxx === 0 ? 0 : points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0) / sxx;
}

/** Used heap of the SDK's workflow threads (where cached workflows live), MiB. */
export function workflowHeapUsedMiB(m: WorkerMemory): number {
  return m.workflowThreads.reduce((sum, t) => sum + t.usedMiB, 0);
}

/** Used heap of every isolate of the worker process (main thread and workflow threads), MiB. */
function heapUsedMiB(m: WorkerMemory): number {
  return m.mainHeap.usedMiB + workflowHeapUsedMiB(m);
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
      await ctx.temporal.workflow
        .getHandle(ids[i]!)
        .terminate('benchmark finished')
        .catch(() => undefined);
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
    const cpu0 = cpuMs(dep.worker.pid);
    const rssCurve: RssSample[] = [];
    let nextSample = t0;
    const sample = (waitingNow: number): void => {
      if (nowMs() < nextSample) return;
      nextSample += 5_000;
      rssCurve.push({
        seconds: round((nowMs() - t0) / 1000, 1),
        waiting: waitingNow,
        workerRssMiB: round(rssMiB(dep.worker.pid), 1),
      });
    };
    const ids: string[] = [];
    const waiting = db
      .prepare("SELECT count(*) FROM operations WHERE local_state IN ('accepted', 'observing')")
      .pluck();
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
        Array.from({ length: batch }, () =>
          dep.client.start(dep.request('main', 'forever', { baseDelayMs: pollDelayMs, maxDelayMs: pollDelayMs })),
        ),
      );
      ids.push(...started.map((h) => h.operationId));
    }
    log(`  ${ids.length} starts sent in ${round((nowMs() - t0) / 1000, 1)} s`);
    const deadline = nowMs() + 180_000;
    let stragglers: Straggler[] = [];
    while ((reached = waiting.get() as number) < ids.length) {
      if (nowMs() > deadline) {
        // A few operations that never wait must not void the figure (it is about the many that do), but they are
        // named with their states so they can be looked into; more than 1% means something else is wrong.
        stragglers = await findStragglers(ctx, db, ids);
        log(`  not waiting 3 minutes after the last start: ${JSON.stringify(stragglers)}`);
        if (stragglers.length > ids.length / 100)
          throw new Error(
            `waiting: only ${reached} of ${ids.length} operations waiting 3 minutes after the last start`,
          );
        break;
      }
      sample(reached);
      await sleepMs(250);
    }
    const startAllSeconds = (nowMs() - t0) / 1000;
    const workerCpuMs = cpuMs(dep.worker.pid) - cpu0;
    log(
      `  all ${reached} waiting after ${round(startAllSeconds, 1)} s; worker CPU ${round(workerCpuMs / ids.length, 1)} ms per operation`,
    );
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
    log(
      `  worker RSS ${round(workerRssMiB, 0)} MiB, server RSS ${round(serverRssMiB, 0)} MiB; terminated in ${round(terminateSeconds, 1)} s`,
    );
    const workerMemoryAfterTerminate = await dep.worker.memory({ gc: true });
    log(describe('terminated, after GC', workerMemoryAfterTerminate));
    const perOperationMiB = (workerRssMiB - workerRssIdleMiB) / ids.length;
    const late = rssCurve.filter((p) => p.waiting >= reached / 2);
    const lateSlopeMiB = slope(late.map((p) => [p.waiting, p.workerRssMiB]));
    const lateMaxMiB = Math.max(workerRssMiB, ...late.map((p) => p.workerRssMiB));
    const liveHeapPerOperationMiB =
      (heapUsedMiB(workerMemoryLoaded.afterGc) - heapUsedMiB(workerMemoryIdle.afterGc)) / ids.length;
    return {
      targetOperations: operations,
      operations: ids.length,
      workerRssAtTargetMiB: round(lateMaxMiB + Math.max(0, lateSlopeMiB) * Math.max(0, operations - reached), 0),
      pollDelayMs,
      startAllSeconds: round(startAllSeconds, 1),
      startedPerSecond: round(ids.length / startAllSeconds, 1),
      workerCpuMsPerOperation: round(workerCpuMs / ids.length, 1),
      workerRssIdleMiB: round(workerRssIdleMiB, 1),
      workerRssMiB: round(workerRssMiB, 1),
      workerRssPerOperationKiB: round(perOperationMiB * 1024, 1),
      workerRssLateSlopeKiB: round(lateSlopeMiB * 1024, 1),
      serverRssIdleMiB: round(serverRssIdleMiB, 1),
      serverRssMiB: round(serverRssMiB, 1),
      terminateSeconds: round(terminateSeconds, 1),
      workerMemoryIdle,
      workerMemoryLoaded,
      workerMemoryAfterTerminate,
      liveHeapPerOperationKiB: round(liveHeapPerOperationMiB * 1024, 1),
      rssCurve,
      stragglers,
    };
  } finally {
    db.close();
    await dep.stop();
  }
}
