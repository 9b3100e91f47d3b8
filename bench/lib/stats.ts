/**
 * Small measurement helpers: percentiles, a bounded-concurrency runner, per-second buckets and process RSS.
 */
import { readFileSync } from 'node:fs';

/** The `p`-th percentile (0..100, nearest rank) of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median of `values`. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Milliseconds since an arbitrary origin, sub-millisecond resolution. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * Runs `total` tasks with at most `concurrency` in flight; returns each task's duration (ms) and the elapsed
 * wall time. A failed task fails the whole run (a benchmark that loses operations measures nothing).
 */
export async function runPool(
  total: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<{ elapsedMs: number; durationsMs: number[] }> {
  const durationsMs: number[] = [];
  let next = 0;
  let failure: { error: unknown } | undefined;
  const started = nowMs();
  const lane = async (): Promise<void> => {
    while (next < total && failure === undefined) {
      const index = next++;
      const t0 = nowMs();
      try {
        await task(index);
      } catch (error) {
        failure ??= { error };
        return;
      }
      durationsMs.push(nowMs() - t0);
    }
  };
  // Every lane ends before this returns, so nothing is left running when a caller cleans up after a failure.
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, lane));
  if (failure !== undefined) throw failure.error;
  return { elapsedMs: nowMs() - started, durationsMs };
}

/** Counts of events per whole second from the first event to the last (empty seconds included). */
export function perSecondBuckets(timesMs: readonly number[]): number[] {
  if (timesMs.length === 0) return [];
  const first = Math.min(...timesMs);
  const last = Math.max(...timesMs);
  const buckets = new Array<number>(Math.floor((last - first) / 1000) + 1).fill(0);
  for (const t of timesMs) buckets[Math.floor((t - first) / 1000)]! += 1;
  return buckets;
}

/** The most events inside any window of `windowMs` (sliding over the events themselves). */
export function maxInWindow(timesMs: readonly number[], windowMs: number): number {
  const sorted = [...timesMs].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j]! - sorted[i]! >= windowMs) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

/** A process's resident set size in MiB from `/proc/<pid>/status` (VmRSS); NaN when unreadable. */
export function rssMiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Rounds to `digits` decimals (for the report). */
export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Waits `ms`. */
export function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** CPU time (user + system, all threads) a process has used, in ms, from `/proc/<pid>/stat`; NaN when unreadable. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** `promise`, or a rejection naming `what` after `ms` (a benchmark must end, even when an operation hangs). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The median with the two middle values averaged for an even count (a few rounds: not the lower one); NaN when empty. */
export function midMedian(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The smallest, the median and the largest of a set of rounds. */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

/** The {@link Spread} of `values` ({@link midMedian}), each rounded to `digits` decimals; NaNs when empty. */
export function spread(values: readonly number[], digits = 2): Spread {
  return {
    min: round(Math.min(...values), digits),
    median: round(midMedian(values), digits),
    max: round(Math.max(...values), digits),
  };
}
