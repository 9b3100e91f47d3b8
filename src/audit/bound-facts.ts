/**
 * The record's bounds replayed from the journal (T5): the create, result and cancel deadlines and the budgets, as
 * the intent set them and every later entry moved them, in journal order. A decision's entry states what it changed
 * (`effects`), so the bounds after any sequence of legitimate decisions are what the journal says, and a bound
 * edited by hand in a snapshot is still a finding. Pure.
 */
import { type JournalEntry } from '../core/journal';
import { type OperationRecord } from '../core/operation';

/** A bound the journal establishes: the record's field, its value, and the sequence of the entry that set it. */
export interface ReplayedBound {
  readonly field: string;
  readonly expected: number | undefined;
  readonly sequence: number;
}

type Field =
  | 'deadlines.createDeadlineMs'
  | 'deadlines.resultDeadlineMs'
  | 'deadlines.cancelDeadlineMs'
  | 'budgets.maxStatusRequests'
  | 'budgets.maxTransportFailures'
  | 'budgets.maxRateLimited';

/** What a decision option may change, for a decision entry written before entries stated their `effects`. */
const MAY_CHANGE: Readonly<Record<string, readonly Field[]>> = {
  extend: [
    'deadlines.resultDeadlineMs',
    'deadlines.cancelDeadlineMs',
    'budgets.maxStatusRequests',
    'budgets.maxTransportFailures',
    'budgets.maxRateLimited',
  ],
  retry_create_same_token: ['deadlines.createDeadlineMs'],
  cancel_at_provider: ['deadlines.cancelDeadlineMs'],
};

/** Each field's value as the journal has it so far; `null`: not established by the journal (an older entry). */
type Replay = Map<Field, { value: number | undefined; sequence: number } | null>;

function replayIntent(replay: Replay, entry: JournalEntry, record: OperationRecord): void {
  if (entry.body.kind !== 'intent') return;
  const intent = entry.body;
  const set = (field: Field, value: number | undefined): void => {
    replay.set(field, { value, sequence: entry.sequence });
  };
  set('deadlines.createDeadlineMs', Date.parse(intent.createDeadlineAt));
  set('deadlines.resultDeadlineMs', Date.parse(intent.resultDeadlineAt));
  set('deadlines.cancelDeadlineMs', undefined);
  // An intent written before it stated the budgets: they start as the policy's (B1), which the record keeps.
  const budgets = intent.budgets ?? {
    maxStatusRequests: record.policy.maxStatusRequests,
    maxTransportFailures: record.policy.maxTransportFailures,
    maxRateLimited: record.policy.maxRateLimited,
  };
  set('budgets.maxStatusRequests', budgets.maxStatusRequests);
  set('budgets.maxTransportFailures', budgets.maxTransportFailures);
  set('budgets.maxRateLimited', budgets.maxRateLimited);
}

function replayDecision(replay: Replay, entry: JournalEntry): void {
  if (entry.body.kind !== 'decision' || !entry.body.accepted) return;
  const { effects } = entry.body;
  if (effects === undefined) {
    // Written before decisions stated their effects: what this option may change is no longer known exactly.
    for (const field of MAY_CHANGE[entry.body.decision] ?? []) replay.set(field, null);
    return;
  }
  const at = (instant: string | undefined): number | undefined =>
    instant === undefined ? undefined : Date.parse(instant);
  const changed: Array<[Field, number | undefined]> = [
    ['deadlines.createDeadlineMs', at(effects.createDeadlineAt)],
    ['deadlines.resultDeadlineMs', at(effects.resultDeadlineAt)],
    ['deadlines.cancelDeadlineMs', at(effects.cancelDeadlineAt)],
    ['budgets.maxStatusRequests', effects.maxStatusRequests],
    ['budgets.maxTransportFailures', effects.maxTransportFailures],
    ['budgets.maxRateLimited', effects.maxRateLimited],
  ];
  for (const [field, value] of changed) if (value !== undefined) replay.set(field, { value, sequence: entry.sequence });
}

/**
 * The bounds `entries` (in journal order, from the intent) establish for `record`, the snapshot's record: the
 * intent's deadlines and budgets, each decision's `effects`, and a cancel request's deadline (its transition's
 * time plus the policy's cancel window, X3). A bound an older decision entry changed without saying how is left
 * out. Nothing without an intent entry.
 */
export function replayBounds(entries: readonly JournalEntry[], record: OperationRecord): ReplayedBound[] {
  if (entries[0]?.body.kind !== 'intent') return [];
  const replay: Replay = new Map();
  for (const entry of entries) {
    replayIntent(replay, entry, record);
    replayDecision(replay, entry);
    if (entry.body.kind === 'transition' && entry.body.to === 'cancel_requested')
      replay.set('deadlines.cancelDeadlineMs', {
        value: Date.parse(entry.at) + record.policy.cancelDeadlineMs,
        sequence: entry.sequence,
      });
  }
  const out: ReplayedBound[] = [];
  for (const [field, known] of replay)
    if (known !== null) out.push({ field: `record.${field}`, expected: known.value, sequence: known.sequence });
  return out;
}

function boundIn(record: OperationRecord, field: string): number | undefined {
  const [group, name] = field.replace(/^record\./, '').split('.') as ['deadlines' | 'budgets', string];
  return (record[group] as Record<string, number | undefined>)[name];
}

/**
 * [field, what the journal says, what the snapshot says, the entry that says it] for each replayed bound of the
 * snapshot's `record`, and for the snapshot's own `resultDeadlineAt` (the copy its row's column is checked against).
 */
export function boundFacts(
  entries: readonly JournalEntry[],
  record: OperationRecord,
  snapshotResultDeadlineAt: string | null,
): Array<[string, unknown, unknown, number]> {
  const out: Array<[string, unknown, unknown, number]> = [];
  for (const bound of replayBounds(entries, record)) {
    out.push([bound.field, bound.expected, boundIn(record, bound.field), bound.sequence]);
    if (bound.field === 'record.deadlines.resultDeadlineMs' && snapshotResultDeadlineAt !== null)
      out.push([
        'resultDeadlineAt',
        bound.expected === undefined ? undefined : new Date(bound.expected).toISOString(),
        snapshotResultDeadlineAt,
        bound.sequence,
      ]);
  }
  return out;
}
