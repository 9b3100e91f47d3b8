/**
 * The embedded default engine: one SQLite file (`.asyncjob/asyncjob.db` by default) through better-sqlite3, in
 * WAL mode with a busy timeout and foreign keys on. Every write runs in a BEGIN IMMEDIATE transaction, which
 * takes the database's write lock before reading the chain head: two processes appending to the same
 * operation serialise on that lock, so neither can produce a duplicate or a gap. better-sqlite3 is
 * synchronous, so a call never interleaves with another call of the same process.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { type EscalationReason, type LocalState, type JournalEntry } from '../../core/journal';
import { verifyChainsOf, type AuditSource } from './audit-source';
import { chainKeyOf, snapshotHash, type ChainKey, type ChainVerification } from './chain';
import { SQLITE_MIGRATIONS } from './migrations/sqlite';
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
import { SqliteAuditSource } from './sqlite-audit';
import { StoreError } from './store-errors';

/** The default database file, relative to the working directory. */
export const DEFAULT_SQLITE_PATH = '.asyncjob/asyncjob.db';

/** Options of the SQLite engine. */
export interface SqliteStoreOptions extends OperationStoreOptions {
  /** The database file (created with its directory unless `fileMustExist`). Default `.asyncjob/asyncjob.db`. */
  readonly path?: string;
  /** Refuse to create a missing file (the audit command reads an existing store). */
  readonly fileMustExist?: boolean;
  /** How long a write waits for another process's lock, in ms. Default 10000. */
  readonly busyTimeoutMs?: number;
}

interface HeadRow {
  last_sequence: number;
  last_hash: string | null;
  provider: string | null;
}

/** The SQLite implementation of {@link OperationStore}. Use {@link openSqliteStore} to open and migrate. */
export class SqliteOperationStore implements OperationStore {
  private readonly db: Database.Database;
  private closed = false;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly hmacKey: ChainKey | undefined;
  private readonly forbiddenValues: readonly string[];

