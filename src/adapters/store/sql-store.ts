/**
 * The operation store, written once over a {@link SqlDriver}: every method's SQL and logic, for SQLite
 * (`SqliteOperationStore`) and PostgreSQL (`PostgresOperationStore`) alike. Appends run in the driver's write
 * transaction and read the chain head under the engine's lock (SQLite: the database's write lock, taken by
 * BEGIN IMMEDIATE; PostgreSQL: the operation's head row, `SELECT ... FOR UPDATE`), so two writers to one
 * operation, in one process or two, take turns: never a duplicate, never a gap, and the (operation_id,
 * sequence) primary key backs that up.
 */
import { type JournalEntry } from '../../core/journal';
import { verifyChainsOf, type AuditSource } from './audit-source';
import { chainKeyOf, snapshotHash, type ChainKey, type ChainVerification } from './chain';
import {
  prepareEntry,
  prepareProviderSession,
  prepareSnapshot,
  prepareWebhookEvent,
  type AppendResult,
  type OperationSnapshot,
  type OperationStore,
  type OperationStoreOptions,
  type PutOperationResult,
  type StoredArtifact,
  type StoredEntry,
  type StoredProviderSession,
  type WebhookEvent,
} from './operation-store';
import { toStoredArtifact, toStoredEntry, type ArtifactRow, type JournalRow } from './rows';
import { SqlAuditSource } from './sql-audit';
import { type SqlDriver, type SqlValue } from './sql-driver';
import { migrateSchema } from './sql-migrate';
import { appendEntry, writeSnapshot } from './sql-writes';
import { StoreError } from './store-errors';

/** The {@link OperationStore} on a SQL engine. Call `migrate()` before use (the engines' `open*Store` do). */
export class SqlOperationStore implements OperationStore {
  private closed = false;
  private readonly hmacKey: ChainKey | undefined;
  private readonly forbiddenValues: readonly string[];

  /** Takes ownership of `driver` (closed by `close()`). */
  constructor(
    private readonly driver: SqlDriver,
    options: OperationStoreOptions = {},
  ) {
    this.hmacKey = chainKeyOf(options.hmacKey);
    this.forbiddenValues = options.forbiddenValues ?? [];
  }

  /** @inheritdoc */
  async migrate(): Promise<void> {
    this.ensureOpen();
    await migrateSchema(this.driver);
  }

  /** @inheritdoc */
  async append(entry: JournalEntry): Promise<AppendResult> {
    const [result] = await this.appendMany([entry]);
    return result!;
  }

  /** @inheritdoc */
  async appendMany(entries: readonly JournalEntry[]): Promise<AppendResult[]> {
    this.ensureOpen();
    const prepared = entries.map((entry) => prepareEntry(entry, this.forbiddenValues));
    return this.driver.transaction('write', async (session) => {
      const results: AppendResult[] = [];
      for (const item of prepared) results.push(await appendEntry(session, this.driver.dialect, item, this.hmacKey));
      return results;
    });
  }

  /** @inheritdoc */
  async putOperation(input: OperationSnapshot): Promise<PutOperationResult> {
    this.ensureOpen();
    const { snapshot, canonical } = prepareSnapshot(input, this.forbiddenValues);
    return this.driver.transaction('write', (session) => writeSnapshot(session, snapshot, canonical, this.hmacKey));
  }

  /** @inheritdoc */
  async putReservation(input: OperationSnapshot): Promise<boolean> {
    this.ensureOpen();
    const { snapshot, canonical } = prepareSnapshot(input, this.forbiddenValues);
    // One statement, the version its guard: a replaced activity's reservation never lands over a newer step. A
    // reservation changes counters and the schedule only, so the local state must be the stored one too.
    // One statement on its own (autocommit): one round trip on PostgreSQL, no BEGIN/COMMIT around it.
    const written = await this.driver.query(
      `UPDATE operations SET snapshot = ?, snapshot_hash = ?, snapshot_key_id = ?, updated_at = ?
           WHERE operation_id = ? AND version = ? AND local_state = ?`,
      [
        canonical,
        snapshotHash(canonical, this.hmacKey),
        this.hmacKey?.id ?? null,
        snapshot.updatedAt,
        snapshot.operationId,
        snapshot.version,
        snapshot.localState,
      ],
    );
    return written.changes === 1;
  }

  /** @inheritdoc */
  async appendWithSnapshot(
    entries: readonly JournalEntry[],
    input: OperationSnapshot,
  ): Promise<{ appended: AppendResult[]; snapshot: PutOperationResult }> {
    this.ensureOpen();
    const prepared = entries.map((entry) => prepareEntry(entry, this.forbiddenValues));
    const { snapshot, canonical } = prepareSnapshot(input, this.forbiddenValues);
    return this.driver.transaction('write', async (session) => {
      const appended: AppendResult[] = [];
      for (const item of prepared) appended.push(await appendEntry(session, this.driver.dialect, item, this.hmacKey));
      return { appended, snapshot: await writeSnapshot(session, snapshot, canonical, this.hmacKey) };
    });
  }

