/**
 * The provider's view of a fleet's request rate: from the simulator's request log (arrival instants at the
 * provider), the most requests in any sliding window and the mean over the busy span.
 */
import { DIALECTS, type Dialect } from '../load/plan';
import type { RequestRecord } from '../../src/simulator/accounting';
import type { ProviderRecords } from '../load/verify';
import { PARTITIONED_SLOT } from './chaos';
import { callsOfSlot, heldThrough, type PartitionSpan } from './held-deliveries';

/** What one provider saw. */
export interface ObservedRate {
  requests: number;
  /** Most requests that arrived within any `windowMs` (a window starting at each arrival). */
  maxInWindow: number;
  /** Requests per second from the first arrival to the last. */
  meanPerSecond: number;
  /** Seconds (windows starting at an arrival) that held more than `limit` requests. */
  windowsOverLimit: number;
}

/** Measures `records` (provider calls only) against `limit` requests per `windowMs`. */
export function observedRate(records: readonly RequestRecord[], limit: number, windowMs = 1_000): ObservedRate {
  const instants = records
    .filter((r) => r.action !== 'sim' && r.action !== 'unknown')
    .map((r) => r.atMs)
    .sort((a, b) => a - b);
  let maxInWindow = 0;
  let windowsOverLimit = 0;
  let end = 0;
  for (let start = 0; start < instants.length; start++) {
    while (end < instants.length && instants[end]! < instants[start]! + windowMs) end++;
    const inWindow = end - start;
    maxInWindow = Math.max(maxInWindow, inWindow);
    if (inWindow > limit) windowsOverLimit++;
  }
  const spanMs = instants.length > 1 ? instants.at(-1)! - instants[0]! : 0;
  return {
    requests: instants.length,
    maxInWindow,
    meanPerSecond: spanMs > 0 ? Math.round((instants.length * 10_000) / spanMs) / 10 : 0,
    windowsOverLimit,
  };
}

/**
 * The requests of the busiest window (the first that holds the most), each as `+<ms into the window> <action>
 * from <host>`, for a report that must say where an excess came from.
 */
export function busiestWindow(
  records: readonly RequestRecord[],
  windowMs = 1_000,
): { startMs: number; requests: string[] } {
  const calls = records.filter((r) => r.action !== 'sim' && r.action !== 'unknown').sort((a, b) => a.atMs - b.atMs);
  let best: RequestRecord[] = [];
  let end = 0;
  for (let start = 0; start < calls.length; start++) {
    while (end < calls.length && calls[end]!.atMs < calls[start]!.atMs + windowMs) end++;
    if (end - start > best.length) best = calls.slice(start, end);
  }
  const startMs = best[0]?.atMs ?? 0;
  return { startMs, requests: best.map((r) => `+${r.atMs - startMs} ${r.action} from ${r.from ?? 'unknown'}`) };
}

/** What one provider saw of the fleet, and the requests left out of the count as held by the partition's network. */
export interface FleetRate extends ObservedRate {
  /** Requests the cut-off worker sent before it was joined again that arrived after the cut (`held-deliveries.ts`). */
  heldThroughPartition: number;
  /** The busiest window of the requests counted ({@link busiestWindow}). */
  busiest: ReturnType<typeof busiestWindow>;
}

/**
 * Each provider's rate as its simulator saw it, leaving out the requests the network held through the partition
 * (`spans`: each time it cut the worker off; none without a partition), which the cut-off worker's logs in `logDir`
 * name.
 */
export async function fleetRates(
  sims: Record<Dialect, ProviderRecords>,
  provider: (dialect: Dialect) => string,
  limit: number,
  spans: readonly PartitionSpan[],
  logDir: string,
): Promise<Record<Dialect, FleetRate>> {
  const calls = spans.length > 0 ? await callsOfSlot(logDir, PARTITIONED_SLOT) : [];
  const rateOf = (dialect: Dialect): FleetRate => {
    const records = sims[dialect].requests();
    const held = heldThrough(spans, provider(dialect), calls, records);
    const counted = records.filter((record) => !held.has(record.requestId));
    return { ...observedRate(counted, limit), heldThroughPartition: held.size, busiest: busiestWindow(counted) };
  };
  return Object.fromEntries(DIALECTS.map((dialect) => [dialect, rateOf(dialect)])) as Record<Dialect, FleetRate>;
}
