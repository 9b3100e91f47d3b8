/** The PostgreSQL {@link AuditSource}: each read is one REPEATABLE READ, READ ONLY transaction (one snapshot). */
import { type PoolClient } from 'pg';
import {
  AUDIT_JOURNAL_COLUMNS,
  AUDIT_OPERATION_COLUMNS,
  JOURNAL_HEADS_SQL,
  OPERATION_IDS_SQL,
  toAuditJournalRow,
  toAuditOperationRow,
  type AuditSource,
  type JournalHead,
  type OperationAuditData,
  type RawJournalRow,
  type RawOperationRow,
  type StoredCheckpoint,
} from './audit-source';
import { toStoredArtifact, type ArtifactRow } from './rows';

/** Runs `fn` in a transaction opened with `begin`. */
export type PostgresTx = <T>(fn: (c: PoolClient) => Promise<T>, begin?: string) => Promise<T>;

const SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/** Reads a PostgreSQL store for the auditor through the store's own pool. */
export class PostgresAuditSource implements AuditSource {
  constructor(private readonly tx: PostgresTx) {}

  /** @inheritdoc */
  async operationIds(): Promise<string[]> {
    return this.tx(
      async (c) => (await c.query<{ operation_id: string }>(OPERATION_IDS_SQL)).rows.map((r) => r.operation_id),
      SNAPSHOT,
    );
  }

  /** @inheritdoc */
  async readOperation(operationId: string): Promise<OperationAuditData> {
    return this.tx(async (c) => {
      const row = (
        await c.query<RawOperationRow>(`SELECT ${AUDIT_OPERATION_COLUMNS} FROM operations WHERE operation_id = $1`, [
          operationId,
        ])
      ).rows[0];
      const journal = await c.query<RawJournalRow>(
        `SELECT ${AUDIT_JOURNAL_COLUMNS} FROM journal WHERE operation_id = $1 ORDER BY sequence`,
        [operationId],
      );
      const artifacts = await c.query<ArtifactRow>(
        'SELECT * FROM artifacts WHERE operation_id = $1 ORDER BY sequence',
        [operationId],
      );
      const links = await c.query<{ provider: string; remote_job_id: string }>(
        'SELECT provider, remote_job_id FROM operation_jobs WHERE operation_id = $1 ORDER BY 1, 2',
        [operationId],
      );
      return {
        operationId,
        row: row === undefined ? null : toAuditOperationRow(row),
        journal: journal.rows.map(toAuditJournalRow),
        artifacts: artifacts.rows.map(toStoredArtifact),
        jobLinks: links.rows.map((l) => ({ provider: l.provider, remoteJobId: l.remote_job_id })),
      };
    }, SNAPSHOT);
  }

  /** @inheritdoc */
  async journalHeads(): Promise<JournalHead[]> {
    return this.tx(async (c) => {
      const rows = await c.query<{ operation_id: string; sequence: string; hash: string }>(JOURNAL_HEADS_SQL);
      return rows.rows.map((r) => ({ operationId: r.operation_id, sequence: Number(r.sequence), hash: r.hash }));
    }, SNAPSHOT);
  }

  /** @inheritdoc */
  async checkpoints(): Promise<StoredCheckpoint[]> {
    return this.tx(async (c) => {
      const rows = await c.query<{ sequence: string; taken_at: string; digest: string; document: string }>(
        'SELECT sequence, taken_at, digest, document FROM audit_checkpoints ORDER BY sequence',
      );
      return rows.rows.map((r) => ({
        sequence: Number(r.sequence),
        takenAt: r.taken_at,
        digest: r.digest,
        document: r.document,
      }));
    }, SNAPSHOT);
  }

  /** @inheritdoc */
  async recordCheckpoint(cp: StoredCheckpoint): Promise<'recorded' | 'taken'> {
    return this.tx(async (c) => {
      const result = await c.query(
        'INSERT INTO audit_checkpoints (sequence, taken_at, digest, document) VALUES ($1, $2, $3, $4) ON CONFLICT (sequence) DO NOTHING',
        [cp.sequence, cp.takenAt, cp.digest, cp.document],
      );
      return result.rowCount === 1 ? 'recorded' : 'taken';
    });
  }
}
