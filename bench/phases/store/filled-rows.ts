/**
 * The fill's rows exactly as `appendEntry` and `writeSnapshot` write them: the template operation under each
 * filled operation's IDs and times, with its real HMAC chain, its snapshot and its job link.
 */
import { createHmac } from 'node:crypto';
import { snapshotOf } from '../../../src/activities/journal-writer';
import { GENESIS_HASH, snapshotHash, type ChainKey } from '../../../src/adapters/store/chain';
import { columnsOf, prepareSnapshot, type ExtractedColumns } from '../../../src/adapters/store/operation-store';
import { canonicalJson } from '../../../src/core/canonical-json';
import type { OperationRecord } from '../../../src/core/operation';
import { PROVIDER, TEMPLATE_JOB, TEMPLATE_OPERATION, type FilledOperation, type Template } from './template';

type Cell = string | number | null;

/** One filled operation's rows, in the column order of the INSERTs below. */
export interface FilledRows {
  operation: Cell[];
  journal: Cell[][];
  job: Cell[];
}

export const OPERATION_COLUMNS =
  'operation_id, provider, local_state, remote_job_ids, escalation_reason, result_deadline_at_ms, updated_at, version, snapshot, snapshot_hash, snapshot_key_id, last_sequence, last_hash';
export const JOURNAL_COLUMNS =
  'operation_id, sequence, at, actor, kind, entry, prev_hash, hash, to_state, remote_job_id, http_status, delay_source, escalation_reason, key_id';
export const JOB_COLUMNS = 'provider, remote_job_id, operation_id';

/**
 * Filling 1,000,000 rows through `canonicalJson` and `entryHash` would take minutes, so each canonical text is
 * computed once for the template with marks where a filled operation's values go (its operation ID, job ID,
 * entry time, previous hash), and filled by splicing: exact because those values are plain ASCII, which canonical
 * JSON writes as is. `checkFill` holds the spliced rows to the store's own functions on every run.
 */
const AT_MARK = '@@at@@';
const PREV_MARK = '@@prevHash@@';
const MARKS = new RegExp(`(${[TEMPLATE_OPERATION, TEMPLATE_JOB, AT_MARK, PREV_MARK].join('|')})`);

/** A text split at its marks: the marks at odd indexes. */
type Marked = string[];

function fillMarks(text: Marked, values: Record<string, string>): string {
  let out = '';
  for (let i = 0; i < text.length; i++) out += i % 2 === 1 ? values[text[i]!]! : text[i]!;
  return out;
}

/** A template entry's texts with their marks, and its query columns. */
interface MarkedEntry {
  sequence: number;
  atMs: number;
  actor: string;
  entry: Marked;
  /** The text `entryHash` signs. */
  hashed: Marked;
  columns: ExtractedColumns;
}

/** The template's rows with marks, computed once. */
export interface MarkedTemplate {
  entries: MarkedEntry[];
  snapshot: Marked;
  remoteJobIds: Marked;
  snapshotFields: { provider: string; localState: string; resultDeadlineAtMs: number | null; version: number };
}

export function marked(template: Template): MarkedTemplate {
  const entries = template.entries.map((t, i): MarkedEntry => {
    const open = { ...t, at: AT_MARK };
    const { operationId, sequence, at, actor, body } = open;
    return {
      sequence,
      atMs: template.atMs[i]!,
      actor,
      entry: canonicalJson(open).split(MARKS),
      // As `entryHash` builds it (src/adapters/store/chain.ts).
      hashed: canonicalJson({ operationId, sequence, at, actor, body, prevHash: PREV_MARK }).split(MARKS),
      columns: columnsOf(t),
    };
  });
  const record = JSON.parse(template.recordJson) as OperationRecord;
  const snapshot = prepareSnapshot(snapshotOf(record, template.lastAtMs)).snapshot;
  return {
    entries,
    snapshot: canonicalJson({ ...snapshot, updatedAt: AT_MARK }).split(MARKS),
    remoteJobIds: JSON.stringify(snapshot.remoteJobIds).split(MARKS),
    snapshotFields: {
      provider: snapshot.provider,
      localState: snapshot.localState,
      resultDeadlineAtMs: snapshot.resultDeadlineAt === null ? null : Date.parse(snapshot.resultDeadlineAt),
      version: snapshot.version,
    },
  };
}

/** An HMAC chain hash as `entryHash` writes it with a key (`checkFill` holds it to that). */
function hmacOf(text: string, key: ChainKey): string {
  return `hmac-sha256:${createHmac('sha256', key.secret).update(text, 'utf8').digest('hex')}`;
}

/** The template's entries under `op`'s IDs and times, hash-chained with `key`; its snapshot; its job link. */
export function filledRows(template: MarkedTemplate, op: FilledOperation, key: ChainKey): FilledRows {
  const values: Record<string, string> = {
    [TEMPLATE_OPERATION]: op.id,
    [TEMPLATE_JOB]: op.jobId,
    [AT_MARK]: '',
    [PREV_MARK]: GENESIS_HASH,
  };
  const journal = template.entries.map((t): Cell[] => {
    const prevHash = values[PREV_MARK]!;
    const at = new Date(t.atMs + op.offsetMs).toISOString();
    values[AT_MARK] = at;
    const hash = hmacOf(fillMarks(t.hashed, values), key);
    values[PREV_MARK] = hash;
    const c = t.columns;
    const remoteJobId = c.remoteJobId === TEMPLATE_JOB ? op.jobId : c.remoteJobId;
    return [
      op.id,
      t.sequence,
      at,
      t.actor,
      c.kind,
      fillMarks(t.entry, values),
      prevHash,
      hash,
      c.toState,
      remoteJobId,
      c.httpStatus,
      c.delaySource,
      c.escalationReason,
      key.id,
    ];
  });
  const lastHash = values[PREV_MARK]!;
  values[AT_MARK] = new Date(template.entries[template.entries.length - 1]!.atMs + op.offsetMs).toISOString();
  const snapshot = fillMarks(template.snapshot, values);
  const f = template.snapshotFields;
  const operation: Cell[] = [
    op.id,
    f.provider,
    f.localState,
    fillMarks(template.remoteJobIds, values),
    null,
    f.resultDeadlineAtMs,
    values[AT_MARK],
    f.version,
    snapshot,
    snapshotHash(snapshot, key),
    key.id,
    template.entries.length,
    lastHash,
  ];
  return { operation, journal, job: [PROVIDER, op.jobId, op.id] };
}