  /** @inheritdoc */
  async getOperation(operationId: string): Promise<OperationSnapshot | null> {
    const [row] = await this.rows<{ snapshot: string | null }>(
      'SELECT snapshot FROM operations WHERE operation_id = ?',
      [operationId],
    );
    return row?.snapshot ? (JSON.parse(row.snapshot) as OperationSnapshot) : null;
  }

  /** @inheritdoc */
  async chainHead(operationId: string): Promise<{ lastSequence: number; lastHash: string | null }> {
    const [row] = await this.rows<{ last_sequence: number | string; last_hash: string | null }>(
      'SELECT last_sequence, last_hash FROM operations WHERE operation_id = ?',
      [operationId],
    );
    return { lastSequence: row ? Number(row.last_sequence) : 0, lastHash: row?.last_hash ?? null };
  }

  /** @inheritdoc */
  async entries(operationId: string, options: { fromSequence?: number } = {}): Promise<StoredEntry[]> {
    const rows = await this.rows<JournalRow>(
      'SELECT operation_id, sequence, entry, prev_hash, hash FROM journal WHERE operation_id = ? AND sequence >= ? ORDER BY sequence',
      [operationId, options.fromSequence ?? 1],
    );
    return rows.map(toStoredEntry);
  }

  /** @inheritdoc */
  async findByProviderJobId(provider: string, remoteJobId: string): Promise<string[]> {
    const rows = await this.rows<{ operation_id: string }>(
      'SELECT operation_id FROM operation_jobs WHERE provider = ? AND remote_job_id = ? ORDER BY operation_id',
      [provider, remoteJobId],
    );
    return rows.map((row) => row.operation_id);
  }

  /** @inheritdoc */
  async recordWebhookEvent(input: WebhookEvent): Promise<'recorded' | 'duplicate'> {
    this.ensureOpen();
    const event = prepareWebhookEvent(input, this.forbiddenValues);
    const written = await this.driver.query(
      `INSERT INTO webhook_events (provider, event_id, received_at, operation_id, event_type, payload_sha256)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (provider, event_id) DO NOTHING`,
      [
        event.provider,
        event.eventId,
        event.receivedAt,
        event.operationId ?? null,
        event.eventType ?? null,
        event.payloadSha256 ?? null,
      ],
    );
    return written.changes === 1 ? 'recorded' : 'duplicate';
  }

  /** @inheritdoc */
  async artifacts(operationId: string): Promise<StoredArtifact[]> {
    const rows = await this.rows<ArtifactRow>('SELECT * FROM artifacts WHERE operation_id = ? ORDER BY sequence', [
      operationId,
    ]);
    return rows.map(toStoredArtifact);
  }

  /** @inheritdoc */
  async loadProviderSession(operationId: string): Promise<StoredProviderSession | null> {
    const [row] = await this.rows<{ jar: string; updated_at: string }>(
      'SELECT jar, updated_at FROM provider_sessions WHERE operation_id = ?',
      [operationId],
    );
    return row === undefined ? null : { json: row.jar, updatedAt: row.updated_at };
  }

  /** @inheritdoc */
  async saveProviderSession(operationId: string, json: string): Promise<void> {
    this.ensureOpen();
    const session = prepareProviderSession(operationId, json, this.forbiddenValues);
    await this.driver.query(
      `INSERT INTO provider_sessions (operation_id, jar, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (operation_id) DO UPDATE SET jar = excluded.jar, updated_at = excluded.updated_at`,
      [session.operationId, session.json, new Date().toISOString()],
    );
  }

  /** @inheritdoc */
  async verifyChains(options: { operationId?: string } = {}): Promise<ChainVerification> {
    this.ensureOpen();
    // The audit source reads each operation in one snapshot, so a concurrent append cannot look like a cut tail.
    return verifyChainsOf(this.auditSource(), options, this.hmacKey);
  }

  /** @inheritdoc */
  auditSource(): AuditSource {
    return new SqlAuditSource(this.driver, () => this.ensureOpen());
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.driver.close();
  }

  private async rows<Row extends object>(sql: string, params: readonly SqlValue[]): Promise<Row[]> {
    this.ensureOpen();
    return (await this.driver.query<Row>(sql, params)).rows;
  }

  private ensureOpen(): void {
    if (this.closed) {
      throw new StoreError(
        'ASYNCJOB_ERR_STORE_CLOSED',
        `the ${this.driver.dialect.label} store was used after close()`,
      );
    }
  }
}

/** Migrates a freshly made store and returns it; closes it when the migration fails. */
export async function migrated<Store extends OperationStore>(store: Store): Promise<Store> {
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
