/**
 * Figure 3: the scale of waiting, measured at two levels (2,000 and 20,000 operations waiting; fewer with
 * `--quick`; 20,000 and 100,000 with `--waiting large`). Every operation's job stays running and waits for its next
 * poll: sleepers hours away, and at each level the same number of wakers (more than the worker's workflow cache
 * holds) every 45-90 s, started once the level's sleepers wait and terminated after its window. Each level is held
 * with no starts while the wakers wake and the worker's RSS is sampled over the window: its peak and its settled
 * value (the median of its last three quarters, SETTLED_FROM). Beside them, the baseline: the same worker process
 * with nothing started. Measured, not extrapolated.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { deploy, type BenchContext } from '../../lib/context';
import { nowMs, round, rssMiB, sleepMs } from '../../lib/stats';
import { Filler } from './fill';
import { describeMemory, liveHeapPerCachedKiB, memoryPair } from './memory';
import type { WaitingLevel, WaitingResult } from './result';
import { SLEEPER_DELAY_MS, WAITING_SCALES, type WaitingScaleName } from './scale';
import { holdLevel } from './window';

export type { WaitingResult } from './result';
export { waitingTargets } from './targets';
export { WAITING_SCALES, type WaitingScaleName } from './scale';

/** Measures figure 3 at a scale (`full` or `quick` with the run, or `large`). */
export async function measureWaiting(
  ctx: BenchContext,
  scaleName: WaitingScaleName,
  log: (line: string) => void,
): Promise<WaitingResult> {
  const scale = WAITING_SCALES[scaleName];
  const dep = await deploy(ctx, 'wait', { providers: { main: {} } });
  const db = new Database(path.join(dep.dataDir, 'asyncjob.db'), { readonly: true, fileMustExist: true });
  const filler = new Filler(ctx, dep, db, scale, log);
  try {
    await sleepMs(2_000);
    const idleMemory = await memoryPair(dep);
    const idle = {
      workerRssMiB: round(rssMiB(dep.worker.pid), 1),
      serverRssMiB: round(rssMiB(ctx.server.pid), 1),
      memory: idleMemory,
    };
    log(describeMemory('idle', idleMemory.asIs));
    const maxCachedWorkflows = dep.worker.maxCachedWorkflows.asyncjob;
    if (scale.wakers <= maxCachedWorkflows)
      log(`  note: ${scale.wakers} wakers fit the workflow cache (${maxCachedWorkflows}): wakes may not replay`);
    const deadline = filler.t0 + scale.fillBudgetSeconds * 1000;
    const levels: WaitingLevel[] = [];
    let fillMs = 0;
    let sleepers = 0;
    for (const target of scale.levels) {
      const fillFrom = nowMs();
      const before = sleepers;
      sleepers = await filler.startUpTo(target - scale.wakers, deadline, 'sleeper');
      // The budget ran out before any more started: there is no new level to hold.
      if (levels.length > 0 && sleepers === before) break;
      await filler.allWaiting();
      fillMs += nowMs() - fillFrom;
      // This level's wakers, then time for their first wakes (45-90 s after their start) before the window.
      const started = await filler.startUpTo(sleepers + scale.wakers, Number.POSITIVE_INFINITY, 'waker');
      const { waiting, stragglers } = await filler.allWaiting();
      log(`  ${waiting} of ${started} started operations waiting after ${round((nowMs() - filler.t0) / 1000, 0)} s`);
      await filler.hold(scale.wakerDelayMs);
      const states = filler.states();
      const level = await holdLevel(ctx, dep, { waiting, started, states, stragglers }, scale.windowSeconds, log);
      log(
        `  ${waiting} waiting: worker RSS peak ${level.workerRssPeakMiB} MiB, settled ${level.workerRssSettledMiB} MiB; ${level.wakes} wakes in ${level.windowSeconds} s`,
      );
      levels.push(level);
      await filler.terminateWakers();
      if (started < target) break;
    }
    const first = levels[0]!;
    const last = levels[levels.length - 1]!;
    return {
      scale,
      sleeperDelayMs: SLEEPER_DELAY_MS,
      statusLoop: dep.worker.pollLoop,
      maxCachedWorkflows,
      idle,
      levels,
      fillSeconds: round(fillMs / 1000, 1),
      startedPerSecond: round(sleepers / (fillMs / 1000), 1),
      startErrors: filler.startErrors,
      fillCurve: filler.curve,
      workerRssPeakOverallMiB: Math.max(
        ...filler.curve.map((s) => s.workerRssMiB),
        ...levels.map((l) => l.workerRssPeakMiB),
      ),
      settledGrowthRatio: levels.length < 2 ? null : round(last.workerRssSettledMiB / first.workerRssSettledMiB, 3),
      peakGrowthRatio: levels.length < 2 ? null : round(last.workerRssPeakMiB / first.workerRssPeakMiB, 3),
      liveHeapPerCachedWorkflowKiB: liveHeapPerCachedKiB(idleMemory.afterGc, last.memory.afterGc),
      cleanup: `each level's ${scale.wakers} wakers terminated after its window; ${sleepers} sleepers left waiting until the dev server stops`,
    };
  } finally {
    db.close();
    await dep.stop();
  }
}
