/**
 * The two writes of the operation store, each run inside the caller's write transaction, once for both engines:
 * one journal append (with its chain head, job link and artifact row) and one snapshot upsert.
 */
import { type ChainKey, snapshotHash } from './chain';
import {
  decideAppend,
  type AppendResult,
  type OperationSnapshot,
  type PreparedEntry,
  type PutOperationResult,
} from './operation-store';
import { type SqlDialect } from './sql-dialect';
import { type SqlSession } from './sql-driver';

interface HeadRow {
  last_sequence: number | string;
  last_hash: string | null;
  provider: string | null;
}

const LINK_JOB =
  'INSERT INTO operation_jobs (provider, remote_job_id, operation_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING';

/**
 * Appends one prepared entry to its operation's chain, or finds it already there (`duplicate`). Throws
 * `ASYNCJOB_ERR_JOURNAL_CONFLICT` / `ASYNCJOB_ERR_JOURNAL_GAP` (the caller's transaction then rolls back).
 */
export async function appendEntry(
  session: SqlSession,
  dialect: SqlDialect,
  prepared: PreparedEntry,
  hmacKey: ChainKey | undefined,
): Promise<AppendResult> {
  const { entry, columns } = prepared;
  const lockHead = `SELECT last_sequence, last_hash, provider FROM operations WHERE operation_id = ?${dialect.lockRow}`;
  let head = (await session.query<HeadRow>(lockHead, [entry.operationId])).rows[0];
  if (head === undefined) {
    // The head row must exist before it can be locked: the first two appenders of an operation then queue on
    // the insert, and every later pair on the row lock (PostgreSQL). SQLite's write lock is already held. Only
    // for an operation's first entry: every later append finds the row, one statement (one round trip) fewer.
    await session.query('INSERT INTO operations (operation_id) VALUES (?) ON CONFLICT (operation_id) DO NOTHING', [
      entry.operationId,
    ]);
    head = (await session.query<HeadRow>(lockHead, [entry.operationId])).rows[0]!;
  }
  const lastSequence = Number(head.last_sequence);
  const existing =
    entry.sequence <= lastSequence
      ? ((
          await session.query<{ entry: string; hash: string }>(
            'SELECT entry, hash FROM journal WHERE operation_id = ? AND sequence = ?',
            [entry.operationId, entry.sequence],
          )
        ).rows[0] ?? null)
      : null;
  const decision = decideAppend(prepared, { lastSequence, lastHash: head.last_hash }, existing, hmacKey);
  if (decision.kind === 'duplicate') return { kind: 'duplicate', hash: decision.hash };
  const provider = head.provider ?? columns.provider;
  await session.query(
    'UPDATE operations SET last_sequence = ?, last_hash = ?, provider = coalesce(provider, ?) WHERE operation_id = ?',
    [entry.sequence, decision.hash, provider, entry.operationId],
  );
  await session.query(
    `INSERT INTO journal (operation_id, sequence, at, actor, kind, entry, prev_hash, hash, to_state, remote_job_id, http_status, delay_source, escalation_reason, key_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      entry.operationId,
      entry.sequence,
      entry.at,
      entry.actor,
      columns.kind,
      prepared.canonical,
      decision.prevHash,
      decision.hash,
      columns.toState,
      columns.remoteJobId,
      columns.httpStatus,
      columns.delaySource,
      columns.escalationReason,
      hmacKey?.id ?? null,
    ],
  );
  if (columns.remoteJobId !== null && provider !== null) {
    await session.query(LINK_JOB, [provider, columns.remoteJobId, entry.operationId]);
  }
  if (entry.body.kind === 'artifact') {
    const artifact = entry.body;
    await session.query(
      `INSERT INTO artifacts (operation_id, sequence, at, location, sha256, size_bytes, content_type, validation)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        entry.operationId,
        entry.sequence,
        entry.at,
        artifact.location,
        artifact.sha256,
        artifact.sizeBytes,
        artifact.contentType ?? null,
        artifact.validation,
      ],
    );
  }
  return { kind: 'appended', hash: decision.hash };
}

/**
 * Upserts an operation's snapshot unless the stored version is the same or newer (`unchanged` / `stale`), and
 * links its provider jobs. `canonical` is the snapshot's canonical JSON, stored and hashed as is.
 */
export async function writeSnapshot(
  session: SqlSession,
  snapshot: OperationSnapshot,
  canonical: string,
  hmacKey: ChainKey | undefined,
): Promise<PutOperationResult> {
  const written = await session.query(
    `INSERT INTO operations (operation_id, provider, local_state, remote_job_ids, escalation_reason, result_deadline_at_ms, updated_at, version, snapshot,
         snapshot_hash, snapshot_key_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (operation_id) DO UPDATE SET provider = excluded.provider, local_state = excluded.local_state,
         remote_job_ids = excluded.remote_job_ids, escalation_reason = excluded.escalation_reason,
         result_deadline_at_ms = excluded.result_deadline_at_ms, updated_at = excluded.updated_at,
         version = excluded.version, snapshot = excluded.snapshot, snapshot_hash = excluded.snapshot_hash, snapshot_key_id = excluded.snapshot_key_id
       WHERE operations.version < excluded.version`,
    [
      snapshot.operationId,
      snapshot.provider,
      snapshot.localState,
      JSON.stringify(snapshot.remoteJobIds),
      snapshot.escalationReason,
      snapshot.resultDeadlineAt === null ? null : Date.parse(snapshot.resultDeadlineAt),
      snapshot.updatedAt,
      snapshot.version,
      canonical,
      snapshotHash(canonical, hmacKey),
      hmacKey?.id ?? null,
    ],
  );
  if (written.changes === 0) {
    const stored = (
      await session.query<{ version: number | string; snapshot: string | null }>(
        'SELECT version, snapshot FROM operations WHERE operation_id = ?',
        [snapshot.operationId],
      )
    ).rows[0]!;
    const storedVersion = Number(stored.version);
    return storedVersion === snapshot.version && stored.snapshot === canonical
      ? { kind: 'unchanged', version: storedVersion }
      : { kind: 'stale', storedVersion };
  }
  for (const jobId of snapshot.remoteJobIds) {
    await session.query(LINK_JOB, [snapshot.provider, jobId, snapshot.operationId]);
  }
  return { kind: 'written', version: snapshot.version };
}
