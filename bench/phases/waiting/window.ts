/**
 * One level of figure 3 held: no starts for `windowSeconds`, while the wakers' timers fire (each wake a status
 * read, a replay of an evicted workflow and a new timer); worker and dev server RSS sampled every 2 s, the
 * wakes counted from the simulator's request log, then the worker's own memory report.
 */
import type { BenchContext, Deployment } from '../../lib/context';
import { cpuMs, median, nowMs, round, rssMiB, sleepMs } from '../../lib/stats';
import { describeMemory, memoryPair } from './memory';
import type { Straggler, WaitingLevel } from './result';
import { SAMPLE_EVERY_MS, SETTLED_FROM } from './scale';

/** Holds the current level for `windowSeconds` and measures it. */
export async function holdLevel(
  ctx: BenchContext,
  dep: Deployment,
  level: { waiting: number; started: number; states: Record<string, number>; stragglers: Straggler[] },
  windowSeconds: number,
  log: (line: string) => void,
): Promise<WaitingLevel> {
  const samples: WaitingLevel['samples'] = [];
  const startMs = Date.now();
  const t0 = nowMs();
  const cpu0 = cpuMs(dep.worker.pid);
  while (nowMs() - t0 < windowSeconds * 1000) {
    samples.push({
      seconds: round((nowMs() - t0) / 1000, 1),
      workerRssMiB: round(rssMiB(dep.worker.pid), 1),
      serverRssMiB: round(rssMiB(ctx.server.pid), 1),
    });
    await sleepMs(SAMPLE_EVERY_MS);
  }
  const seconds = (nowMs() - t0) / 1000;
  const workerCpuMs = cpuMs(dep.worker.pid) - cpu0;
  const endMs = Date.now();
  const wakes = (await dep.sims.main!.requests('status')).filter((r) => r.atMs >= startMs && r.atMs < endMs).length;
  const memory = await memoryPair(dep);
  log(describeMemory(`${level.waiting} waiting, end of window`, memory.asIs));
  log(describeMemory(`${level.waiting} waiting, after GC`, memory.afterGc));
  const rss = samples.map((s) => s.workerRssMiB);
  const settled = samples.filter((s) => s.seconds >= seconds * SETTLED_FROM);
  return {
    waiting: level.waiting,
    started: level.started,
    states: level.states,
    windowSeconds: round(seconds, 1),
    wakes,
    wakesPerMinute: round((wakes / seconds) * 60, 1),
    workerRssPeakMiB: Math.max(...rss),
    workerRssSettledMiB: round(median(settled.map((s) => s.workerRssMiB)), 1),
    workerRssMinMiB: Math.min(...rss),
    serverRssSettledMiB: round(median(settled.map((s) => s.serverRssMiB)), 1),
    workerCores: round(workerCpuMs / 1000 / seconds, 3),
    workerCpuMsPerWake: wakes === 0 ? 0 : round(workerCpuMs / wakes, 1),
    memory,
    samples,
    stragglers: level.stragglers,
  };
}
