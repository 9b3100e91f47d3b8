/**
 * SQLite's WAL checkpoints and the steps they touch. The product checkpoints on a thread of the store's own
 * (`src/adapters/store/sqlite-driver.ts`); a step can still wait for one of its turns (a RESTART checkpoint
 * between two of the process's transactions, once the WAL passes its limit), counted in `walStatus().turns`. With
 * `checkpointIntervalMs: 0` (the comparison run), SQLite checkpoints inside the commit that takes the WAL past
 * 1,000 pages, seen in the WAL header's checkpoint sequence number.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { OperationStore } from '../../../src/adapters/store/operation-store';
import { SqliteOperationStore } from '../../../src/adapters/store/sqlite-store';
import { median, percentile } from '../../lib/stats';
import type { StepSplit } from './result';
import { ms, type Timing } from './timing';

/** The WAL header's checkpoint sequence number of the SQLite file `file` (0 while the WAL is empty). */
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

/** The number of turns the store's checkpointer has taken (a RESTART checkpoint between two transactions). */
export function turnsOf(store: OperationStore): number {
  if (!(store instanceof SqliteOperationStore)) throw new Error('turnsOf: not a SQLite store');
  return store.walStatus().turns;
}

/**
 * Splits the timed steps by their mark (read after each step): the steps it changed at, their median, and the
 * p99 and max of all the others. `previous`: the step before the change is the one that paid (a checkpoint in
 * its commit changes the header at the next commit, which starts the WAL again); `same`: the step itself waited
 * for it (a turn taken before or during the step).
 */
export function splitByMark(timings: readonly Timing[], paidBy: 'previous' | 'same'): StepSplit | undefined {
  if (timings.some((t) => t.mark === undefined)) return undefined;
  const paid = new Set<number>();
  for (let i = 1; i < timings.length; i++)
    if (timings[i]!.mark !== timings[i - 1]!.mark) paid.add(paidBy === 'previous' ? i - 1 : i);
  const paying = [...paid].map((i) => timings[i]!.stepMs);
  const others = timings.filter((_, i) => !paid.has(i)).map((t) => t.stepMs);
  return {
    steps: paying.length,
    stepP50Ms: paying.length > 0 ? ms(median(paying)) : null,
    otherStepsP99Ms: ms(percentile(others, 99)),
    otherStepsMaxMs: ms(Math.max(...others)),
  };
}
