/** Timing one step's store writes as the activity makes them. */
import { alreadyRecorded, commitStep, snapshotOf } from '../../../src/activities/journal-writer';
import type { OperationStore } from '../../../src/adapters/store/operation-store';
import { nowMs, round } from '../../lib/stats';
import { READ_MS, type PlannedStep } from './template';

/** A figure in ms as reported: to the microsecond. */
export const ms = (value: number): number => round(value, 3);

/** One step's time and its two parts, ms. */
export interface Timing {
  stepMs: number;
  /** The activity's first read: false; a read of its loop: true. */
  inLoop: boolean;
  /** Before the commit: the first read's idempotency check (a head read), a loop read's reservation (a write). */
  beforeCommitMs: number;
  commitMs: number;
  /** SQLite: a counter read after the step, outside the timed span (see `sqlite-checkpoints.ts`). */
  mark?: number;
}

/**
 * One step's store calls exactly as `pollStatus` makes them: its first read checks `alreadyRecorded` (a head
 * read), a read of its loop stores its reservation (`putReservation`, a write transaction); then `commitStep`.
 */
async function timeStep(store: OperationStore, step: PlannedStep): Promise<Timing> {
  const t0 = nowMs();
  if (step.inLoop) {
    if (!(await store.putReservation(snapshotOf(step.input, step.nowMs - READ_MS))))
      throw new Error(`${step.operationId}: reservation at ${step.input.journal.nextSequence - 1} refused`);
  } else if ((await alreadyRecorded(store, step.input)) !== undefined)
    throw new Error(`${step.operationId}: step ${step.input.journal.nextSequence} already recorded`);
  const t1 = nowMs();
  await commitStep(store, step.record, step.entries, step.nowMs);
  const t2 = nowMs();
  return { stepMs: t2 - t0, inLoop: step.inLoop, beforeCommitMs: t1 - t0, commitMs: t2 - t1 };
}

/** One turn of the event loop, as a worker's loop turns between two steps (the provider call's I/O). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Times `steps` one after another, letting the event loop turn between them (outside the timed span: a worker
 * never runs two steps without I/O between them, and the store's checkpointer asks for its turns through the
 * event loop); with `mark`, records its value after each step.
 */
export async function timeSequentially(
  store: OperationStore,
  steps: readonly PlannedStep[],
  mark?: () => number,
): Promise<Timing[]> {
  const timings: Timing[] = [];
  for (const step of steps) {
    await turn();
    const timing = await timeStep(store, step);
    timings.push(mark === undefined ? timing : { ...timing, mark: mark() });
  }
  return timings;
}