  /** Opens the file and sets WAL, busy timeout and foreign keys; call `migrate()` before use. */
  constructor(options: SqliteStoreOptions = {}) {
    const path = options.path ?? DEFAULT_SQLITE_PATH;
    if (!options.fileMustExist && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    try {
      this.db = new Database(path, { fileMustExist: options.fileMustExist ?? false });
    } catch (err) {
      throw new StoreError(
        'ASYNCJOB_ERR_STORE_LOCATION',
        `cannot open SQLite store ${path}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 10_000))}`);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.hmacKey = chainKeyOf(options.hmacKey);
    this.forbiddenValues = options.forbiddenValues ?? [];
  }

  /** @inheritdoc */
  async migrate(): Promise<void> {
    this.open();
    this.db.exec('BEGIN IMMEDIATE');
    try {
      this.db.exec(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
      );
      const applied = new Set(
        this.stmt('SELECT version FROM schema_migrations')
          .pluck()
          .all()
          .map((v) => Number(v)),
      );
      for (const migration of SQLITE_MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        this.db.exec(migration.sql);
        this.stmt('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
          migration.version,
          migration.name,
          new Date().toISOString(),
        );
      }
      this.db.exec('COMMIT');
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  /** @inheritdoc */
  async append(entry: JournalEntry): Promise<AppendResult> {
    const [result] = await this.appendMany([entry]);
    return result!;
  }

  /** @inheritdoc */
  async appendMany(entries: readonly JournalEntry[]): Promise<AppendResult[]> {
    this.open();
    const prepared = entries.map((e) => prepareEntry(e, this.forbiddenValues));
    const run = this.db.transaction((items: PreparedEntry[]) => items.map((p) => this.appendOne(p)));
    return run.immediate(prepared);
  }

  private appendOne(p: PreparedEntry): AppendResult {
    const { entry, columns } = p;
    const head = this.stmt<[string], HeadRow>(
      'SELECT last_sequence, last_hash, provider FROM operations WHERE operation_id = ?',
    ).get(entry.operationId);
    const existing =
      head !== undefined && entry.sequence <= head.last_sequence
        ? (this.stmt<[string, number], { entry: string; hash: string }>(
            'SELECT entry, hash FROM journal WHERE operation_id = ? AND sequence = ?',
          ).get(entry.operationId, entry.sequence) ?? null)
        : null;
    const decision = decideAppend(
      p,
      { lastSequence: head?.last_sequence ?? 0, lastHash: head?.last_hash ?? null },
      existing,
      this.hmacKey,
    );
    if (decision.kind === 'duplicate') return { kind: 'duplicate', hash: decision.hash };
    const provider = head?.provider ?? columns.provider;
    this.stmt(
      `INSERT INTO operations (operation_id, provider, last_sequence, last_hash) VALUES (?, ?, ?, ?)
         ON CONFLICT (operation_id) DO UPDATE SET last_sequence = excluded.last_sequence, last_hash = excluded.last_hash,
           provider = coalesce(operations.provider, excluded.provider)`,
    ).run(entry.operationId, provider, entry.sequence, decision.hash);
    this.stmt(
      `INSERT INTO journal (operation_id, sequence, at, actor, kind, entry, prev_hash, hash, to_state, remote_job_id, http_status, delay_source, escalation_reason, key_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
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
    );
    if (columns.remoteJobId !== null && provider !== null) {
      this.stmt('INSERT OR IGNORE INTO operation_jobs (provider, remote_job_id, operation_id) VALUES (?, ?, ?)').run(
        provider,
        columns.remoteJobId,
        entry.operationId,
      );
    }
    if (entry.body.kind === 'artifact') {
      const a = entry.body;
      this.stmt(
        `INSERT INTO artifacts (operation_id, sequence, at, location, sha256, size_bytes, content_type, validation)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        entry.operationId,
        entry.sequence,
        entry.at,
        a.location,
        a.sha256,
        a.sizeBytes,
        a.contentType ?? null,
        a.validation,
      );
    }
    return { kind: 'appended', hash: decision.hash };
  }

  /** @inheritdoc */
  async putOperation(input: OperationSnapshot): Promise<PutOperationResult> {
    this.open();
    const { snapshot, canonical } = prepareSnapshot(input, this.forbiddenValues);
    const run = this.db.transaction((): PutOperationResult => {
      const changes = this.stmt(
        `INSERT INTO operations (operation_id, provider, local_state, remote_job_ids, escalation_reason, result_deadline_at_ms, updated_at, version, snapshot,
             snapshot_hash, snapshot_key_id)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (operation_id) DO UPDATE SET provider = excluded.provider, local_state = excluded.local_state,
             remote_job_ids = excluded.remote_job_ids, escalation_reason = excluded.escalation_reason,
             result_deadline_at_ms = excluded.result_deadline_at_ms, updated_at = excluded.updated_at,
             version = excluded.version, snapshot = excluded.snapshot, snapshot_hash = excluded.snapshot_hash, snapshot_key_id = excluded.snapshot_key_id
           WHERE operations.version < excluded.version`,
      ).run(
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
      ).changes;
      if (changes === 0) {
        const stored = this.stmt<[string], { version: number; snapshot: string | null }>(
          'SELECT version, snapshot FROM operations WHERE operation_id = ?',
        ).get(snapshot.operationId)!;
        return stored.version === snapshot.version && stored.snapshot === canonical
          ? { kind: 'unchanged', version: stored.version }
          : { kind: 'stale', storedVersion: stored.version };
      }
      const link = this.stmt(
        'INSERT OR IGNORE INTO operation_jobs (provider, remote_job_id, operation_id) VALUES (?, ?, ?)',
      );
      for (const jobId of snapshot.remoteJobIds) link.run(snapshot.provider, jobId, snapshot.operationId);
      return { kind: 'written', version: snapshot.version };
    });
    return run.immediate();
  }

  /** @inheritdoc */
  async getOperation(operationId: string): Promise<OperationSnapshot | null> {
    this.open();
    const row = this.stmt<[string], { snapshot: string | null }>(
      'SELECT snapshot FROM operations WHERE operation_id = ?',
    ).get(operationId);
    return row?.snapshot ? (JSON.parse(row.snapshot) as OperationSnapshot) : null;
  }

  /** @inheritdoc */
  async chainHead(operationId: string): Promise<{ lastSequence: number; lastHash: string | null }> {
    this.open();
    const row = this.stmt<[string], HeadRow>(
      'SELECT last_sequence, last_hash, provider FROM operations WHERE operation_id = ?',
    ).get(operationId);
    return { lastSequence: row?.last_sequence ?? 0, lastHash: row?.last_hash ?? null };
  }

  /** @inheritdoc */
  async entries(operationId: string, options: { fromSequence?: number } = {}): Promise<StoredEntry[]> {
    this.open();
    return this.stmt<[string, number], JournalRow>(
      'SELECT operation_id, sequence, entry, prev_hash, hash FROM journal WHERE operation_id = ? AND sequence >= ? ORDER BY sequence',
    )
      .all(operationId, options.fromSequence ?? 1)
      .map(toStoredEntry);
  }

  /** @inheritdoc */
  async findByState(state: LocalState, options: { limit?: number } = {}): Promise<OperationSnapshot[]> {
    return this.snapshots(
      'SELECT snapshot FROM operations WHERE local_state = ? AND snapshot IS NOT NULL ORDER BY updated_at, operation_id LIMIT ?',
      state,
      queryLimit(options.limit),
    );
  }

  /** @inheritdoc */
  async findByEscalationReason(
    reason: EscalationReason,
    options: { limit?: number } = {},
  ): Promise<OperationSnapshot[]> {
    return this.snapshots(
      'SELECT snapshot FROM operations WHERE escalation_reason = ? AND snapshot IS NOT NULL ORDER BY updated_at, operation_id LIMIT ?',
      reason,
      queryLimit(options.limit),
    );
  }

  /** @inheritdoc */
  async findByProviderJobId(provider: string, remoteJobId: string): Promise<string[]> {
    this.open();
    return this.stmt<[string, string], string>(
      'SELECT operation_id FROM operation_jobs WHERE provider = ? AND remote_job_id = ? ORDER BY operation_id',
    )
      .pluck()
      .all(provider, remoteJobId);
  }

  /** @inheritdoc */
  async findByDeadlineWindow(
    fromMs: number,
    toMs: number,
    options: { limit?: number } = {},
  ): Promise<OperationSnapshot[]> {
    deadlineWindow(fromMs, toMs);
    return this.snapshots(
      `SELECT snapshot FROM operations WHERE result_deadline_at_ms >= ? AND result_deadline_at_ms < ? AND snapshot IS NOT NULL
       ORDER BY result_deadline_at_ms, operation_id LIMIT ?`,
      fromMs,
      toMs,
      queryLimit(options.limit),
    );
  }

  /** @inheritdoc */
  async recordWebhookEvent(input: WebhookEvent): Promise<'recorded' | 'duplicate'> {
    this.open();
    const e = prepareWebhookEvent(input, this.forbiddenValues);
    const changes = this.stmt(
      `INSERT INTO webhook_events (provider, event_id, received_at, operation_id, event_type, payload_sha256)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (provider, event_id) DO NOTHING`,
    ).run(
      e.provider,
      e.eventId,
      e.receivedAt,
      e.operationId ?? null,
      e.eventType ?? null,
      e.payloadSha256 ?? null,
    ).changes;
    return changes === 1 ? 'recorded' : 'duplicate';
  }

  /** @inheritdoc */
  async artifacts(operationId: string): Promise<StoredArtifact[]> {
    this.open();
    return this.stmt<[string], ArtifactRow>('SELECT * FROM artifacts WHERE operation_id = ? ORDER BY sequence')
      .all(operationId)
      .map(toStoredArtifact);
  }

  /** @inheritdoc */
  async loadProviderSession(operationId: string): Promise<StoredProviderSession | null> {
    this.open();
    const row = this.stmt<[string], { jar: string; updated_at: string }>(
      'SELECT jar, updated_at FROM provider_sessions WHERE operation_id = ?',
    ).get(operationId);
    return row === undefined ? null : { json: row.jar, updatedAt: row.updated_at };
  }

  /** @inheritdoc */
  async saveProviderSession(operationId: string, json: string): Promise<void> {
    this.open();
    const session = prepareProviderSession(operationId, json, this.forbiddenValues);
    this.stmt(
      `INSERT INTO provider_sessions (operation_id, jar, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (operation_id) DO UPDATE SET jar = excluded.jar, updated_at = excluded.updated_at`,
    ).run(session.operationId, session.json, new Date().toISOString());
  }

  /** @inheritdoc */
  async verifyChains(options: { operationId?: string } = {}): Promise<ChainVerification> {
    this.open();
    // One read transaction per operation: head and rows come from the same WAL snapshot, so an append by
    // another process during the walk cannot look like a deleted tail.
    return verifyChainsOf(this.auditSource(), options, this.hmacKey);
  }

  /** @inheritdoc */
  auditSource(): AuditSource {
    return new SqliteAuditSource(this.db, () => this.open());
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  private snapshots(sql: string, ...params: unknown[]): OperationSnapshot[] {
    this.open();
    return this.stmt<unknown[], string>(sql)
      .pluck()
      .all(...params)
      .map((s) => JSON.parse(s) as OperationSnapshot);
  }

  /** Prepared statements are cached: preparing costs more than running a small insert. */
  private stmt<P extends unknown[] = unknown[], R = unknown>(sql: string): Database.Statement<P, R> {
    let cached = this.statements.get(sql);
    if (cached === undefined) {
      cached = this.db.prepare(sql);
      this.statements.set(sql, cached);
    }
    return cached as unknown as Database.Statement<P, R>;
  }

  private open(): void {
    if (this.closed) throw new StoreError('ASYNCJOB_ERR_STORE_CLOSED', 'the SQLite store was used after close()');
  }
}

/** Opens a SQLite store and applies pending migrations. */
export async function openSqliteStore(options: SqliteStoreOptions = {}): Promise<SqliteOperationStore> {
  const store = new SqliteOperationStore(options);
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
