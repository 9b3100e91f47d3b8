/**
 * Writes a step's outcome to the store: its entries (StepEntry -> core `JournalEntry`, keyed by operation and
 * sequence, so appending them again is a no-op) and then the snapshot, whose `version` is the last sequence the
 * record accounts for. Also reads back what a previous attempt recorded, so a retried activity returns the
 * recorded outcome instead of calling the provider again.
 */
import { recordMetrics } from './metrics';
import { type OperationSnapshot, type OperationStore } from '../adapters/store/operation-store';
import { type JournalEntry } from '../core/journal';
import { operationRecordSchema, type OperationRecord } from '../core/operation';
import { outcomeOf, tailEntries, withoutTails, type StepOutcome } from '../core/step-outcome';
import { type StepEntry } from '../core/step';
import { AsyncJobError } from '../core/errors';
import { issueText } from '../core/issues';

/** A step entry as the store keeps it: with its operation ID and its ISO time. Pure. */
export function toJournalEntry(operationId: string, entry: StepEntry): JournalEntry {
  return {
    operationId,
    sequence: entry.sequence,
    at: new Date(entry.atMs).toISOString(),
    actor: entry.actor,
    body: entry.body,
  };
}

/**
 * The snapshot of a record as `putOperation` takes it; `version` = `journal.nextSequence - 1`. Without journal
 * tails: the journal beside it holds every entry (see `core/step-outcome.ts`). Pure.
 */
export function snapshotOf(record: OperationRecord, nowMs: number): OperationSnapshot {
  return {
    operationId: record.operationId,
    provider: record.provider,
    localState: record.localState,
    remoteJobIds: [...record.remote.jobIds],
    escalationReason: record.escalation?.reason ?? null,
    resultDeadlineAt: new Date(record.deadlines.resultDeadlineMs).toISOString(),
    updatedAt: new Date(nowMs).toISOString(),
    version: record.journal.nextSequence - 1,
    record: withoutTails(record) as unknown as Record<string, unknown>,
  };
}

/** Parses a stored snapshot's record; a record that no longer parses is reported with the field. */
function recordOf(snapshot: OperationSnapshot): OperationRecord {
  const parsed = operationRecordSchema.safeParse(snapshot.record);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AsyncJobError(
      'ASYNCJOB_ERR_INVALID_INPUT',
      `the stored record of ${snapshot.operationId} does not parse: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}`,
    );
  }
  return parsed.data;
}

/** Validates a record given to an activity; throws non-retryable `ASYNCJOB_ERR_INVALID_INPUT` naming the field. */
export function parseInputRecord(value: unknown): OperationRecord {
  const parsed = operationRecordSchema.safeParse(value);
  if (!parsed.success) {
    const named = parsed.error.issues.slice(0, 5).map((i) => ({ ...i, path: ['record', ...i.path] }));
    throw new AsyncJobError('ASYNCJOB_ERR_INVALID_INPUT', issueText(named));
  }
  return parsed.data;
}

/** A stored journal entry as a step entry (epoch-ms time). Pure. */
function toStepEntry(entry: JournalEntry): StepEntry {
  return { sequence: entry.sequence, atMs: Date.parse(entry.at), actor: entry.actor, body: entry.body };
}

/**
 * The state the store holds with the tail entries from `fromSequence` on (what the caller has not seen), or a
 * non-retryable `ASYNCJOB_ERR_SNAPSHOT_MISSING` when it has none.
 */
export async function storedOutcome(
  store: OperationStore,
  operationId: string,
  fromSequence: number,
): Promise<StepOutcome> {
  const snapshot = await store.getOperation(operationId);
  if (snapshot === null)
    throw new AsyncJobError(
      'ASYNCJOB_ERR_SNAPSHOT_MISSING',
      `operation ${operationId} has journal entries but no stored snapshot`,
    );
  return outcomeFromStore(store, recordOf(snapshot), fromSequence);
}

async function outcomeFromStore(
  store: OperationStore,
  state: OperationRecord,
  fromSequence: number,
): Promise<StepOutcome> {
  const stored = await store.entries(state.operationId, { fromSequence });
  return { state: withoutTails(state), entries: tailEntries(stored.map((row) => toStepEntry(row.entry))) };
}

/**
 * The idempotency check every writing activity makes before any outside call: when the store's chain already
 * reaches `state.journal.nextSequence`, a previous attempt recorded this step; its outcome is returned.
 */
export async function alreadyRecorded(store: OperationStore, state: OperationRecord): Promise<StepOutcome | undefined> {
  const head = await store.chainHead(state.operationId);
  if (head.lastSequence < state.journal.nextSequence) return undefined;
  const snapshot = await store.getOperation(state.operationId);
  if (snapshot === null || snapshot.version < state.journal.nextSequence) {
    throw new AsyncJobError(
      'ASYNCJOB_ERR_SNAPSHOT_MISSING',
      `operation ${state.operationId}: the journal reaches sequence ${head.lastSequence} but the stored snapshot is at ${snapshot?.version ?? 'none'}; run audit verify`,
    );
  }
  return outcomeFromStore(store, recordOf(snapshot), state.journal.nextSequence);
}

/**
 * Appends a step's entries (all or none) and puts the new snapshot. Returns the step's outcome: `record` and
 * `entries`, or the newer stored state and its entries when the snapshot write was stale.
 */
export async function commitStep(
  store: OperationStore,
  record: OperationRecord,
  entries: readonly StepEntry[],
  nowMs: number,
): Promise<StepOutcome> {
  // One transaction: a worker killed here never leaves the journal ahead of the snapshot that accounts for it.
  const journal = entries.map((e) => toJournalEntry(record.operationId, e));
  const { snapshot: put } = await store.appendWithSnapshot(journal, snapshotOf(record, nowMs));
  recordMetrics(record.provider, entries);
  if (put.kind === 'stale')
    return storedOutcome(store, record.operationId, entries[0]?.sequence ?? record.journal.nextSequence);
  return outcomeOf({ record, entries });
}
