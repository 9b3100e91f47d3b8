/**
 * Figure 1 (throughput, start to verified result) and figure 2 (per-poll cost). Three systems make the same
 * calls against the same simulator (create, status reads until `succeeded`, result download with SHA-256 check):
 * asyncjob (durable, journaled), a bare Temporal workflow (durable, no record keeping) and a naive in-process
 * loop (no durability: the ceiling).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { temporal as proto } from '@temporalio/proto';
import type { BenchContext, Deployment } from '../lib/context';
import { FINAL_STATES, plainCalls, pollDelayMs, type PlainCalls } from '../lib/provider-calls';
import { cpuMs, median, percentile, round, runPool, sleepMs, withTimeout } from '../lib/stats';
import type { BareJobInput, BareJobResult } from '../bare/workflows';

/** The millisecond policy of figures 1 and 2. */
export const FAST_POLICY = { baseDelayMs: 5, maxDelayMs: 20 } as const;

/** One system's operation: resolves once the result is verified, throws otherwise. */
type RunOne = (script: string, expectedReads: number) => Promise<void>;

/** The three systems. */
export type SystemName = 'asyncjob' | 'bare' | 'naive';

/** One operation that takes longer than this fails the run instead of hanging it. */
const OPERATION_TIMEOUT_MS = 300_000;

/** Status reads asyncjob sent beyond the script's (a read lost to a timeout under load is sent again). */
let extraReads = 0;

function systems(ctx: BenchContext, dep: Deployment, calls: PlainCalls): Record<SystemName, RunOne> {
  let bareSeq = 0;
  return {
    async asyncjob(script, expectedReads) {
      const handle = await dep.client.start(dep.request('main', script, FAST_POLICY));
      const summary = await withTimeout(
        handle.result(),
        OPERATION_TIMEOUT_MS,
        `asyncjob operation ${handle.operationId}`,
      );
      // A read that failed under load (e.g. a headers timeout) is planned again and counted: more reads, same job.
      if (summary.localState !== 'succeeded' || summary.result === null || summary.statusRequestsUsed < expectedReads) {
        throw new Error(
          `asyncjob operation ${handle.operationId} ended ${summary.localState} after ${summary.statusRequestsUsed} reads, expected succeeded after ${expectedReads}`,
        );
      }
      extraReads += summary.statusRequestsUsed - expectedReads;
    },
    async bare(script, expectedReads) {
      const input: BareJobInput = {
        payload: { report: 'bench', scenario: script },
        ...FAST_POLICY,
        maxStatusReads: 1_000,
      };
      const workflowId = `${dep.bareTaskQueue}-${++bareSeq}`;
      const result = (await withTimeout(
        ctx.temporal.workflow.execute('BareJobWorkflow', { taskQueue: dep.bareTaskQueue, workflowId, args: [input] }),
        OPERATION_TIMEOUT_MS,
        `bare workflow ${workflowId}`,
      )) as BareJobResult;
      if (result.statusReads !== expectedReads)
        throw new Error(`bare workflow read ${result.statusReads} times, expected ${expectedReads}`);
    },
    async naive(script, expectedReads) {
      const jobId = await calls.createJob({ report: 'bench', scenario: script });
      for (let reads = 0; ;) {
        await sleepMs(pollDelayMs(reads, FAST_POLICY, Math.random()));
        const state = await calls.readStatus(jobId);
        reads += 1;
        if (state === 'succeeded') {
          if (reads !== expectedReads) throw new Error(`naive loop read ${reads} times, expected ${expectedReads}`);
          await calls.collectResult(jobId);
          return;
        }
        if (FINAL_STATES.has(state)) throw new Error(`job ${jobId} ended ${state}`);
      }
    },
  };
}

/** Throughput of one system at one concurrency. */
export interface ThroughputPoint {
  concurrency: number;
  operations: number;
  rounds: number;
  /** Median over rounds, operations per second. */
  opsPerSecond: number;
  /** Every round's operations per second. */
  roundsOpsPerSecond: number[];
  /** CPU used per operation by the worker process and by the dev server, ms (naive: the bench process). */
  workerCpuMsPerOperation: number;
  serverCpuMsPerOperation: number;
  /** Latency of one operation at this concurrency (start to verified result), ms. */
  latencyP50Ms: number;
  latencyP99Ms: number;
}

