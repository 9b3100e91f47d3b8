/** Figure 4's result, as `results.json` holds it under `fleet`. */
import type { ServerLoad } from '../../lib/server-load';
import type { WorkerReady } from '../../lib/worker-process';
import type { Spread } from '../../lib/stats';
import type { HerdAccount } from './drain';
import type { Pressure } from './pressure';

/** One herd: `operations` started in the same second against one provider, run to success. */
export interface HerdRound {
  system: 'asyncjob' | 'naive';
  operations: number;
  statusReadsPerOperation: number;
  /** Time to send every start (asyncjob: client `start` calls; naive: none), s. */
  startSeconds: number;
  /** First to last create request at the simulator, s: how spread the herd's creates were. */
  createSpreadSeconds: number;
  /** Time until every operation succeeded, s. */
  completeSeconds: number;
  all: Pressure;
  /** Status reads only: the polling herd the policy's jitter spreads. */
  statusReads: Pressure;
  /** asyncjob: the dev server and machine over the round, from its operations' histories. */
  server?: ServerLoad;
}

/** The rate-limited run: the peak must not exceed the limit. */
export interface LimitedRun {
  operations: number;
  statusReadsPerOperation: number;
  maxRequestsPerSecond: number;
  completeSeconds: number;
  all: Pressure;
  /** Whole-second buckets of all requests (the shape of the load). */
  bucketsPerSecond: number[];
  /** No 1-second bucket exceeded the limit. */
  withinLimit: boolean;
  /** The requests against the herd's plan, and those after the pace ended (`drain.ts`); absent in older runs. */
  account?: HerdAccount;
}

/** Every round of one herd size. */
export interface HerdSize {
  operations: number;
  /** Status reads' peak / mean over each system's rounds of this size. */
  statusReadsPeakOverMean: { asyncjob: Spread; naive: Spread };
  /** Whether any asyncjob round of this size was saturated, and each one's evidence. */
  saturated: boolean;
  evidence: string[];
}

/** Figure 4. */
export interface FleetResult {
  policy: { baseDelayMs: number; maxDelayMs: number };
  /** The status loop each worker process offered (`pollLoopOf`: on unless `ASYNCJOB_POLL_LOOP_MAX_WAIT_MS=0`). */
  statusLoop: { herds: WorkerReady['pollLoop']; limited: WorkerReady['pollLoop'] };
  /** Herds in alternated rounds, asyncjob (A) and the naive loop (B, the same plan with no engine): A B B A ... */
  rounds: HerdRound[];
  /** Per herd size: the first is small enough for the server to keep up (the target's), the second is larger. */
  sizes: HerdSize[];
  /** Queueing longer than this at p99 counts as saturated: a quarter of the 1-second bucket, ms. */
  queueLimitMs: number;
  limited: LimitedRun;
}
