/**
 * The PostgreSQL engine, for many workers and operators: a `pg` Pool on a connection string, optionally bound
 * to one schema (`search_path`). Appends lock the operation's head row (`SELECT ... FOR UPDATE`) inside the
 * write transaction, so concurrent writers to one operation serialise and the (operation_id, sequence) primary
 * key backs that up: never a duplicate, never a gap. Migrations run under a transaction-scoped advisory lock.
 */
import { Pool, type PoolClient } from 'pg';
import { type EscalationReason, type JournalEntry, type LocalState } from '../../core/journal';
import { verifyChainsOf, type AuditSource } from './audit-source';
import { chainKeyOf, snapshotHash, type ChainKey, type ChainVerification } from './chain';
import { POSTGRES_MIGRATIONS } from './migrations/postgres';
import {
  deadlineWindow,
  decideAppend,
  prepareEntry,
  prepareProviderSession,
  prepareSnapshot,
  prepareWebhookEvent,
  queryLimit,
  type AppendResult,
  type OperationSnapshot,
  type OperationStore,
  type OperationStoreOptions,
  type PreparedEntry,
  type PutOperationResult,
  type StoredArtifact,
  type StoredEntry,
  type StoredProviderSession,
  type WebhookEvent,
} from './operation-store';
import { toStoredArtifact, toStoredEntry, type ArtifactRow, type JournalRow } from './rows';
import { PostgresAuditSource } from './postgres-audit';
import { StoreError } from './store-errors';

/** Options of the PostgreSQL engine. */
export interface PostgresStoreOptions extends OperationStoreOptions {
  /** `postgres://user@host:port/database`. */
  readonly connectionString: string;
  /** Schema holding the tables (created by `migrate()` when missing). Default: the server's search_path. */
  readonly schema?: string;
  /** Pool size. Default 10. */
  readonly maxConnections?: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The PostgreSQL implementation of {@link OperationStore}. Use {@link openPostgresStore} to open and migrate. */
export class PostgresOperationStore implements OperationStore {
  private readonly pool: Pool;
  private closed = false;
  private readonly hmacKey: ChainKey | undefined;
  private readonly forbiddenValues: readonly string[];
  private readonly schema: string | undefined;

