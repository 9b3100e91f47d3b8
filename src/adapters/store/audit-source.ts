/**
 * What `asyncjob audit` reads from a store, engine-independently: every column of an operation's rows (journal,
 * operations, artifacts, job links) from one consistent read, the journal's own heads (not the operations
 * table's copy) and the checkpoint register. Implemented once for both engines by `SqlAuditSource`
 * (`sql-audit.ts`); the checks themselves live in `src/audit`.
 */
import {
  verifyOperationRows,
  type ChainBreak,
  type ChainKey,
  type ChainVerification,
  type StoredChainRow,
  type UnverifiableEntry,
} from './chain';
import { parseStoredEntry, type ExtractedColumns, type StoredArtifact } from './operation-store';
import { type SqlDialect } from './sql-dialect';

/** The query columns a journal row carries beside its entry text (copies derived from the entry). */
interface JournalColumns extends Omit<ExtractedColumns, 'provider'> {
  readonly at: string;
  readonly actor: string;
}

/** One journal row with everything it stores. */
export interface AuditJournalRow extends StoredChainRow {
  readonly keyId: string | null;
  readonly columns: JournalColumns;
}

/** The operations row as stored (null fields where nothing was written). */
export interface AuditOperationRow {
  readonly provider: string | null;
  readonly localState: string | null;
  /** null when the stored list no longer parses as a list of strings. */
  readonly remoteJobIds: readonly string[] | null;
  readonly escalationReason: string | null;
  readonly resultDeadlineAtMs: number | null;
  readonly updatedAt: string | null;
  readonly version: number;
  readonly snapshot: string | null;
  readonly snapshotHash: string | null;
  readonly snapshotKeyId: string | null;
  readonly lastSequence: number;
  readonly lastHash: string | null;
}

/** A (provider, job) link of the webhook lookup table. */
export interface AuditJobLink {
  readonly provider: string;
  readonly remoteJobId: string;
}

/** Everything stored about one operation, read in one transaction. */
export interface OperationAuditData {
  readonly operationId: string;
  readonly row: AuditOperationRow | null;
  readonly journal: readonly AuditJournalRow[];
  readonly artifacts: readonly StoredArtifact[];
  readonly jobLinks: readonly AuditJobLink[];
}

/** The last journal row of an operation, as the journal itself holds it. */
export interface JournalHead {
  readonly operationId: string;
  readonly sequence: number;
  readonly hash: string;
}

/** A checkpoint as the store's register keeps it (the exported document, verbatim). */
export interface StoredCheckpoint {
  readonly sequence: number;
  readonly takenAt: string;
  readonly digest: string;
  readonly document: string;
}

/** Read access for the auditor, plus the one write it makes (recording a checkpoint it issued). */
export interface AuditSource {
  /** Every operation ID any table names, sorted. */
  operationIds(): Promise<string[]>;
  /** Everything stored about one operation, from one consistent read. */
  readOperation(operationId: string): Promise<OperationAuditData>;
  /** The last journal row of every operation, from one consistent read, sorted by operation ID. */
  journalHeads(): Promise<JournalHead[]>;
  /** The checkpoint register, in sequence order. */
  checkpoints(): Promise<StoredCheckpoint[]>;
  /** Records an issued checkpoint; `taken` when its sequence number is already recorded (a concurrent checkpoint). */
  recordCheckpoint(checkpoint: StoredCheckpoint): Promise<'recorded' | 'taken'>;
  /** Every append-only trigger the migrations installed, and whether it is still there and still refusing. */
  appendOnlyGuards(): Promise<GuardState[]>;
}

/** The tables whose rows are never updated or deleted: the migrations install triggers refusing both. */
export const APPEND_ONLY_TABLES = ['journal', 'artifacts', 'audit_checkpoints'] as const;

/** One append-only trigger: `ok`, gone, disabled, or replaced by one that fires on something else or refuses nothing. */
export interface GuardState {
  readonly table: string;
  readonly trigger: string;
  /** The change it refuses: UPDATE, DELETE or TRUNCATE. */
  readonly change: string;
  readonly state: 'ok' | 'missing' | 'disabled' | 'not_refusing';
}

/** A trigger as `SqlDialect.triggersSql` lists it. */
export interface RawTriggerRow {
  name: string;
  table_name: string;
  definition: string;
  body: string;
  enabled: string;
}

const normalise = (text: string): string => text.replace(/\s+/g, ' ').toUpperCase();

/**
 * Holds the triggers found against the ones the dialect's migrations create: each must exist on its table, be
 * enabled, fire BEFORE its change with no WHEN condition, and raise (SQLite `RAISE(ABORT`, PostgreSQL
 * `RAISE EXCEPTION` in its function). Pure.
 */
