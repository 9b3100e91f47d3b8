/** The results of figures 1 and 2, as `results.json` holds them under `throughput` and `perPoll`. */
import type { Spread } from '../../lib/stats';
import type { BenchPolicy, PolicyName, SystemName } from './policies';

/** One system's rounds at one concurrency and policy. */
export interface SystemRounds {
  rounds: number;
  /** Operations per second over the rounds. */
  opsPerSecond: Spread;
  roundsOpsPerSecond: number[];
  /** CPU used per operation by the worker process and by the dev server, ms (naive: the bench process). */
  workerCpuMsPerOperation: number;
  serverCpuMsPerOperation: number;
  /** Latency of one operation at this concurrency (start to verified result), ms, over every round. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** From the histories of a few operations of each round (medians): events and timers started per operation. */
  historyEventsPerOperation?: number;
  timersPerOperation?: number;
}

/** asyncjob / bare at one point: the ratio of the median ops/s, and the spread of the per-pair ratios. */
interface PairedRatio {
  ofMedians: number;
  pairMin: number;
  pairMax: number;
  pairs: number[];
}

/** Figure 1 at one concurrency and policy. */
export interface ThroughputPoint {
  concurrency: number;
  operationsPerRound: number;
  naiveOperationsPerRound: number;
  /** Rounds in the order they ran: A = asyncjob, B = bare, N = the naive loop (its rounds run `naiveOperationsPerRound`). */
  order: string;
  asyncjob: SystemRounds;
  bare: SystemRounds;
  naive: SystemRounds;
  asyncjobOverBare: PairedRatio;
  /** Median asyncjob ops/s over the naive loop's median round. */
  asyncjobOverNaive: number;
  seconds: number;
}

/** Figure 1 at one policy. */
export interface PolicyThroughput extends BenchPolicy {
  statusReadsPerOperation: number;
  points: ThroughputPoint[];
  /** Wall time of this policy's section. */
  seconds: number;
}

/** Figure 1. */
export interface ThroughputResult {
  policies: PolicyThroughput[];
  /** Status reads asyncjob sent again after a failed read (timeouts under load), over the whole figure. */
  asyncjobExtraStatusReads: number;
  /** Each worker's workflow cache (`maxCachedWorkflows`, as the SDK compiled it): the same, so bare is like for like. */
  maxCachedWorkflows: { asyncjob: number; bare: number };
  warmUpSeconds: number;
  /** Wall time of figure 1 (warm-up and every policy). */
  seconds: number;
  /** What this run left out of the plan of bench/README.md, and why. */
  notes: string[];
}

/**
 * The durable systems of figure 2: asyncjob, the bare timer-per-read workflow, and Temporal's two recommended polling
 * patterns (a heartbeating activity that reads in a loop, an activity whose retries are the reads).
 */
export type PerPollSystem = 'asyncjob' | 'bare' | 'bare-heartbeat' | 'bare-retry';

/** One kind of operation of figure 2 (medians over its samples). */
export interface PerPollOperation {
  system: PerPollSystem;
  statusReads: number;
  samples: number;
  historyEvents: number;
  historyBytes: number;
  timersStarted: number;
  /** The whole operation's history events over its status reads (create and collect included). */
  eventsPerRead: number;
  bytesPerRead: number;
  /** asyncjob only: journal entries appended and snapshot writes (record version bumps) of the operation. */
  journalEntries?: number;
  snapshotWrites?: number;
  /**
   * The server's persisted writes (history and matching, `bench/lib/server-counts.ts`) and the heartbeats it received
   * in this system's namespace over the window its operations ran in: per operation run there and per status read
   * made (means over every operation of the window, clean or not; not medians).
   */
  serverWrites: number;
  serverWritesPerRead: number;
  heartbeats: number;
  heartbeatsPerRead: number;
  /** Start to verified result, ms (at 1 s and 5 s the samples run side by side). */
  latencyMs: number;
}

/** The cost of one more status read, from the shortest and the longest operation of a policy. */
export interface MarginalRead {
  system: PerPollSystem;
  fromReads: number;
  toReads: number;
  eventsPerRead: number;
  bytesPerRead: number;
  journalEntriesPerRead?: number;
  snapshotWritesPerRead?: number;
}

/** Figure 2 at one policy. */
export interface PerPollPolicy extends BenchPolicy {
  operations: PerPollOperation[];
  marginal: MarginalRead[];
  seconds: number;
}

/** Figure 2. */
export interface PerPollResult {
  policies: PerPollPolicy[];
  /** The target figure: history events per status read at 1 s, amortised over a 20-read operation. */
  eventsPerReadAt1s: { statusReads: number; asyncjob: number; bare: number };
  /**
   * Per policy from 1 s on, history events per status read of its longest operation (amortised) for asyncjob and
   * each recommended pattern; the anchor is the cheaper pattern.
   */
  anchors: PerPollAnchor[];
  /** Short policy, one at a time: latency one more status read adds over the naive loop's (3- and 6-read ops), ms. */
  addedLatencyPerReadMs: { asyncjob: number; bare: number };
  /** Short policy, one at a time: whole-operation latency, ms (medians). */
  latencyMs: Record<SystemName, { reads3: number; reads6: number }>;
  seconds: number;
}

/** asyncjob beside Temporal's recommended polling patterns at one policy (events per read, amortised). */
export interface PerPollAnchor {
  policy: PolicyName;
  statusReads: number;
  asyncjob: number;
  heartbeat: number;
  retry: number;
  /** The server's persisted writes per status read (see {@link PerPollOperation.serverWritesPerRead}). */
  writesPerRead: { asyncjob: number; heartbeat: number; retry: number };
}