/** Figure 1. */
export interface ThroughputResult {
  policy: typeof FAST_POLICY;
  statusReadsPerOperation: number;
  /** Status reads asyncjob sent again after a failed read (timeouts under load), over the whole figure. */
  asyncjobExtraStatusReads: number;
  systems: Record<SystemName, ThroughputPoint[]>;
  /** asyncjob / bare and asyncjob / naive, per concurrency. */
  ratios: { concurrency: number; asyncjobOverBare: number; asyncjobOverNaive: number }[];
}

/** Operations per round and rounds per concurrency. */
function plan(quick: boolean): { concurrency: number; operations: number; rounds: number }[] {
  return quick
    ? [
        { concurrency: 1, operations: 2, rounds: 1 },
        { concurrency: 10, operations: 20, rounds: 1 },
        { concurrency: 100, operations: 100, rounds: 1 },
      ]
    : [
        { concurrency: 1, operations: 5, rounds: 2 },
        { concurrency: 10, operations: 30, rounds: 2 },
        { concurrency: 100, operations: 200, rounds: 1 },
        { concurrency: 1_000, operations: 1_000, rounds: 1 },
      ];
}

/** Measures figure 1 (warm-up first; rounds interleaved across systems so drift hits all three alike). */
export async function measureThroughput(
  ctx: BenchContext,
  dep: Deployment,
  log: (line: string) => void,
): Promise<ThroughputResult> {
  const calls = plainCalls({ baseUrl: dep.sims['main']!.url, token: ctx.token }, 1_024);
  try {
    const run = systems(ctx, dep, calls);
    const names: SystemName[] = ['asyncjob', 'bare', 'naive'];
    for (const name of names) await runPool(ctx.quick ? 10 : 20, 10, () => run[name]('reads3', 3)); // warm-up: JIT, pools, caches
    const out: Record<SystemName, ThroughputPoint[]> = { asyncjob: [], bare: [], naive: [] };
    for (const step of plan(ctx.quick)) {
      const blank = () => ({
        ops: [] as number[],
        latencies: [] as number[],
        workerCpuMs: 0,
        serverCpuMs: 0,
        count: 0,
      });
      const rounds: Record<SystemName, ReturnType<typeof blank>> = { asyncjob: blank(), bare: blank(), naive: blank() };
      for (let r = 0; r < step.rounds; r++) {
        for (const name of names) {
          const workerPid = name === 'naive' ? process.pid : dep.worker.pid;
          const w0 = cpuMs(workerPid);
          const s0 = cpuMs(ctx.server.pid);
          const { elapsedMs, durationsMs } = await runPool(step.operations, step.concurrency, () =>
            run[name]('reads3', 3),
          );
          rounds[name].workerCpuMs += cpuMs(workerPid) - w0;
          rounds[name].serverCpuMs += cpuMs(ctx.server.pid) - s0;
          rounds[name].count += step.operations;
          rounds[name].ops.push((step.operations / elapsedMs) * 1000);
          rounds[name].latencies.push(...durationsMs);
          log(
            `  throughput ${name} c=${step.concurrency} round ${r + 1}: ${round((step.operations / elapsedMs) * 1000, 1)} ops/s`,
          );
        }
      }
      for (const name of names) {
        out[name].push({
          concurrency: step.concurrency,
          operations: step.operations,
          rounds: step.rounds,
          opsPerSecond: round(median(rounds[name].ops), 1),
          roundsOpsPerSecond: rounds[name].ops.map((v) => round(v, 1)),
          workerCpuMsPerOperation: round(rounds[name].workerCpuMs / rounds[name].count, 1),
          serverCpuMsPerOperation: round(rounds[name].serverCpuMs / rounds[name].count, 1),
          latencyP50Ms: round(percentile(rounds[name].latencies, 50), 1),
          latencyP99Ms: round(percentile(rounds[name].latencies, 99), 1),
        });
      }
    }
    return {
      policy: FAST_POLICY,
      statusReadsPerOperation: 3,
      asyncjobExtraStatusReads: extraReads,
      systems: out,
      ratios: out.asyncjob.map((p, i) => ({
        concurrency: p.concurrency,
        asyncjobOverBare: round(p.opsPerSecond / out.bare[i]!.opsPerSecond, 3),
        asyncjobOverNaive: round(p.opsPerSecond / out.naive[i]!.opsPerSecond, 3),
      })),
    };
  } finally {
    await calls.close();
  }
}

