/**
 * Whether the dev server (and the worker feeding it) kept up while a figure was measured, said from measurements:
 * the dev server's CPU over the window, the machine's CPU, and the schedule-to-start of workflow and activity
 * tasks in the histories of the measured operations (a task that waits for a worker is queueing: the server or
 * the worker is behind). Queueing counts as saturation once it is long enough to move the figure: a quarter of
 * the figure's own resolution (its target, its bucket). A figure measured while saturated is flagged, and its
 * target counts as not met.
 */
import os from 'node:os';
import type { BenchContext } from './context';
import { taskQueueing, type TaskSpan } from './histories';
import { machineTicks } from './machine';
import { cpuMs, nowMs, percentile, round } from './stats';

/** When the server counts as saturated (bench/README.md, "Saturation"). */
const SATURATION_LIMITS = {
  /** The machine's CPU was busier than this share of all cores over the window. */
  machineBusyShare: 0.85,
} as const;

/** A distribution of latencies, ms. */
export interface LatencySummary {
  samples: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** How loaded the server was while a figure was measured. */
export interface ServerLoad {
  seconds: number;
  /** The dev server's CPU over the window, in cores (1 = one core busy all the time), and as a share of all. */
  serverCores: number;
  serverShare: number;
  /** The machine's CPU over the window, share of all cores. */
  machineBusyShare: number;
  /** Over the histories of `histories` measured operations: all their tasks, or those after each one's create. */
  histories: number;
  tasks: TaskSpan;
  /** Workflow tasks queueing longer than this at p99 counts as saturated, ms (a quarter of the figure's resolution). */
  queueLimitMs: number;
  workflowTaskScheduleToStart: LatencySummary;
  /** Activity tasks (a rate-limited queue's include the limit's waits). */
  activityTaskScheduleToStart: LatencySummary;
  saturated: boolean;
  /** What made it saturated, or what shows it was not. */
  evidence: string;
}

/** A summary of `values`, ms, rounded to 0.1 ms. */
export function latencySummary(values: readonly number[]): LatencySummary {
  return {
    samples: values.length,
    p50Ms: round(percentile(values, 50), 1),
    p95Ms: round(percentile(values, 95), 1),
    p99Ms: round(percentile(values, 99), 1),
    maxMs: round(values.length === 0 ? Number.NaN : Math.max(...values), 1),
  };
}

/** A window over which the dev server's and the machine's CPU are measured. */
export interface ServerWindow {
  /**
   * Ends the window and judges it with the tasks `span` of the histories of `workflowIds` (read now): saturated
   * when workflow tasks waited longer than `queueLimitMs` at p99, or the machine was too busy.
   */
  stop(workflowIds: readonly string[], queueLimitMs: number, span?: TaskSpan): Promise<ServerLoad>;
}

/** Starts measuring the server's load now. */
export function startServerWindow(ctx: BenchContext): ServerWindow {
  const t0 = nowMs();
  const server0 = cpuMs(ctx.server.pid);
  const machine0 = machineTicks();
  return {
    async stop(workflowIds, queueLimitMs, span = 'all') {
      const seconds = (nowMs() - t0) / 1000;
      const serverCores = (cpuMs(ctx.server.pid) - server0) / 1000 / seconds;
      const machine1 = machineTicks();
      const machineBusyShare = (machine1.busy - machine0.busy) / (machine1.total - machine0.total);
      const { workflowTaskMs, activityTaskMs } = await taskQueueing(ctx, workflowIds, span);
      const wft = latencySummary(workflowTaskMs);
      const which = span === 'all' ? 'workflow tasks' : 'workflow tasks after each create';
      const reasons: string[] = [];
      if (!(wft.p99Ms <= queueLimitMs))
        reasons.push(`${which} waited ${wft.p99Ms} ms at p99 for a worker (limit ${queueLimitMs})`);
      if (machineBusyShare > SATURATION_LIMITS.machineBusyShare)
        reasons.push(
          `the machine's CPU was ${Math.round(machineBusyShare * 100)}% busy (limit ${SATURATION_LIMITS.machineBusyShare * 100}%)`,
        );
      const cores = os.cpus().length;
      const shown = `${which}: schedule-to-start p99 ${wft.p99Ms} ms, limit ${queueLimitMs} (${wft.samples} tasks of ${workflowIds.length} operations); dev server ${round(serverCores, 2)} cores of ${cores}; machine ${Math.round(machineBusyShare * 100)}% busy`;
      return {
        seconds: round(seconds, 1),
        serverCores: round(serverCores, 2),
        serverShare: round(serverCores / cores, 3),
        machineBusyShare: round(machineBusyShare, 3),
        histories: workflowIds.length,
        tasks: span,
        queueLimitMs,
        workflowTaskScheduleToStart: wft,
        activityTaskScheduleToStart: latencySummary(activityTaskMs),
        saturated: reasons.length > 0,
        evidence: reasons.length > 0 ? `saturated: ${reasons.join('; ')}` : `not saturated: ${shown}`,
      };
    },
  };
}