export function guardStates(dialect: SqlDialect, found: readonly RawTriggerRow[]): GuardState[] {
  const byName = new Map(found.map((row) => [row.name, row]));
  return APPEND_ONLY_TABLES.flatMap((table) =>
    [...dialect.appendOnly(table).matchAll(/CREATE TRIGGER (\w+) BEFORE (\w+) ON (\w+)/g)].map(
      ([, trigger, change]) => {
        const row = byName.get(trigger!);
        const base = { table, trigger: trigger!, change: change! };
        if (row === undefined || row.table_name !== table) return { ...base, state: 'missing' as const };
        if (row.enabled === 'D') return { ...base, state: 'disabled' as const };
        const definition = normalise(row.definition);
        const refuses =
          definition.includes(`BEFORE ${change} ON`) &&
          !definition.includes(' WHEN ') &&
          /RAISE ?\( ?ABORT|RAISE EXCEPTION/.test(normalise(row.body));
        return { ...base, state: refuses ? ('ok' as const) : ('not_refusing' as const) };
      },
    ),
  );
}

/** A journal row as both engines select it (PostgreSQL returns BIGINT as text). */
export interface RawJournalRow {
  sequence: number | string;
  entry: string;
  prev_hash: string;
  hash: string;
  key_id: string | null;
  at: string;
  actor: string;
  kind: string;
  to_state: string | null;
  remote_job_id: string | null;
  http_status: number | string | null;
  delay_source: string | null;
  escalation_reason: string | null;
}

/** An operations row as both engines select it. */
export interface RawOperationRow {
  provider: string | null;
  local_state: string | null;
  remote_job_ids: unknown;
  escalation_reason: string | null;
  result_deadline_at_ms: number | string | null;
  updated_at: string | null;
  version: number | string;
  snapshot: string | null;
  snapshot_hash: string | null;
  snapshot_key_id: string | null;
  last_sequence: number | string;
  last_hash: string | null;
}

/** The journal columns both engines select for the auditor. */
export const AUDIT_JOURNAL_COLUMNS =
  'sequence, entry, prev_hash, hash, key_id, at, actor, kind, to_state, remote_job_id, http_status, delay_source, escalation_reason';
/** The operations columns both engines select for the auditor. */
export const AUDIT_OPERATION_COLUMNS =
  'provider, local_state, remote_job_ids, escalation_reason, result_deadline_at_ms, updated_at, version, snapshot, snapshot_hash, snapshot_key_id, last_sequence, last_hash';
/** The last journal row of every operation. */
export const JOURNAL_HEADS_SQL = `SELECT j.operation_id, j.sequence, j.hash FROM journal j
  JOIN (SELECT operation_id, max(sequence) AS s FROM journal GROUP BY operation_id) m ON m.operation_id = j.operation_id AND m.s = j.sequence
  ORDER BY j.operation_id`;
/** Every operation ID any table names. */
export const OPERATION_IDS_SQL = `SELECT operation_id FROM operations UNION SELECT operation_id FROM journal
  UNION SELECT operation_id FROM artifacts UNION SELECT operation_id FROM operation_jobs ORDER BY 1`;

const nullableNumber = (v: number | string | null): number | null => (v === null ? null : Number(v));

function jobIdList(value: unknown): readonly string[] | null {
  let list = value;
  if (typeof value === 'string') {
    try {
      list = JSON.parse(value);
    } catch {
      return null;
    }
  }
  return Array.isArray(list) && list.every((v) => typeof v === 'string') ? (list as string[]) : null;
}

/** Maps a raw journal row. */
export function toAuditJournalRow(r: RawJournalRow): AuditJournalRow {
  return {
    sequence: Number(r.sequence),
    entry: parseStoredEntry(r.entry),
    prevHash: r.prev_hash,
    hash: r.hash,
    keyId: r.key_id,
    columns: {
      at: r.at,
      actor: r.actor,
      kind: r.kind,
      toState: r.to_state,
      remoteJobId: r.remote_job_id,
      httpStatus: nullableNumber(r.http_status),
      delaySource: r.delay_source,
      escalationReason: r.escalation_reason,
    },
  };
}

/** Maps a raw operations row. */
export function toAuditOperationRow(r: RawOperationRow): AuditOperationRow {
  return {
    provider: r.provider,
    localState: r.local_state,
    remoteJobIds: jobIdList(r.remote_job_ids),
    escalationReason: r.escalation_reason,
    resultDeadlineAtMs: nullableNumber(r.result_deadline_at_ms),
    updatedAt: r.updated_at,
    version: Number(r.version),
    snapshot: r.snapshot,
    snapshotHash: r.snapshot_hash,
    snapshotKeyId: r.snapshot_key_id,
    lastSequence: Number(r.last_sequence),
    lastHash: r.last_hash,
  };
}

/**
 * `OperationStore.verifyChains` for both engines: the chain walk of every operation (or one), against the head
 * the operations table keeps. Checks of everything else (columns, snapshot, artifacts, checkpoints) are
 * `asyncjob audit verify`'s (`src/audit`).
 */
export async function verifyChainsOf(
  source: AuditSource,
  options: { operationId?: string },
  key: ChainKey | undefined,
): Promise<ChainVerification> {
  const ids = options.operationId !== undefined ? [options.operationId] : await source.operationIds();
  const breaks: ChainBreak[] = [];
  const unverifiable: UnverifiableEntry[] = [];
  let operationsChecked = 0;
  let entriesChecked = 0;
  for (const id of ids) {
    const data = await source.readOperation(id);
    if (data.row === null && data.journal.length === 0) continue;
    const head = data.row === null ? null : { lastSequence: data.row.lastSequence, lastHash: data.row.lastHash };
    const result = verifyOperationRows(id, data.journal, head, key);
    operationsChecked += 1;
    entriesChecked += result.entriesChecked;
    if (result.break) breaks.push(result.break);
    if (result.unverifiable) unverifiable.push(result.unverifiable);
  }
  return { operationsChecked, entriesChecked, breaks, ...(unverifiable.length > 0 ? { unverifiable } : {}) };
}
