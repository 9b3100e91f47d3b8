/**
 * The PostgreSQL {@link SqlDriver}: a `pg` Pool on a connection string, optionally bound to one schema
 * (`search_path`). A transaction holds one pooled client; the row locks that serialise the writers of one
 * operation are the store's (`SELECT ... FOR UPDATE`, {@link SqlDialect.lockRow}). Migrations take a
 * transaction-scoped advisory lock.
 */
import { Pool, type PoolClient } from 'pg';
import { POSTGRES_DIALECT, type SqlDialect } from './sql-dialect';
import { type SqlDriver, type SqlResult, type SqlSession, type SqlValue, type TransactionMode } from './sql-driver';
import { StoreError } from './store-errors';

/** How the PostgreSQL pool connects. */
export interface PostgresConnectionOptions {
  /** `postgres://user@host:port/database`. */
  readonly connectionString: string;
  /** Schema holding the tables (created by the first migration run when missing). Default: the server's search_path. */
  readonly schema?: string;
  /** Pool size. Default 10. */
  readonly maxConnections?: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const BEGIN: Record<TransactionMode, string> = {
  write: 'BEGIN',
  snapshot: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
};

/** Rewrites `?` placeholders as `$1`, `$2`, ... (none of our statements has a `?` inside a quoted literal). Pure. */
export function numberedPlaceholders(sql: string): string {
  let count = 0;
  let quoted = false;
  let numbered = '';
  for (const char of sql) {
    if (char === "'") quoted = !quoted;
    numbered += char === '?' && !quoted ? `$${++count}` : char;
  }
  return numbered;
}

/** pg under the operation store. */
export class PostgresDriver implements SqlDriver {
  readonly dialect: SqlDialect = POSTGRES_DIALECT;
  private readonly pool: Pool;
  private readonly schema: string | undefined;
  private readonly numbered = new Map<string, string>();

  /** Creates the pool (no connection yet). Throws `ASYNCJOB_ERR_STORE_LOCATION` for a schema name that is not plain. */
  constructor(options: PostgresConnectionOptions) {
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
  }

  /** @inheritdoc */
  async query<Row extends object = Record<string, unknown>>(
    sql: string,
    params: readonly SqlValue[] = [],
  ): Promise<SqlResult<Row>> {
    const result = await this.pool.query<Row>(this.toNumbered(sql), [...params]);
    return { rows: result.rows, changes: result.rowCount ?? 0 };
  }

  /** @inheritdoc */
  async script(sql: string): Promise<void> {
    await this.pool.query(sql);
  }

  /** @inheritdoc */
  async transaction<T>(mode: TransactionMode, work: (session: SqlSession) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // A checked-out client's connection can die between statements (PostgreSQL restarted, a backend terminated):
    // pg then emits 'error' on the client, which would end the process with no listener (a worker crashed on a
    // PostgreSQL restart in the cluster run). The transaction fails on its next statement instead, and the broken
    // connection is destroyed on release, never handed out again.
    let broken: Error | undefined;
    const onError = (err: Error): void => {
      broken = err;
    };
    client.on('error', onError);
    try {
      await client.query(BEGIN[mode]);
      const result = await work(this.sessionOf(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken ??= rollbackError;
      });
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  /** @inheritdoc */
  async beforeMigrations(session: SqlSession): Promise<void> {
    if (this.schema !== undefined) {
      // CREATE SCHEMA IF NOT EXISTS races on the catalog; a lock keyed by the schema name serialises it.
      await session.query('SELECT pg_advisory_xact_lock(hashtext(?))', [`asyncjob:schema:${this.schema}`]);
      await session.script(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
    }
    await session.query("SELECT pg_advisory_xact_lock(hashtext('asyncjob:migrations:' || current_schema()))");
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    await this.pool.end();
  }

  private sessionOf(client: PoolClient): SqlSession {
    return {
      query: async <Row extends object>(sql: string, params: readonly SqlValue[] = []) => {
        const result = await client.query<Row>(this.toNumbered(sql), [...params]);
        return { rows: result.rows, changes: result.rowCount ?? 0 };
      },
      script: async (sql: string) => {
        await client.query(sql);
      },
    };
  }

  /** Rewritten once per statement text: the store runs the same few statements again and again. */
  private toNumbered(sql: string): string {
    let numbered = this.numbered.get(sql);
    if (numbered === undefined) {
      numbered = numberedPlaceholders(sql);
      this.numbered.set(sql, numbered);
    }
    return numbered;
  }
}
