/** Timing one step's store writes as the activity makes them. */
import { alreadyRecorded, commitStep } from '../../../src/activities/journal-writer';
import type { OperationStore } from '../../../src/adapters/store/operation-store';
import { nowMs, round } from '../../lib/stats';
import type { PlannedStep } from './template';

/** A figure in ms as reported: to the microsecond. */
export const ms = (value: number): number => round(value, 3);

/** One step's time and its two parts, ms. */
export interface Timing {
  stepMs: number;
  headReadMs: number;
  commitMs: number;
  /** SQLite: the WAL's checkpoint sequence number after the step (read outside the timed span). */
  walEpoch?: number;
}

/** One step's store writes exactly as `inCallFrame` makes them: the idempotency check, then `commitStep`. */
async function timeStep(store: OperationStore, step: PlannedStep): Promise<Timing> {
  const t0 = nowMs();
  const recorded = await alreadyRecorded(store, step.input);
  const t1 = nowMs();
  if (recorded !== undefined)
    throw new Error(`${step.operationId}: step ${step.input.journal.nextSequence} already recorded`);
  await commitStep(store, step.record, step.entries, step.nowMs);
  const t2 = nowMs();
  return { stepMs: t2 - t0, headReadMs: t1 - t0, commitMs: t2 - t1 };
}

/** Times `steps` one after another; with `walEpoch`, records each step's WAL checkpoint number after it. */
export async function timeSequentially(
  store: OperationStore,
  steps: readonly PlannedStep[],
  walEpoch?: () => number,
): Promise<Timing[]> {
  const timings: Timing[] = [];
  for (const step of steps) {
    const timing = await timeStep(store, step);
    timings.push(walEpoch === undefined ? timing : { ...timing, walEpoch: walEpoch() });
  }
  return timings;
}
