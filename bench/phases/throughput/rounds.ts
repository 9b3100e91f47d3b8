/**
 * Figure 1 at one concurrency and policy: asyncjob (A) and bare (B) in alternated pairs, A B B A A B, so a drift
 * in the machine's load hits both alike, each pair followed by a round of the naive loop (a ceiling, not a
 * comparison).
 */
import type { BenchContext, Deployment } from '../../lib/context';
import { cpuMs, median, midMedian, nowMs, percentile, round, runPool, spread } from '../../lib/stats';
import { historyCost, sampleOf, type HistoryCost } from './history';
import type { BenchPolicy, PolicyName, SystemName } from './policies';
import type { SystemRounds, ThroughputPoint } from './result';
import type { Job, RunOne } from './systems';

/** Operations per round whose histories are read afterwards (events and timers per operation under that load). */
const HISTORY_SAMPLES_PER_ROUND = 3;

/** One concurrency of the plan: `pairs` asyncjob/bare pairs of `operations` operations each. */
export interface Step {
  concurrency: number;
  operations: number;
  pairs: number;
}

/**
 * Rounds per policy. A round runs at least `concurrency` operations (fewer would never reach it). The server
 * finishes ~6 operations per second on 2 cores whatever the policy, so a round of 200 costs ~35 s and one of 1,000
 * ~3 minutes: 1,000 runs at 1 s only (at that depth a workflow task waits seconds in the queue, so no planned
 * instant is still ahead and neither policy starts timers: the measured timers per operation say so).
 */
export function plan(policy: PolicyName, quick: boolean): Step[] {
  const s = (concurrency: number, operations: number, pairs: number): Step => ({ concurrency, operations, pairs });
  if (quick) {
    if (policy === 'short') return [s(1, 2, 2), s(10, 10, 2), s(100, 100, 2)];
    if (policy === '1s') return [s(1, 2, 2), s(10, 10, 2)];
    return [s(10, 10, 2)];
  }
  // At 100 in flight a round of 100 is one wave, timed by its slowest operation (pairs spread 0.39-0.69 at 5 s in
  // one run); 200 keep the pool full for half the round, so a round measures throughput rather than one tail. Five
  // pairs there: with three, one slow round (half the others' rate, seen first in a point) moved a median by 26%
  // between two runs of one code. At the short policy a round must outlast a blip of the shared machine: once the
  // create's activity read on, asyncjob finished 20 operations one at a time and 60 ten at a time in ~3 s, and that
  // point's ratio moved from 1.314 to 1.596 between two runs of one code; 60 and 200 last 8-18 s (asyncjob 7 and
  // 21 a second, bare 3 and 15). At 1 s one at a time an operation is its three
  // waits (0.5-1 s each, drawn at random): rounds of 4 moved the ratio from 1.119 to 0.956 between two runs of one
  // code by chance alone, rounds of 12 from 1.046 to 1.024 (pairs 0.963-1.063), so 20, which keep a run's chance of
  // reading below parity by the dice alone near 3%. At 1,000 one pair put its ratio at 0.72, 0.90 and 0.65 in three
  // runs of nearly one code (asyncjob always first): three pairs, as at every other point. The 5 s policy starts at
  // 10 in flight: one at a time its operation is three waits of 2.5-5 s, rounds of one moved the ratio from 0.925 to
  // 1.119 between two runs of one code (pairs 0.743-1.381), and rounds that hold it within 20% would take 9
  // operations, 10 minutes a run, to measure what 1 s at 1 in flight measures already: the engine's time per
  // operation beside the waits.
  if (policy === 'short') return [s(1, 60, 3), s(10, 200, 3), s(100, 200, 5)];
  if (policy === '1s') return [s(1, 20, 3), s(10, 10, 3), s(100, 200, 5), s(1_000, 1_000, 3)];
  return [s(10, 10, 3), s(100, 200, 5)];
}

/** What one round measured. */
interface Round {
  opsPerSecond: number;
  durationsMs: number[];
  workerCpuMs: number;
  serverCpuMs: number;
  costs: HistoryCost[];
}

/** One round: `step.operations` operations of `system`, `step.concurrency` at a time, with their CPU and histories. */
async function runRound(
  ctx: BenchContext,
  dep: Deployment,
  run: RunOne,
  system: SystemName,
  job: Job,
  step: Step,
): Promise<Round> {
  const ids: string[] = [];
  const workerPid = system === 'naive' ? process.pid : dep.worker.pid;
  const w0 = cpuMs(workerPid);
  const s0 = cpuMs(ctx.server.pid);
  const { elapsedMs, durationsMs } = await runPool(step.operations, step.concurrency, async () => {
    ids.push((await run(job)).id);
  });
  const workerCpuMs = cpuMs(workerPid) - w0;
  const serverCpuMs = cpuMs(ctx.server.pid) - s0;
  const costs =
    system === 'naive'
      ? []
      : await Promise.all(sampleOf(ids, HISTORY_SAMPLES_PER_ROUND).map((id) => historyCost(ctx, id)));
  return { opsPerSecond: (step.operations / elapsedMs) * 1000, durationsMs, workerCpuMs, serverCpuMs, costs };
}