  /** Creates the pool (no connection yet); call `migrate()` before use. */
  constructor(options: PostgresStoreOptions) {
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new StoreError('ASYNCJOB_ERR_STORE_LOCATION', `schema must match ${SCHEMA_NAME.source}`, [
        { path: 'schema', message: 'not a plain lower-case identifier' },
      ]);
    }
    this.schema = options.schema;
    // The schema is a startup parameter of every connection, so no statement can ever run outside it.
    this.pool = new Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 10,
      ...(this.schema === undefined ? {} : { options: `-c search_path=${this.schema}` }),
    });
    // An idle client's error (server restart) must not crash the process; the next query reconnects.
    this.pool.on('error', () => undefined);
    this.hmacKey = chainKeyOf(options.hmacKey);
    this.forbiddenValues = options.forbiddenValues ?? [];
  }

  /** @inheritdoc */
  async migrate(): Promise<void> {
    await this.tx(async (c) => {
      if (this.schema !== undefined) {
        // CREATE SCHEMA IF NOT EXISTS races on the catalog; a lock keyed by the schema name serialises it.
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`asyncjob:schema:${this.schema}`]);
        await c.query(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
      }
      await c.query("SELECT pg_advisory_xact_lock(hashtext('asyncjob:migrations:' || current_schema()))");
      await c.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
      );
      const applied = new Set(
        (await c.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
      );
      for (const migration of POSTGRES_MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        await c.query(migration.sql);
        await c.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
      }
    });
  }

  /** @inheritdoc */
  async append(entry: JournalEntry): Promise<AppendResult> {
    const [result] = await this.appendMany([entry]);
    return result!;
  }

  /** @inheritdoc */
  async appendMany(entries: readonly JournalEntry[]): Promise<AppendResult[]> {
    const prepared = entries.map((e) => prepareEntry(e, this.forbiddenValues));
    return this.tx(async (c) => {
      const results: AppendResult[] = [];
      for (const p of prepared) results.push(await this.appendOne(c, p));
      return results;
    });
  }

  private async appendOne(c: PoolClient, p: PreparedEntry): Promise<AppendResult> {
    const { entry, columns } = p;
    await c.query('INSERT INTO operations (operation_id) VALUES ($1) ON CONFLICT (operation_id) DO NOTHING', [
      entry.operationId,
    ]);
    const head = (
      await c.query<{ last_sequence: string; last_hash: string | null; provider: string | null }>(
        'SELECT last_sequence, last_hash, provider FROM operations WHERE operation_id = $1 FOR UPDATE',
        [entry.operationId],
      )
    ).rows[0]!;
    const lastSequence = Number(head.last_sequence);
    const existing =
      entry.sequence <= lastSequence
        ? ((
            await c.query<{ entry: string; hash: string }>(
              'SELECT entry, hash FROM journal WHERE operation_id = $1 AND sequence = $2',
              [entry.operationId, entry.sequence],
            )
          ).rows[0] ?? null)
        : null;
    const decision = decideAppend(p, { lastSequence, lastHash: head.last_hash }, existing, this.hmacKey);
    if (decision.kind === 'duplicate') return { kind: 'duplicate', hash: decision.hash };
    const provider = head.provider ?? columns.provider;
    await c.query(
      'UPDATE operations SET last_sequence = $2, last_hash = $3, provider = coalesce(provider, $4) WHERE operation_id = $1',
      [entry.operationId, entry.sequence, decision.hash, provider],
    );
    await c.query(
      `INSERT INTO journal (operation_id, sequence, at, actor, kind, entry, prev_hash, hash, to_state, remote_job_id, http_status, delay_source, escalation_reason, key_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        entry.operationId,
        entry.sequence,
        entry.at,
        entry.actor,
        columns.kind,
        p.canonical,
        decision.prevHash,
        decision.hash,
        columns.toState,
        columns.remoteJobId,
        columns.httpStatus,
        columns.delaySource,
        columns.escalationReason,
        this.hmacKey?.id ?? null,
      ],
    );
    if (columns.remoteJobId !== null && provider !== null) {
      await c.query(
        'INSERT INTO operation_jobs (provider, remote_job_id, operation_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [provider, columns.remoteJobId, entry.operationId],
      );
    }
    if (entry.body.kind === 'artifact') {
      const a = entry.body;
      await c.query(
        `INSERT INTO artifacts (operation_id, sequence, at, location, sha256, size_bytes, content_type, validation)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          entry.operationId,
          entry.sequence,
          entry.at,
          a.location,
          a.sha256,
          a.sizeBytes,
          a.contentType ?? null,
          a.validation,
        ],
      );
    }
    return { kind: 'appended', hash: decision.hash };
  }

  /** @inheritdoc */
  async putOperation(input: OperationSnapshot): Promise<PutOperationResult> {
    const { snapshot, canonical } = prepareSnapshot(input, this.forbiddenValues);
    return this.tx(async (c) => {
      const written = await c.query(
        `INSERT INTO operations (operation_id, provider, local_state, remote_job_ids, escalation_reason, result_deadline_at_ms, updated_at, version, snapshot,
           snapshot_hash, snapshot_key_id)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (operation_id) DO UPDATE SET provider = EXCLUDED.provider, local_state = EXCLUDED.local_state,
           remote_job_ids = EXCLUDED.remote_job_ids, escalation_reason = EXCLUDED.escalation_reason,
           result_deadline_at_ms = EXCLUDED.result_deadline_at_ms, updated_at = EXCLUDED.updated_at,
           version = EXCLUDED.version, snapshot = EXCLUDED.snapshot, snapshot_hash = EXCLUDED.snapshot_hash, snapshot_key_id = EXCLUDED.snapshot_key_id
         WHERE operations.version < EXCLUDED.version`,
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
          snapshotHash(canonical, this.hmacKey),
          this.hmacKey?.id ?? null,
        ],
      );
      if (written.rowCount === 0) {
        const stored = (
          await c.query<{ version: string; snapshot: string | null }>(
            'SELECT version, snapshot FROM operations WHERE operation_id = $1',
            [snapshot.operationId],
          )
        ).rows[0]!;
        const storedVersion = Number(stored.version);
        return storedVersion === snapshot.version && stored.snapshot === canonical
          ? { kind: 'unchanged', version: storedVersion }
          : { kind: 'stale', storedVersion };
      }
      for (const jobId of snapshot.remoteJobIds) {
        await c.query(
          'INSERT INTO operation_jobs (provider, remote_job_id, operation_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
          [snapshot.provider, jobId, snapshot.operationId],
        );
      }
      return { kind: 'written', version: snapshot.version };
    });
  }

  /** @inheritdoc */
  async getOperation(operationId: string): Promise<OperationSnapshot | null> {
    const row = (
      await this.query<{ snapshot: string | null }>('SELECT snapshot FROM operations WHERE operation_id = $1', [
        operationId,
      ])
    ).rows[0];
    return row?.snapshot ? (JSON.parse(row.snapshot) as OperationSnapshot) : null;
  }

  /** @inheritdoc */
  async chainHead(operationId: string): Promise<{ lastSequence: number; lastHash: string | null }> {
    const row = (
      await this.query<{ last_sequence: string; last_hash: string | null }>(
        'SELECT last_sequence, last_hash FROM operations WHERE operation_id = $1',
        [operationId],
      )
    ).rows[0];
    return { lastSequence: row ? Number(row.last_sequence) : 0, lastHash: row?.last_hash ?? null };
  }

  /** @inheritdoc */
  async entries(operationId: string, options: { fromSequence?: number } = {}): Promise<StoredEntry[]> {
    const rows = await this.query<JournalRow>(
      'SELECT operation_id, sequence, entry, prev_hash, hash FROM journal WHERE operation_id = $1 AND sequence >= $2 ORDER BY sequence',
      [operationId, options.fromSequence ?? 1],
    );
    return rows.rows.map(toStoredEntry);
  }

  /** @inheritdoc */
  async findByState(state: LocalState, options: { limit?: number } = {}): Promise<OperationSnapshot[]> {
    return this.snapshots(
      'SELECT snapshot FROM operations WHERE local_state = $1 AND snapshot IS NOT NULL ORDER BY updated_at, operation_id LIMIT $2',
      [state, queryLimit(options.limit)],
    );
  }

  /** @inheritdoc */
  async findByEscalationReason(
    reason: EscalationReason,
    options: { limit?: number } = {},
  ): Promise<OperationSnapshot[]> {
    return this.snapshots(
      'SELECT snapshot FROM operations WHERE escalation_reason = $1 AND snapshot IS NOT NULL ORDER BY updated_at, operation_id LIMIT $2',
      [reason, queryLimit(options.limit)],
    );
  }

  /** @inheritdoc */
  async findByProviderJobId(provider: string, remoteJobId: string): Promise<string[]> {
    const rows = await this.query<{ operation_id: string }>(
      'SELECT operation_id FROM operation_jobs WHERE provider = $1 AND remote_job_id = $2 ORDER BY operation_id',
      [provider, remoteJobId],
    );
    return rows.rows.map((r) => r.operation_id);
  }

  /** @inheritdoc */
  async findByDeadlineWindow(
    fromMs: number,
    toMs: number,
    options: { limit?: number } = {},
  ): Promise<OperationSnapshot[]> {
    deadlineWindow(fromMs, toMs);
    return this.snapshots(
      `SELECT snapshot FROM operations WHERE result_deadline_at_ms >= $1 AND result_deadline_at_ms < $2 AND snapshot IS NOT NULL
       ORDER BY result_deadline_at_ms, operation_id LIMIT $3`,
      [fromMs, toMs, queryLimit(options.limit)],
    );
  }

  /** @inheritdoc */
  async recordWebhookEvent(input: WebhookEvent): Promise<'recorded' | 'duplicate'> {
    const e = prepareWebhookEvent(input, this.forbiddenValues);
    const result = await this.query(
      `INSERT INTO webhook_events (provider, event_id, received_at, operation_id, event_type, payload_sha256)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (provider, event_id) DO NOTHING`,
      [e.provider, e.eventId, e.receivedAt, e.operationId ?? null, e.eventType ?? null, e.payloadSha256 ?? null],
    );
    return result.rowCount === 1 ? 'recorded' : 'duplicate';
  }

  /** @inheritdoc */
  async artifacts(operationId: string): Promise<StoredArtifact[]> {
    const rows = await this.query<ArtifactRow>('SELECT * FROM artifacts WHERE operation_id = $1 ORDER BY sequence', [
      operationId,
    ]);
    return rows.rows.map(toStoredArtifact);
  }

  /** @inheritdoc */
  async loadProviderSession(operationId: string): Promise<StoredProviderSession | null> {
    const row = (
      await this.query<{ jar: string; updated_at: string }>(
        'SELECT jar, updated_at FROM provider_sessions WHERE operation_id = $1',
        [operationId],
      )
    ).rows[0];
    return row === undefined ? null : { json: row.jar, updatedAt: row.updated_at };
  }

  /** @inheritdoc */
  async saveProviderSession(operationId: string, json: string): Promise<void> {
    const session = prepareProviderSession(operationId, json, this.forbiddenValues);
    await this.query(
      `INSERT INTO provider_sessions (operation_id, jar, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (operation_id) DO UPDATE SET jar = EXCLUDED.jar, updated_at = EXCLUDED.updated_at`,
      [session.operationId, session.json, new Date().toISOString()],
    );
  }

  /** @inheritdoc */
  async verifyChains(options: { operationId?: string } = {}): Promise<ChainVerification> {
    // One REPEATABLE READ snapshot per operation, so a concurrent append cannot look like a missing head.
    return verifyChainsOf(this.auditSource(), options, this.hmacKey);
  }

  /** @inheritdoc */
  auditSource(): AuditSource {
    return new PostgresAuditSource((fn, begin) => this.tx(fn, begin));
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  private async snapshots(sql: string, params: unknown[]): Promise<OperationSnapshot[]> {
    const rows = await this.query<{ snapshot: string }>(sql, params);
    return rows.rows.map((r) => JSON.parse(r.snapshot) as OperationSnapshot);
  }

  private async query<R extends object = Record<string, unknown>>(sql: string, params: unknown[] = []) {
    this.open();
    return this.pool.query<R>(sql, params);
  }

  private async tx<T>(fn: (c: PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
    this.open();
    const client = await this.pool.connect();
    try {
      await client.query(begin);
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  private open(): void {
    if (this.closed) throw new StoreError('ASYNCJOB_ERR_STORE_CLOSED', 'the PostgreSQL store was used after close()');
  }
}

/** Opens a PostgreSQL store and applies pending migrations. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresOperationStore> {
  const store = new PostgresOperationStore(options);
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
