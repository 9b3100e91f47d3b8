/**
 * Figure 4: fleet pressure. A herd of operations started in the same second against one provider: the requests
 * per second the provider sees (1-second buckets of the simulator's request log), peak over mean, for status
 * reads (what the policy's jitter spreads) and for all requests. asyncjob's herd runs beside the naive loop's
 * (the same plan with no engine) in alternated rounds, small enough that the dev server keeps up, and each
 * asyncjob round says from its histories and CPU whether it did. Then a herd with a per-provider rate limit
 * (`maxRequestsPerSecond`), the configuration for a provider that cannot take a herd: its peak must not exceed the
 * limit, and its peak over mean is the target (`targets.ts` says why the unlimited herds are not held to it).
 */
import { deploy, type BenchContext } from '../../lib/context';
import { nowMs, perSecondBuckets, round, spread, withTimeout } from '../../lib/stats';
import { herdAccount } from './drain';
import { asyncjobHerd, FLEET_POLICY, naiveHerd } from './herd';
import { pressure } from './pressure';
import type { FleetResult, HerdRound, HerdSize, LimitedRun } from './result';

export type { FleetResult } from './result';
export { fleetTargets } from './targets';

/**
 * Herd sizes with their rounds per system (alternated A B B A ...): a herd small enough for the server to keep up
 * on 2 cores (the target's), and a larger one whose start the server queues (beside it, for the contrast).
 */
const SCALE = {
  full: {
    herds: [
      { operations: 20, roundsEach: 4 },
      { operations: 100, roundsEach: 1 },
    ],
    limited: 150,
    limit: 20,
  },
  quick: { herds: [{ operations: 20, roundsEach: 2 }], limited: 40, limit: 10 },
} as const;

/** The order of a size's rounds: each system first as often as second. */
const ORDER = ['asyncjob', 'naive', 'naive', 'asyncjob'] as const;

/** Queueing of a quarter of the 1-second bucket moves a request into the next bucket often enough to count. */
const QUEUE_LIMIT_MS = 250;

/** The status reads of each operation of the rate-limited herd. */
const LIMITED_STATUS_READS = 2;

async function limitedRun(
  dep: Awaited<ReturnType<typeof deploy>>,
  operations: number,
  limit: number,
): Promise<LimitedRun> {
  const t0 = nowMs();
  const handles = await Promise.all(
    Array.from({ length: operations }, () =>
      dep.client.start(dep.request('limited', `reads${LIMITED_STATUS_READS}`, FLEET_POLICY)),
    ),
  );
  const summaries = await withTimeout(Promise.all(handles.map((h) => h.result())), 600_000, 'rate-limited fleet');
  const bad = summaries.filter((s) => s.localState !== 'succeeded');
  if (bad.length > 0) throw new Error(`fleet: ${bad.length} rate-limited operations did not succeed`);
  const records = await dep.sims.limited!.requests();
  const all = pressure(records);
  return {
    operations,
    statusReadsPerOperation: LIMITED_STATUS_READS,
    maxRequestsPerSecond: limit,
    completeSeconds: round((nowMs() - t0) / 1000, 2),
    all,
    bucketsPerSecond: perSecondBuckets(records.map((r) => r.atMs)),
    withinLimit: all.peakPerSecond <= limit,
    account: herdAccount(records, operations, LIMITED_STATUS_READS, limit),
  };
}

/** Measures figure 4. */
export async function measureFleet(ctx: BenchContext, log: (line: string) => void): Promise<FleetResult> {
  const scale = SCALE[ctx.quick ? 'quick' : 'full'];
  // Two worker processes, as the product configures them: without a rate limit for the herds, and with one for the
  // limited run (the status loop on in both; under the limit each of its reads is paced as it is written).
  const dep = await deploy(ctx, 'fleet', { providers: { free: {} } });
  const rounds: HerdRound[] = [];
  try {
    for (const size of scale.herds)
      for (let i = 0; i < size.roundsEach * 2; i++) {
        const system = ORDER[i % ORDER.length]!;
        const r =
          system === 'asyncjob'
            ? await asyncjobHerd(ctx, dep, 'free', size.operations, QUEUE_LIMIT_MS)
            : await naiveHerd(ctx, dep, 'free', size.operations);
        log(
          `  ${system} herd of ${r.operations}: status reads peak ${r.statusReads.peakPerSecond}/s over mean ${r.statusReads.meanPerSecond}/s = ${r.statusReads.peakOverMean}; creates over ${r.createSpreadSeconds} s${r.server ? `; ${r.server.evidence}` : ''}`,
        );
        rounds.push(r);
      }
  } finally {
    await dep.stop();
  }
  const limitedDep = await deploy(ctx, 'fleet-limited', {
    providers: { limited: { maxRequestsPerSecond: scale.limit } },
  });
  let limited: LimitedRun;
  try {
    limited = await limitedRun(limitedDep, scale.limited, scale.limit);
  } finally {
    await limitedDep.stop();
  }
  log(
    `  limited to ${scale.limit}/s: peak ${limited.all.peakPerSecond}/s (sliding ${limited.all.peakSlidingPerSecond}), mean ${limited.all.meanPerSecond}/s`,
  );
  const sizes: HerdSize[] = scale.herds.map(({ operations }) => {
    const of = rounds.filter((r) => r.operations === operations);
    const ratios = (system: HerdRound['system']): number[] =>
      of.filter((r) => r.system === system).map((r) => r.statusReads.peakOverMean);
    const servers = of.flatMap((r) => (r.server ? [r.server] : []));
    return {
      operations,
      statusReadsPeakOverMean: { asyncjob: spread(ratios('asyncjob')), naive: spread(ratios('naive')) },
      saturated: servers.some((s) => s.saturated),
      evidence: servers.map((s) => s.evidence),
    };
  });
  return {
    policy: { ...FLEET_POLICY },
    statusLoop: { herds: dep.worker.pollLoop, limited: limitedDep.worker.pollLoop },
    rounds,
    sizes,
    queueLimitMs: QUEUE_LIMIT_MS,
    limited,
  };
}
