/** The SQLite {@link AuditSource}: reads in one deferred transaction (one WAL snapshot) per call. */
import type Database from 'better-sqlite3';
import {
  AUDIT_JOURNAL_COLUMNS,
  AUDIT_OPERATION_COLUMNS,
  JOURNAL_HEADS_SQL,
  OPERATION_IDS_SQL,
  toAuditJournalRow,
  toAuditOperationRow,
  type AuditJobLink,
  type AuditSource,
  type JournalHead,
  type OperationAuditData,
  type RawJournalRow,
  type RawOperationRow,
  type StoredCheckpoint,
} from './audit-source';
import { toStoredArtifact, type ArtifactRow } from './rows';

/** Reads a SQLite store for the auditor. `db` stays owned by the store that made this. */
export class SqliteAuditSource implements AuditSource {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly ensureOpen: () => void,
  ) {}

  /** Prepared once per source: an audit runs the same few statements for every operation. */
  private prepare<P extends unknown[], R>(sql: string): Database.Statement<P, R> {
    let cached = this.statements.get(sql);
    if (cached === undefined) {
      cached = this.db.prepare(sql);
      this.statements.set(sql, cached);
    }
    return cached as unknown as Database.Statement<P, R>;
  }

  /** @inheritdoc */
  async operationIds(): Promise<string[]> {
    this.ensureOpen();
    return this.prepare<[], string>(OPERATION_IDS_SQL).pluck().all();
  }

  /** @inheritdoc */
  async readOperation(operationId: string): Promise<OperationAuditData> {
    this.ensureOpen();
    const read = this.db.transaction((id: string): OperationAuditData => {
      const row = this.prepare<[string], RawOperationRow>(
        `SELECT ${AUDIT_OPERATION_COLUMNS} FROM operations WHERE operation_id = ?`,
      ).get(id);
      const journal = this.prepare<[string], RawJournalRow>(
        `SELECT ${AUDIT_JOURNAL_COLUMNS} FROM journal WHERE operation_id = ? ORDER BY sequence`,
      ).all(id);
      const artifacts = this.prepare<[string], ArtifactRow>(
        'SELECT * FROM artifacts WHERE operation_id = ? ORDER BY sequence',
      ).all(id);
      const jobLinks = this.prepare<[string], { provider: string; remote_job_id: string }>(
        'SELECT provider, remote_job_id FROM operation_jobs WHERE operation_id = ? ORDER BY 1, 2',
      ).all(id);
      return {
        operationId: id,
        row: row === undefined ? null : toAuditOperationRow(row),
        journal: journal.map(toAuditJournalRow),
        artifacts: artifacts.map(toStoredArtifact),
        jobLinks: jobLinks.map((l): AuditJobLink => ({ provider: l.provider, remoteJobId: l.remote_job_id })),
      };
    });
    return read.deferred(operationId);
  }

  /** @inheritdoc */
  async journalHeads(): Promise<JournalHead[]> {
    this.ensureOpen();
    return this.prepare<[], { operation_id: string; sequence: number; hash: string }>(JOURNAL_HEADS_SQL)
      .all()
      .map((r) => ({ operationId: r.operation_id, sequence: Number(r.sequence), hash: r.hash }));
  }

  /** @inheritdoc */
  async checkpoints(): Promise<StoredCheckpoint[]> {
    this.ensureOpen();
    return this.prepare<[], { sequence: number; taken_at: string; digest: string; document: string }>(
      'SELECT sequence, taken_at, digest, document FROM audit_checkpoints ORDER BY sequence',
    )
      .all()
      .map((r) => ({ sequence: Number(r.sequence), takenAt: r.taken_at, digest: r.digest, document: r.document }));
  }

  /** @inheritdoc */
  async recordCheckpoint(c: StoredCheckpoint): Promise<'recorded' | 'taken'> {
    this.ensureOpen();
    const changes = this.prepare<[number, string, string, string], unknown>(
      'INSERT INTO audit_checkpoints (sequence, taken_at, digest, document) VALUES (?, ?, ?, ?) ON CONFLICT (sequence) DO NOTHING',
    ).run(c.sequence, c.takenAt, c.digest, c.document).changes;
    return changes === 1 ? 'recorded' : 'taken';
  }
}
