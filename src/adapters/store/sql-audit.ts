/**
 * The {@link AuditSource} of the SQL store, for both engines: what one operation stores is read in one
 * `snapshot` transaction (one WAL snapshot in SQLite; REPEATABLE READ, READ ONLY in PostgreSQL), so an append by
 * another process during the read cannot look like a deleted tail. Every other read is a single statement.
 */
import {
  AUDIT_JOURNAL_COLUMNS,
  AUDIT_OPERATION_COLUMNS,
  JOURNAL_HEADS_SQL,
  OPERATION_IDS_SQL,
  toAuditJournalRow,
  toAuditOperationRow,
  guardStates,
  type AuditSource,
  type GuardState,
  type JournalHead,
  type OperationAuditData,
  type RawJournalRow,
  type RawOperationRow,
  type RawTriggerRow,
  type StoredCheckpoint,
} from './audit-source';
import { toStoredArtifact, type ArtifactRow } from './rows';
import { type SqlDriver } from './sql-driver';

/** Reads a store for the auditor through the store's own driver (which stays the store's). */
export class SqlAuditSource implements AuditSource {
  constructor(
    private readonly driver: SqlDriver,
    private readonly ensureOpen: () => void,
  ) {}

  /** @inheritdoc */
  async operationIds(): Promise<string[]> {
    this.ensureOpen();
    const rows = await this.driver.query<{ operation_id: string }>(OPERATION_IDS_SQL);
    return rows.rows.map((row) => row.operation_id);
  }

  /** @inheritdoc */
  async readOperation(operationId: string): Promise<OperationAuditData> {
    this.ensureOpen();
    return this.driver.transaction('snapshot', async (session) => {
      const row = (
        await session.query<RawOperationRow>(
          `SELECT ${AUDIT_OPERATION_COLUMNS} FROM operations WHERE operation_id = ?`,
          [operationId],
        )
      ).rows[0];
      const journal = await session.query<RawJournalRow>(
        `SELECT ${AUDIT_JOURNAL_COLUMNS} FROM journal WHERE operation_id = ? ORDER BY sequence`,
        [operationId],
      );
      const artifacts = await session.query<ArtifactRow>(
        'SELECT * FROM artifacts WHERE operation_id = ? ORDER BY sequence',
        [operationId],
      );
      const links = await session.query<{ provider: string; remote_job_id: string }>(
        'SELECT provider, remote_job_id FROM operation_jobs WHERE operation_id = ? ORDER BY 1, 2',
        [operationId],
      );
      return {
        operationId,
        row: row === undefined ? null : toAuditOperationRow(row),
        journal: journal.rows.map(toAuditJournalRow),
        artifacts: artifacts.rows.map(toStoredArtifact),
        jobLinks: links.rows.map((link) => ({ provider: link.provider, remoteJobId: link.remote_job_id })),
      };
    });
  }

  /** @inheritdoc */
  async journalHeads(): Promise<JournalHead[]> {
    this.ensureOpen();
    const rows = await this.driver.query<{ operation_id: string; sequence: number | string; hash: string }>(
      JOURNAL_HEADS_SQL,
    );
    return rows.rows.map((row) => ({ operationId: row.operation_id, sequence: Number(row.sequence), hash: row.hash }));
  }

  /** @inheritdoc */
  async checkpoints(): Promise<StoredCheckpoint[]> {
    this.ensureOpen();
    const rows = await this.driver.query<{
      sequence: number | string;
      taken_at: string;
      digest: string;
      document: string;
    }>('SELECT sequence, taken_at, digest, document FROM audit_checkpoints ORDER BY sequence');
    return rows.rows.map((row) => ({
      sequence: Number(row.sequence),
      takenAt: row.taken_at,
      digest: row.digest,
      document: row.document,
    }));
  }

  /** @inheritdoc */
  async recordCheckpoint(checkpoint: StoredCheckpoint): Promise<'recorded' | 'taken'> {
    this.ensureOpen();
    const written = await this.driver.query(
      'INSERT INTO audit_checkpoints (sequence, taken_at, digest, document) VALUES (?, ?, ?, ?) ON CONFLICT (sequence) DO NOTHING',
      [checkpoint.sequence, checkpoint.takenAt, checkpoint.digest, checkpoint.document],
    );
    return written.changes === 1 ? 'recorded' : 'taken';
  }

  /** @inheritdoc */
  async appendOnlyGuards(): Promise<GuardState[]> {
    this.ensureOpen();
    const rows = await this.driver.query<RawTriggerRow>(this.driver.dialect.triggersSql);
    return guardStates(this.driver.dialect, rows.rows);
  }
}
