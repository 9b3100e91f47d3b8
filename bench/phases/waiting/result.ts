/** Figure 3's result, as `results.json` holds it under `waiting`. */
import type { WorkerMemory, WorkerReady } from '../../lib/worker-process';
import type { WaitingScale } from './scale';

/** The worker's memory at one moment, without and with a forced GC first. */
export interface WorkerMemoryPair {
  asIs: WorkerMemory;
  afterGc: WorkerMemory;
}

/** One sample of RSS. */
export interface RssSample {
  /** Since the first start, s. */
  seconds: number;
  /** Operations waiting then. */
  waiting: number;
  workerRssMiB: number;
}

/** An operation that was started but never reached the waiting state. */
export interface Straggler {
  operationId: string;
  /** Its row's `local_state`, or null when it has no row. */
  localState: string | null;
  /** Its workflow's status and history length, when described. */
  workflow?: string;
  /** Its journal, one line per entry: sequence, instant, actor, kind and the entry's body. */
  journal?: string[];
}

/** One level held: every operation waiting, a fixed number of them waking, RSS sampled. */
export interface WaitingLevel {
  /** Operations waiting (accepted, observing or reconciling, on a durable timer) when the window began. */
  waiting: number;
  /** Operations started by then (the difference is stragglers). */
  started: number;
  /** Rows by local state when the window began (earlier levels' terminated wakers included). */
  states: Record<string, number>;
  windowSeconds: number;
  /** Status reads the simulator received in the window: the wakes. */
  wakes: number;
  wakesPerMinute: number;
  /** Worker RSS over the window: highest sample, and settled (the median from the window's first quarter on, SETTLED_FROM), MiB. */
  workerRssPeakMiB: number;
  workerRssSettledMiB: number;
  workerRssMinMiB: number;
  /** Dev server RSS settled, MiB. */
  serverRssSettledMiB: number;
  /** The worker process's CPU over the window, in cores, and per wake, ms. */
  workerCores: number;
  workerCpuMsPerWake: number;
  /** The worker's memory report at the window's end, as is and after a forced GC. */
  memory: WorkerMemoryPair;
  samples: { seconds: number; workerRssMiB: number; serverRssMiB: number }[];
  stragglers: Straggler[];
}

/** Figure 3. */
export interface WaitingResult {
  scale: WaitingScale;
  /** Each sleeper's next poll after this long (bounded jitter); wakers' after `scale.wakerDelayMs`. */
  sleeperDelayMs: number;
  /** The status loop the worker offered (waits longer than its `maxWaitMs` are durable timers), or false. */
  statusLoop: WorkerReady['pollLoop'];
  /** The worker's workflow cache size (smaller than the wakers: every wake replays). */
  maxCachedWorkflows: number;
  /** The baseline: the worker process with nothing started, after a settle. */
  idle: { workerRssMiB: number; serverRssMiB: number; memory: WorkerMemoryPair };
  levels: WaitingLevel[];
  /** Time spent starting sleepers until each level's waited (wakers and their warm-ups not included), s; sleepers started per second over it. */
  fillSeconds: number;
  startedPerSecond: number;
  /** Starts that failed and were tried again (the same request: a start is idempotent). */
  startErrors: number;
  /** Worker RSS every ~5 s while operations started (between the windows too). */
  fillCurve: RssSample[];
  /** The highest worker RSS sampled at any time, MiB. */
  workerRssPeakOverallMiB: number;
  /** Second level's settled RSS over the first's, and the same for the peaks; null with one level held. */
  settledGrowthRatio: number | null;
  peakGrowthRatio: number | null;
  /** Live V8 heap per cached workflow at the last window's end (after GC, over idle), KiB. */
  liveHeapPerCachedWorkflowKiB: number | null;
  /** How the run ended the wakers (sleepers are left to the dev server, which stops with the run). */
  cleanup: string;
}
