/** Figure 1: a warm-up, then each policy's concurrencies in alternated rounds (bench/README.md). */
import type { BenchContext, Deployment } from '../../lib/context';
import { plainCalls } from '../../lib/provider-calls';
import { nowMs, round, runPool } from '../../lib/stats';
import { assertSameDelayRule, POLICIES, type BenchPolicy, type SystemName } from './policies';
import type { PolicyThroughput, ThroughputPoint, ThroughputResult } from './result';
import { measurePoint, plan } from './rounds';
import { asyncjobExtraStatusReads, systems, type RunOne } from './systems';

/** Warm-up: JIT, pools, caches; 3-read operations at the short policy, each system in turn. */
async function warmUp(ctx: BenchContext, run: Record<SystemName, RunOne>): Promise<void> {
  const short = POLICIES[0]!;
  for (const name of ['asyncjob', 'bare', 'naive'] as const) {
    await runPool(
      ctx.quick ? 10 : 20,
      10,
      async () => void (await run[name]({ script: 'reads3', reads: 3, policy: short })),
    );
  }
}

/** Figure 1 at one policy: each concurrency of its plan. */
async function measurePolicy(
  ctx: BenchContext,
  dep: Deployment,
  run: Record<SystemName, RunOne>,
  policy: BenchPolicy,
  log: (line: string) => void,
): Promise<PolicyThroughput> {
  const p0 = nowMs();
  const points: ThroughputPoint[] = [];
  for (const step of plan(policy.name, ctx.quick)) points.push(await measurePoint(ctx, dep, run, policy, step, log));
  const seconds = round((nowMs() - p0) / 1000, 1);
  log(`  ${policy.name} policy: ${seconds} s`);
  return { ...policy, statusReadsPerOperation: 3, points, seconds };
}

/** What the run left out of the plan of bench/README.md, and why. */
function notesOf(quick: boolean): string[] {
  return quick
    ? ['quick run: concurrency up to 100 at the short policy, 10 at 1 s and 5 s; two pairs (A B B A) per point']
    : [
        'concurrency 1,000 runs at 1 s only (three pairs, A B B A A B): a round there takes ~1,000 / (server ops/s) ≈ 3 minutes per system on 2 cores; see timersPerOperation for why the short policy would measure the same',
      ];
}

/** Both workflow workers' cache sizes as the worker process reported them (the comparison needs them equal). */
function workflowCaches(dep: Deployment): ThroughputResult['maxCachedWorkflows'] {
  const { asyncjob, bare } = dep.worker.maxCachedWorkflows;
  if (bare === undefined) throw new Error('throughput: the worker process runs no bare worker');
  return { asyncjob, bare };
}

/** Measures figure 1 (warm-up first; then each policy, each concurrency in alternated rounds). */
export async function measureThroughput(
  ctx: BenchContext,
  dep: Deployment,
  log: (line: string) => void,
): Promise<ThroughputResult> {
  assertSameDelayRule();
  const maxCachedWorkflows = workflowCaches(dep);
  const t0 = nowMs();
  const calls = plainCalls({ baseUrl: dep.sims['main']!.url, token: ctx.token }, 1_024);
  try {
    const run = systems(ctx, dep, calls);
    await warmUp(ctx, run);
    const warmUpSeconds = round((nowMs() - t0) / 1000, 1);
    const policies: PolicyThroughput[] = [];
    for (const policy of POLICIES) policies.push(await measurePolicy(ctx, dep, run, policy, log));
    return {
      policies,
      asyncjobExtraStatusReads: asyncjobExtraStatusReads(),
      maxCachedWorkflows,
      warmUpSeconds,
      seconds: round((nowMs() - t0) / 1000, 1),
      notes: notesOf(ctx.quick),
    };
  } finally {
    await calls.close();
  }
}
