/**
 * SQLite's automatic WAL checkpoint, the bound of its p99: read from the WAL header, and which timed steps ran it.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { median, percentile } from '../../lib/stats';
import type { StoreEngineResult } from './result';
import { ms, type Timing } from './timing';

/** The WAL header's checkpoint sequence number of the SQLite file `file` (see {@link walCheckpoints}). */
export function walEpochOf(file: string): number {
  const header = Buffer.alloc(16);
  const fd = openSync(`${file}-wal`, 'r');
  try {
    readSync(fd, header, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  return header.readUInt32BE(12);
}

/**
 * SQLite: which timed steps ran the automatic WAL checkpoint (SQLite's default: once the WAL holds 1,000 pages,
 * the committing connection copies them into the database file, with an fsync of each file). A checkpoint is
 * seen in the WAL header's checkpoint sequence number, which the first commit after it rewrites: so the step
 * before the one that changed it ran the checkpoint.
 */
export function walCheckpoints(timings: readonly Timing[]): StoreEngineResult['walCheckpoints'] {
  if (timings.some((t) => t.walEpoch === undefined)) return undefined;
  const ran = new Set<number>();
  for (let i = 1; i < timings.length; i++) if (timings[i]!.walEpoch !== timings[i - 1]!.walEpoch) ran.add(i - 1);
  const checkpointing = [...ran].map((i) => timings[i]!.stepMs);
  const others = timings.filter((_, i) => !ran.has(i)).map((t) => t.stepMs);
  return {
    steps: checkpointing.length,
    stepP50Ms: ms(median(checkpointing)),
    otherStepsP99Ms: ms(percentile(others, 99)),
    otherStepsMaxMs: ms(Math.max(...others)),
  };
}