/** Figure 2. */
export interface PerPollResult {
  /** Marginal Temporal history events per extra status read (6-read jobs minus 3-read jobs, over 3). */
  historyEventsPerPoll: number;
  /** History events of a whole 3-read operation (intent, create, 3 reads, collect, completion). */
  historyEventsPerOperation: number;
  /** Encoded history size of a whole 3-read operation, bytes. */
  historyBytesPerOperation: number;
  /** Marginal history bytes per extra status read. */
  historyBytesPerPoll: number;
  /** Marginal journal entries appended per extra status read. */
  journalEntriesPerPoll: number;
  /** Marginal snapshot writes (record version bumps) per extra status read. */
  snapshotWritesPerPoll: number;
  journalEntriesPerOperation: number;
  /** Marginal latency of one status read, asyncjob minus naive, ms (median-based). */
  addedLatencyPerPollMs: number;
  /** Whole-operation latency at concurrency 1, ms (medians). */
  latencyMs: { asyncjobReads3: number; asyncjobReads6: number; naiveReads3: number; naiveReads6: number };
}

/** Measures figure 2 at concurrency 1. */
export async function measurePerPoll(ctx: BenchContext, dep: Deployment): Promise<PerPollResult> {
  const samples = ctx.quick ? 3 : 7;
  const calls = plainCalls({ baseUrl: dep.sims['main']!.url, token: ctx.token });
  const run = systems(ctx, dep, calls);
  const db = new Database(path.join(dep.dataDir, 'asyncjob.db'), { readonly: true, fileMustExist: true });
  try {
    const measureAsyncjob = async (script: string, reads: number) => {
      const latencies: number[] = [];
      const events: number[] = [];
      const bytes: number[] = [];
      const entries: number[] = [];
      const versions: number[] = [];
      for (let attempt = 0; latencies.length < samples; attempt++) {
        if (attempt >= samples * 3)
          throw new Error(`per-poll: fewer than ${samples} operations with exactly ${reads} reads`);
        const request = dep.request('main', script, FAST_POLICY);
        const t0 = performance.now();
        const handle = await dep.client.start(request);
        const summary = await withTimeout(
          handle.result(),
          OPERATION_TIMEOUT_MS,
          `asyncjob operation ${request.operationId}`,
        );
        if (summary.localState !== 'succeeded')
          throw new Error(`per-poll: ${request.operationId} ended ${summary.localState}`);
        // A read lost to a timeout under load is sent again: such a sample is not a clean `reads`-read operation.
        if (summary.statusRequestsUsed !== reads) continue;
        latencies.push(performance.now() - t0);
        const history = await ctx.temporal.workflow.getHandle(request.operationId).fetchHistory();
        events.push(history.events?.length ?? 0);
        bytes.push(proto.api.history.v1.History.encode(history).finish().length);
        entries.push(
          db.prepare('SELECT count(*) FROM journal WHERE operation_id = ?').pluck().get(request.operationId) as number,
        );
        versions.push(
          db
            .prepare('SELECT version FROM operations WHERE operation_id = ?')
            .pluck()
            .get(request.operationId) as number,
        );
      }
      return {
        latency: median(latencies),
        events: median(events),
        bytes: median(bytes),
        entries: median(entries),
        versions: median(versions),
      };
    };
    const measureNaive = async (script: string, reads: number) => {
      const latencies: number[] = [];
      for (let i = 0; i < samples; i++) {
        const t0 = performance.now();
        await run.naive(script, reads);
        latencies.push(performance.now() - t0);
      }
      return median(latencies);
    };
    const a3 = await measureAsyncjob('reads3', 3);
    const a6 = await measureAsyncjob('reads6', 6);
    const n3 = await measureNaive('reads3', 3);
    const n6 = await measureNaive('reads6', 6);
    return {
      historyEventsPerPoll: round((a6.events - a3.events) / 3, 2),
      historyEventsPerOperation: a3.events,
      historyBytesPerOperation: a3.bytes,
      historyBytesPerPoll: round((a6.bytes - a3.bytes) / 3, 0),
      journalEntriesPerPoll: round((a6.entries - a3.entries) / 3, 2),
      snapshotWritesPerPoll: round((a6.versions - a3.versions) / 3, 2),
      journalEntriesPerOperation: a3.entries,
      addedLatencyPerPollMs: round((a6.latency - a3.latency - (n6 - n3)) / 3, 1),
      latencyMs: {
        asyncjobReads3: round(a3.latency, 1),
        asyncjobReads6: round(a6.latency, 1),
        naiveReads3: round(n3, 1),
        naiveReads6: round(n6, 1),
      },
    };
  } finally {
    db.close();
    await calls.close();
  }
}
