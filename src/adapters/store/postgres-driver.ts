/**
 * The PostgreSQL {@link SqlDriver}: a `pg` Pool on a connection string, optionally bound to one schema
 * (`search_path`). A transaction holds one pooled client; the row locks that serialise the writers of one
 * operation are the store's (`SELECT ... FOR UPDATE`, {@link SqlDialect.lockRow}). Migrations take a
 * transaction-scoped advisory lock.
 */
import { Client, Pool, type ClientConfig, type PoolClient } from 'pg';
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

/** A plain lower-case identifier: a schema or a channel name, used in SQL as written. */
const PLAIN_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** How often a listening connection is asked whether it still answers, and how long it has to answer, ms. */
const LISTEN_CHECK_MS = 15_000;

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
  private readonly connectionConfig: ClientConfig;
  private readonly schema: string | undefined;
  private readonly numbered = new Map<string, string>();

  /** Creates the pool (no connection yet). Throws `ASYNCJOB_ERR_STORE_LOCATION` for a schema name that is not plain. */
  constructor(options: PostgresConnectionOptions) {
    if (options.schema !== undefined && !PLAIN_NAME.test(options.schema)) {
      throw new StoreError('ASYNCJOB_ERR_STORE_LOCATION', `schema must match ${PLAIN_NAME.source}`, [
        { path: 'schema', message: 'not a plain lower-case identifier' },
      ]);
    }
    this.schema = options.schema;
    // The schema is a startup parameter of every connection, so no statement can ever run outside it.
    this.connectionConfig = {
      connectionString: options.connectionString,
      ...(this.schema === undefined ? {} : { options: `-c search_path=${this.schema}` }),
    };
    this.pool = new Pool({ ...this.connectionConfig, max: options.maxConnections ?? 10 });
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

  /**
   * Sends `fields` as a JSON object, with the `schema` it was sent in, to every connection listening on `channel`
   * (`pg_notify`, delivered when the statement ends). A channel is the database's, whatever the schema: listeners
   * compare the schema with their own.
   */
  async notify(channel: string, fields: Record<string, string>): Promise<void> {
    const payload = "jsonb_set($2::jsonb, '{schema}', to_jsonb(current_schema()))::text";
    await this.pool.query(`SELECT pg_notify($1, ${payload})`, [channel, JSON.stringify(fields)]);
  }

  /**
   * Listens on `channel` on a connection of its own (a pooled one would be handed to others), calling `onPayload`
   * for each notification, with the schema of the listening connection. A connection lost or not made is reported
   * to `onError` and made again after 1 s, doubling to 30 s; what was sent meanwhile is not delivered. A connection
   * that went silent (a half-open one after a partition or an idle timeout raises nothing) is found by asking it
   * every {@link LISTEN_CHECK_MS}: no answer within that is a lost connection. Resolves after the first attempt; its
   * result stops listening.
   */
  async listen(
    channel: string,
    onPayload: (payload: string, schema: string) => void,
    onError: (err: Error) => void,
  ): Promise<() => Promise<void>> {
    if (!PLAIN_NAME.test(channel)) throw new Error(`not a plain channel name: ${channel}`);
    let stopped = false;
    let current: Client | undefined;
    let retryTimer: NodeJS.Timeout | undefined;
    let delayMs = 1_000;
    let schema = '';
    const close = (client: Client) => {
      client.removeAllListeners();
      // A closing connection may still report an error; with no listener, that would end the process.
      client.on('error', () => undefined);
      return client.end().catch(() => undefined);
    };
    const connect = async (): Promise<void> => {
      // Named, so an operator sees in pg_stat_activity what the connection is for.
      const name = `asyncjob loop wakes${this.schema !== undefined ? ` ${this.schema}` : ''}`;
      const client = new Client({
        ...this.connectionConfig,
        application_name: name,
        keepAlive: true,
        keepAliveInitialDelayMillis: LISTEN_CHECK_MS,
      });
      let gone = false;
      // pg may report one loss twice (an error event and the query it failed; an end event before a refused
      // connect's rejection): the first report stands.
      const lost = (err: Error) => {
        if (gone) return;
        gone = true;
        void close(client);
        if (current === client) current = undefined;
        if (stopped) return;
        onError(err);
        clearTimeout(retryTimer);
        retryTimer = setTimeout(() => void connect(), delayMs);
        delayMs = Math.min(delayMs * 2, 30_000);
      };
      client.on('error', lost);
      client.on('end', () => lost(new Error(`the connection listening on ${channel} ended`)));
      client.on('notification', (message) => {
        if (message.channel === channel && message.payload !== undefined) onPayload(message.payload, schema);
      });
      try {
        await client.connect();
        schema = (await client.query<{ schema: string }>('SELECT current_schema() AS schema')).rows[0]!.schema;
        await client.query(`LISTEN ${channel}`);
      } catch (err) {
        return lost(err instanceof Error ? err : new Error(String(err)));
      }
      if (stopped) return void (await close(client));
      current = client;
      delayMs = 1_000;
    };
    const check = () => {
      const client = current;
      if (client === undefined) return;
      const silent = setTimeout(
        () => client.emit('error', new Error(`no answer on ${channel} in time`)),
        LISTEN_CHECK_MS,
      ).unref();
      client.query('SELECT 1').then(
        () => clearTimeout(silent),
        () => clearTimeout(silent),
      );
    };
    await connect();
    const checkTimer = setInterval(check, LISTEN_CHECK_MS).unref();
    return async () => {
      stopped = true;
      clearTimeout(retryTimer);
      clearInterval(checkTimer);
      const client = current;
      current = undefined;
      if (client) await close(client);
    };
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
