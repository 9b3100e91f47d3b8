/**
 * The timed steps of figure 6: the next status reads of filled operations picked at random, planned before the
 * store opens (so the timings hold store work only), and what they write.
 */
import { snapshotOf, toJournalEntry } from '../../../src/activities/journal-writer';
import type { RegisteredProvider } from '../../../src/adapters/providers/registry';
import { canonicalJson } from '../../../src/core/canonical-json';
import { withoutTails } from '../../../src/core/step-outcome';
import { round } from '../../lib/stats';
import type { StoreEngineResult } from './result';
import { LANES, STEPS_PER_OPERATION, type Scale } from './scale';
import { filledRecord, statusStep, type FilledOperation, type PlannedStep, type Template } from './template';

/**
 * `perOperation` status reads of each operation, round robin (one step of each in turn), as a fleet's would come:
 * each operation's first read enters a status-polling activity, the others are reads of its loop.
 */
function roundRobin(
  provider: RegisteredProvider,
  template: Template,
  ops: readonly FilledOperation[],
  perOperation: number,
): PlannedStep[] {
  const byOperation = ops.map((op) => {
    let held = filledRecord(template, op);
    return Array.from({ length: perOperation }, () => {
      const step = statusStep(provider, held, op.jobId);
      held = withoutTails(step.record);
      return step;
    });
  });
  const steps: PlannedStep[] = [];
  for (let k = 0; k < perOperation; k++) for (const own of byOperation) steps.push({ ...own[k]!, inLoop: k > 0 });
  return steps;
}

/** The filled operations in a random order (Fisher-Yates). */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** What each run of steps is given: planned before the store opens, so the timings hold store work only. */
export interface Plan {
  warmUp: PlannedStep[];
  sequential: PlannedStep[];
  lanes: PlannedStep[][];
  /** SQLite: the comparison run's steps (in-commit checkpoints), its warm-up first; empty otherwise. */
  comparison: PlannedStep[];
}

/** The warm-up, the one-at-a-time steps, the lanes and the comparison, each on filled operations of its own. */
export function plan(
  provider: RegisteredProvider,
  template: Template,
  ops: readonly FilledOperation[],
  scale: Scale,
  comparison: boolean,
): Plan {
  const order = shuffled(ops);
  const take = (steps: number): FilledOperation[] => order.splice(0, Math.ceil(steps / STEPS_PER_OPERATION));
  const warmUp = roundRobin(provider, template, take(scale.warmUpSteps), STEPS_PER_OPERATION);
  const sequential = roundRobin(provider, template, take(scale.timedSteps), STEPS_PER_OPERATION);
  const lanes = Array.from({ length: LANES }, () =>
    roundRobin(provider, template, take(scale.timedSteps / LANES), STEPS_PER_OPERATION),
  );
  const compared = comparison
    ? roundRobin(provider, template, take(scale.warmUpSteps + scale.timedSteps), STEPS_PER_OPERATION)
    : [];
  return { warmUp, sequential, lanes, comparison: compared };
}

/** What the timed steps write: entries per step (mean), their kinds, their and the snapshot's canonical size. */
export function describeSteps(steps: readonly PlannedStep[]): StoreEngineResult['step'] {
  const entries = steps.flatMap((s) => s.entries.map((e) => toJournalEntry(s.operationId, e)));
  const snapshots = steps.map((s) => canonicalJson(snapshotOf(s.record, s.nowMs)).length);
  return {
    entries: round(entries.length / steps.length, 2),
    kinds: [...new Set(entries.map((e) => e.body.kind))],
    entryBytes: Math.round(entries.reduce((sum, e) => sum + canonicalJson(e).length, 0) / entries.length),
    snapshotBytes: Math.round(snapshots.reduce((a, b) => a + b, 0) / snapshots.length),
    hmacKeyed: true,
  };
}