/** One system's rounds at one point, in the result's terms. */
function summarise(rounds: Round[], operationsPerRound: number): SystemRounds {
  const ops = rounds.map((r) => r.opsPerSecond);
  const count = rounds.length * operationsPerRound;
  const latencies = rounds.flatMap((r) => r.durationsMs);
  const costs = rounds.flatMap((r) => r.costs);
  return {
    rounds: rounds.length,
    opsPerSecond: spread(ops, 3),
    roundsOpsPerSecond: ops.map((v) => round(v, 3)),
    workerCpuMsPerOperation: round(rounds.reduce((sum, r) => sum + r.workerCpuMs, 0) / count, 1),
    serverCpuMsPerOperation: round(rounds.reduce((sum, r) => sum + r.serverCpuMs, 0) / count, 1),
    latencyP50Ms: round(percentile(latencies, 50), 1),
    latencyP99Ms: round(percentile(latencies, 99), 1),
    ...(costs.length > 0
      ? {
          historyEventsPerOperation: median(costs.map((c) => c.events)),
          timersPerOperation: median(costs.map((c) => c.timers)),
        }
      : {}),
  };
}

const opsMedian = (rounds: readonly Round[]): number => midMedian(rounds.map((r) => r.opsPerSecond));

/**
 * The naive loop's rounds at a point: one after each pair, so the ceiling is measured beside the rounds it is
 * compared with (run after all the pairs, its first round ran at two thirds of the others' rate and the ratio to it
 * moved 40% between two runs of one code), and at least three: it needs no server, so they are cheap even where the
 * pairs are one, and a ceiling taken from one short round (3 s at 1,000 in flight) moved 30% between two runs.
 */
const MIN_NAIVE_ROUNDS = 3;

/**
 * The naive loop's operations per round: at the short policy it finishes hundreds a second, so a round of the
 * pairs' size lasts a fraction of a second; ten times as many make it last seconds, at the same concurrency.
 */
const naiveOperations = (policy: BenchPolicy, step: Step): number =>
  policy.name === 'short' ? step.operations * 10 : step.operations;

/** One concurrency at one policy: the alternated pairs, a naive round after each, at least three naive rounds. */
export async function measurePoint(
  ctx: BenchContext,
  dep: Deployment,
  run: Record<SystemName, RunOne>,
  policy: BenchPolicy,
  step: Step,
  log: (line: string) => void,
): Promise<ThroughputPoint> {
  const t0 = nowMs();
  const job: Job = { script: 'reads3', reads: 3, policy };
  const rounds: Record<SystemName, Round[]> = { asyncjob: [], bare: [], naive: [] };
  const order: string[] = [];
  const pairRatios: number[] = [];
  const naiveStep = { ...step, operations: naiveOperations(policy, step) };
  const runNaive = async () => rounds.naive.push(await runRound(ctx, dep, run.naive, 'naive', job, naiveStep));
  // One wave first, not recorded: the naive loop's first round at a concurrency opened its connections and ran
  // at half the rate of the next (509, 826, 1,030 ops/s at the short policy, 100 in flight).
  await runRound(ctx, dep, run.naive, 'naive', job, { ...step, operations: step.concurrency });
  for (let p = 0; p < step.pairs; p++) {
    // A B, then B A: each system runs first as often as second, so a trend in the machine's load cancels out.
    const pair: SystemName[] = p % 2 === 0 ? ['asyncjob', 'bare'] : ['bare', 'asyncjob'];
    for (const system of pair) {
      const r = await runRound(ctx, dep, run[system], system, job, step);
      rounds[system].push(r);
      order.push(system === 'asyncjob' ? 'A' : 'B');
      log(
        `  ${policy.name} c=${step.concurrency} ${system} round ${rounds[system].length}: ${round(r.opsPerSecond, 2)} ops/s`,
      );
    }
    pairRatios.push(rounds.asyncjob[p]!.opsPerSecond / rounds.bare[p]!.opsPerSecond);
    await runNaive();
    order.push('N');
  }
  while (rounds.naive.length < MIN_NAIVE_ROUNDS) {
    await runNaive();
    order.push('N');
  }
  const naiveRates = rounds.naive.map((r) => round(r.opsPerSecond, 2)).join(', ');
  log(`  ${policy.name} c=${step.concurrency} naive: ${naiveRates} ops/s`);
  const asyncjob = summarise(rounds.asyncjob, step.operations);
  const bare = summarise(rounds.bare, step.operations);
  const naive = summarise(rounds.naive, naiveStep.operations);
  return {
    concurrency: step.concurrency,
    operationsPerRound: step.operations,
    naiveOperationsPerRound: naiveStep.operations,
    order: order.join(' '),
    asyncjob,
    bare,
    naive,
    asyncjobOverBare: {
      ofMedians: round(opsMedian(rounds.asyncjob) / opsMedian(rounds.bare), 3),
      pairMin: round(Math.min(...pairRatios), 3),
      pairMax: round(Math.max(...pairRatios), 3),
      pairs: pairRatios.map((v) => round(v, 3)),
    },
    asyncjobOverNaive: round(opsMedian(rounds.asyncjob) / opsMedian(rounds.naive), 4),
    seconds: round((nowMs() - t0) / 1000, 1),
  };
}
