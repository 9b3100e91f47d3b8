/**
 * The provider's view of a fleet's request rate: from the simulator's request log (arrival instants at the
 * provider), the most requests in any sliding window and the mean over the busy span.
 */
import type { RequestRecord } from '../../src/simulator/accounting';

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
