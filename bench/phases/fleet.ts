/**
 * Figure 4: fleet pressure. Many operations started in the same second against one provider: the requests per
 * second the provider sees (1-second buckets of the simulator's request log), peak over mean; then the same with
 * a per-provider rate limit (`maxRequestsPerSecond`, Temporal's `maxTaskQueueActivitiesPerSecond`), where the
 * peak must not exceed the limit.
 */
import type { RequestRecord } from '../../src/simulator';
import { deploy, type BenchContext, type Deployment } from '../lib/context';
import { maxInWindow, nowMs, perSecondBuckets, round, withTimeout } from '../lib/stats';

/** The realistic-but-short policy of this figure: backoff from 1 s to 4 s with bounded jitter. */
export const FLEET_POLICY = { baseDelayMs: 1_000, maxDelayMs: 4_000 } as const;

/** Pressure figures over one request log. */
export interface Pressure {
  requests: number;
  seconds: number;
  meanPerSecond: number;
  peakPerSecond: number;
  peakOverMean: number;
  /** The most requests inside any sliding 1-second window (stricter than whole-second buckets). */
  peakSlidingPerSecond: number;
  /**
   * Peak over mean inside the busy window (the seconds holding the middle 95% of requests): stragglers that
   * finish long after the others stretch the full window and lower its mean; this one is not affected by them.
   */
  busySeconds: number;
  busyPeakOverMean: number;
}

/** One fleet run. */
export interface FleetRun {
  operations: number;
  statusReadsPerOperation: number;
  maxRequestsPerSecond: number | null;
  /** Time to start every operation (client `start` calls, all at once), s. */
  startSeconds: number;
  /** Time until every operation succeeded, s. */
  completeSeconds: number;
  all: Pressure;
  /** Status reads only: the polling herd that jitter spreads. */
  statusReads: Pressure;
  /** Whole-second buckets of all requests (for the curious; the shape of the load). */
  bucketsPerSecond: number[];
  /** For a limited run: whether no 1-second bucket exceeded the limit. */
  withinLimit: boolean | null;
}

/** Figure 4. */
export interface FleetResult {
  policy: typeof FLEET_POLICY;
  unlimited: FleetRun;
  limited: FleetRun;
}

function pressure(records: readonly RequestRecord[]): Pressure {
  const times = records.map((r) => r.atMs);
  const buckets = perSecondBuckets(times);
  const mean = records.length / Math.max(1, buckets.length);
  const peak = Math.max(0, ...buckets);
  const sorted = [...times].sort((a, b) => a - b);
  const from = sorted[Math.floor(sorted.length * 0.025)] ?? 0;
  const to = sorted[Math.max(0, Math.ceil(sorted.length * 0.975) - 1)] ?? 0;
  const busy = perSecondBuckets(sorted.filter((t) => t >= from && t <= to));
  const busyCount = busy.reduce((a, b) => a + b, 0);
  return {
    busySeconds: busy.length,
    busyPeakOverMean: busy.length === 0 ? 0 : round(Math.max(...busy) / (busyCount / busy.length), 2),
    requests: records.length,
    seconds: buckets.length,
    meanPerSecond: round(mean, 1),
    peakPerSecond: peak,
    peakOverMean: round(peak / mean, 2),
    peakSlidingPerSecond: maxInWindow(times, 1_000),
  };
}

async function fleetRun(
  dep: Deployment,
  provider: string,
  operations: number,
  script: string,
  reads: number,
  limit: number | null,
): Promise<FleetRun> {
  const t0 = nowMs();
  const requests = Array.from({ length: operations }, () => dep.request(provider, script, FLEET_POLICY));
  const handles = await Promise.all(requests.map((r) => dep.client.start(r)));
  const startSeconds = (nowMs() - t0) / 1000;
  const summaries = await withTimeout(Promise.all(handles.map((h) => h.result())), 600_000, `fleet run on ${provider}`);
  const completeSeconds = (nowMs() - t0) / 1000;
  const bad = summaries.filter((s) => s.localState !== 'succeeded' || s.statusRequestsUsed < reads);
  if (bad.length > 0)
    throw new Error(
      `fleet: ${bad.length} operations did not succeed after ${reads} reads (first: ${bad[0]!.operationId} ${bad[0]!.localState})`,
    );
  const records = await dep.sims[provider]!.requests();
  const all = pressure(records);
  return {
    operations,
    statusReadsPerOperation: reads,
    maxRequestsPerSecond: limit,
    startSeconds: round(startSeconds, 2),
    completeSeconds: round(completeSeconds, 2),
    all,
    statusReads: pressure(records.filter((r) => r.action === 'status')),
    bucketsPerSecond: perSecondBuckets(records.map((r) => r.atMs)),
    withinLimit: limit === null ? null : all.peakPerSecond <= limit,
  };
}

/** Measures figure 4. */
export async function measureFleet(ctx: BenchContext, log: (line: string) => void): Promise<FleetResult> {
  const limit = ctx.quick ? 10 : 20;
  const dep = await deploy(ctx, 'fleet', { providers: { free: {}, limited: { maxRequestsPerSecond: limit } } });
  try {
    const unlimited = await fleetRun(dep, 'free', ctx.quick ? 60 : 300, 'reads4', 4, null);
    log(
      `  unlimited: peak ${unlimited.all.peakPerSecond}/s over mean ${unlimited.all.meanPerSecond}/s = ${unlimited.all.peakOverMean}; status reads ${unlimited.statusReads.peakOverMean}`,
    );
    const limited = await fleetRun(dep, 'limited', ctx.quick ? 40 : 150, 'reads2', 2, limit);
    log(
      `  limited to ${limit}/s: peak ${limited.all.peakPerSecond}/s (sliding ${limited.all.peakSlidingPerSecond}), mean ${limited.all.meanPerSecond}/s`,
    );
    return { policy: FLEET_POLICY, unlimited, limited };
  } finally {
    await dep.stop();
  }
}
