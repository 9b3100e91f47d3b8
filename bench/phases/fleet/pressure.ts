/** Requests per second a provider saw, from its simulator's request log: peak over mean in 1-second buckets. */
import type { RequestRecord } from '../../../src/simulator';
import { maxInWindow, perSecondBuckets, round } from '../../lib/stats';

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

/** The pressure of `records` (1-second buckets from the first request to the last). */
export function pressure(records: readonly RequestRecord[]): Pressure {
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
    requests: records.length,
    seconds: buckets.length,
    meanPerSecond: round(mean, 1),
    peakPerSecond: peak,
    peakOverMean: round(peak / mean, 2),
    peakSlidingPerSecond: maxInWindow(times, 1_000),
    busySeconds: busy.length,
    busyPeakOverMean: busy.length === 0 ? 0 : round(Math.max(...busy) / (busyCount / busy.length), 2),
  };
}
