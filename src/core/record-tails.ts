/**
 * The record's journal tails (the last transitions and observations) on the way into and out of activities.
 *
 * The tails are for people (the `history` query, the Web UI); the store's journal holds every entry. Carrying them
 * into every activity and back made each status read cost ~12 KB of workflow history, most of it entries the
 * store already had. So an activity receives the record without tails ({@link withoutTails}), returns it with only
 * the entries from the sequence it started at ({@link tailsFrom}), and the workflow folds that into the tails it
 * holds ({@link adoptReturned}). The stored snapshot keeps no tails either. Pure.
 */
import {
  OBSERVATION_TAIL,
  TRANSITION_TAIL,
  lastOf,
  recordedObservationSchema,
  recordedTransitionSchema,
  type OperationRecord,
  type RecordedObservation,
  type RecordedTransition,
} from './operation';

type TailEntry = RecordedTransition | RecordedObservation;

/** The record without its journal tails (what activities receive and the snapshot stores). */
export function withoutTails(record: OperationRecord): OperationRecord {
  if (record.journal.transitions.length === 0 && record.journal.observations.length === 0) return record;
  return { ...record, journal: { nextSequence: record.journal.nextSequence, transitions: [], observations: [] } };
}

/** The record with only the tail entries at or after `fromSequence` (what an activity returns: its step's entries). */
export function tailsFrom(record: OperationRecord, fromSequence: number): OperationRecord {
  const keep = (e: TailEntry): boolean => e.sequence >= fromSequence;
  return {
    ...record,
    journal: {
      ...record.journal,
      transitions: record.journal.transitions.filter(keep),
      observations: record.journal.observations.filter(keep),
    },
  };
}

/**
 * Folds a record returned by an activity into the held one: the returned record wins, its tail entries replace
 * the held ones from their first sequence on (an adopted stored record may differ from what the workflow made),
 * and the tails stay bounded. A returned record carrying whole tails (written by an older worker) folds the same way.
 */
export function adoptReturned(held: OperationRecord, returned: OperationRecord): OperationRecord {
  const returnedEntries: TailEntry[] = [...returned.journal.transitions, ...returned.journal.observations];
  const from = Math.min(returned.journal.nextSequence, ...returnedEntries.map((e) => e.sequence));
  const merge = <T extends TailEntry>(own: readonly T[], theirs: readonly T[], max: number): T[] => {
    return lastOf(
      [...own.filter((e) => e.sequence < from), ...theirs].sort((a, b) => a.sequence - b.sequence),
      max,
    );
  };
  return {
    ...returned,
    journal: {
      nextSequence: returned.journal.nextSequence,
      transitions: merge(held.journal.transitions, returned.journal.transitions, TRANSITION_TAIL),
      observations: merge(held.journal.observations, returned.journal.observations, OBSERVATION_TAIL),
    },
  };
}

/** A journal entry as the store returns it (ISO time). */
export interface StoredTailSource {
  sequence: number;
  at: string;
  actor: string;
  body: unknown;
}

/**
 * The record with tails rebuilt from journal entries the store holds (sequence order), for a record read back from
 * the store. Entries of other kinds (intent, messages, escalations) are not kept in tails and are skipped.
 */
export function withTailsFromEntries(record: OperationRecord, entries: readonly StoredTailSource[]): OperationRecord {
  const transitions: RecordedTransition[] = [];
  const observations: RecordedObservation[] = [];
  for (const e of entries) {
    const candidate = { sequence: e.sequence, atMs: Date.parse(e.at), actor: e.actor, body: e.body };
    const transition = recordedTransitionSchema.safeParse(candidate);
    if (transition.success) {
      transitions.push(transition.data);
      continue;
    }
    const observation = recordedObservationSchema.safeParse(candidate);
    if (observation.success) observations.push(observation.data);
  }
  return {
    ...record,
    journal: {
      nextSequence: record.journal.nextSequence,
      transitions: lastOf(transitions, TRANSITION_TAIL),
      observations: lastOf(observations, OBSERVATION_TAIL),
    },
  };
}
