/**
 * What a step hands back across the activity boundary (`{state, entries}`), and how the workflow folds it in.
 *
 * The record's journal tails (the last transitions and observations) are for people: the `history` query and the
 * Web UI. The store's journal holds every entry. So an activity receives the operation state without tails
 * ({@link withoutTails}) and returns the state after its step with the entries that step appended
 * ({@link StepOutcome}); the workflow folds those entries into the tails it holds ({@link foldOutcome}). Each step
 * carries only its own entries through workflow history, and the stored snapshot keeps no tails either. Pure.
 */
import {
  OBSERVATION_TAIL,
  TRANSITION_TAIL,
  lastOf,
  type OperationRecord,
  type RecordedObservation,
  type RecordedTransition,
} from './operation';
import { type StepEntry } from './step-draft';

/** What every writing activity returns: the operation state after its step, and the entries the step appended. */
export interface StepOutcome {
  /** The operation state as the store now holds it, without journal tails. */
  state: OperationRecord;
  /**
   * The step's journal entries the tails keep (transitions and observations, sequence order): what the workflow
   * folds in, and what Temporal's history witnesses (`audit verify --with-temporal`).
   */
  entries: StepEntry[];
}

/** The record without its journal tails (what activities receive and the snapshot stores). */
export function withoutTails(record: OperationRecord): OperationRecord {
  if (record.journal.transitions.length === 0 && record.journal.observations.length === 0) return record;
  return { ...record, journal: { nextSequence: record.journal.nextSequence, transitions: [], observations: [] } };
}

/** The outcome of a step computed here: its state without tails, and its entries the tails keep. */
export function outcomeOf(step: { record: OperationRecord; entries: readonly StepEntry[] }): StepOutcome {
  return { state: withoutTails(step.record), entries: tailEntries(step.entries) };
}

/**
 * The entries tails keep (transitions and observations), bounded as tails are, from a list in sequence order:
 * what an activity returns when it reads a step back from the store rather than making it.
 */
export function tailEntries(entries: readonly StepEntry[]): StepEntry[] {
  const transitions = entries.filter((entry) => entry.body.kind === 'transition');
  const observations = entries.filter((entry) => entry.body.kind === 'observation');
  return [...lastOf(transitions, TRANSITION_TAIL), ...lastOf(observations, OBSERVATION_TAIL)].sort(
    (a, b) => a.sequence - b.sequence,
  );
}

/**
 * Folds an outcome into the held record: the outcome's state wins, its entries replace the held tail entries from
 * their first sequence on (an adopted stored state may differ from what the workflow made), and the tails stay
 * bounded. Entries of kinds the tails do not keep (intent, escalation, decision, artifact) are skipped.
 */
export function foldOutcome(held: OperationRecord, outcome: StepOutcome): OperationRecord {
  const { state, entries } = outcome;
  const from = Math.min(state.journal.nextSequence, ...entries.map((entry) => entry.sequence));
  const transitions = entries.filter((entry): entry is RecordedTransition => entry.body.kind === 'transition');
  const observations = entries.filter((entry): entry is RecordedObservation => entry.body.kind === 'observation');
  const merge = <Entry extends { sequence: number }>(own: readonly Entry[], theirs: Entry[], max: number) =>
    lastOf(
      [...own.filter((entry) => entry.sequence < from), ...theirs].sort((a, b) => a.sequence - b.sequence),
      max,
    );
  return {
    ...state,
    journal: {
      nextSequence: state.journal.nextSequence,
      transitions: merge(held.journal.transitions, transitions, TRANSITION_TAIL),
      observations: merge(held.journal.observations, observations, OBSERVATION_TAIL),
    },
  };
}

/**
 * A record's own tail entries as an outcome: what the first write of a new operation carries (the record is made
 * in the workflow with its first transition in its tails).
 */
export function outcomeOfRecord(record: OperationRecord): StepOutcome {
  return outcomeOf({ record, entries: [...record.journal.transitions, ...record.journal.observations] });
}
