/**
 * The SQLite {@link SqlDriver}: one better-sqlite3 connection to one file, in WAL mode with a busy timeout and
 * foreign keys on. A write transaction is BEGIN IMMEDIATE, which takes the database's write lock before
 * anything is read: two processes appending to one operation take turns on that lock.
 *
 * Within one process, every call on one database file waits for the previous one to finish, whichever
 * connection makes it. The store's methods are async, so a transaction's statements are separated by awaits:
 * a second call on the same connection must not run inside the first one's transaction, and a second
 * connection's BEGIN IMMEDIATE must not start while the first holds the lock, because better-sqlite3 waits for
 * a lock by blocking the thread, and the holder could then never reach its COMMIT (a deadlock until the busy
 * timeout). Another process waiting for the lock blocks only its own thread.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_DIALECT } from './sql-dialect';
import { type SqlDriver, type SqlResult, type SqlSession, type SqlValue, type TransactionMode } from './sql-driver';
import { StoreError } from './store-errors';

/** How the SQLite connection is opened. */
export interface SqliteConnectionOptions {
  /** The database file, or `:memory:`. Its directory is created unless `fileMustExist`. */
  readonly path: string;
  /** Refuse to create a missing file. */
  readonly fileMustExist?: boolean;
  /** How long a write waits for another process's lock, in ms. Default 10000. */
  readonly busyTimeoutMs?: number;
}

const BEGIN: Record<TransactionMode, string> = { write: 'BEGIN IMMEDIATE', snapshot: 'BEGIN DEFERRED' };

/** The last queued call per database file of this process; an entry is removed once its queue is empty. */
const queueTails = new Map<string, Promise<unknown>>();
let privateDatabases = 0;

/** Runs `call` once every call queued before it on `file` has finished. */
function inTurn<T>(file: string, call: () => Promise<T>): Promise<T> {
  const turn = (queueTails.get(file) ?? Promise.resolve()).then(call);
  const tail = turn.then(
    () => undefined,
    () => undefined,
  );
  queueTails.set(file, tail);
  void tail.then(() => {
    if (queueTails.get(file) === tail) queueTails.delete(file);
  });
  return turn;
}

/** better-sqlite3 under the operation store. */
export class SqliteDriver implements SqlDriver {
  readonly dialect = SQLITE_DIALECT;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /** Names the database file for the queue: its real path (or a name of its own for a private database). */
  private readonly file: string;
  private readonly session: SqlSession = {
    query: async <Row extends object>(sql: string, params: readonly SqlValue[] = []) => this.run<Row>(sql, params),
    script: async (sql: string) => {
      this.db.exec(sql);
    },
  };

  /** Opens the file (creating its directory unless it must exist) and sets WAL, busy timeout and foreign keys. */
  constructor(options: SqliteConnectionOptions) {
    const { path } = options;
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
    this.file = this.db.memory || path === '' ? `private:${++privateDatabases}` : realpathSync(path);
  }

  /** @inheritdoc */
  async query<Row extends object = Record<string, unknown>>(
    sql: string,
    params: readonly SqlValue[] = [],
  ): Promise<SqlResult<Row>> {
    return this.inTurn(async () => this.run<Row>(sql, params));
  }

  /** @inheritdoc */
  async script(sql: string): Promise<void> {
    return this.inTurn(async () => this.session.script(sql));
  }

  /** @inheritdoc */
  async transaction<T>(mode: TransactionMode, work: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.inTurn(async () => {
      this.db.exec(BEGIN[mode]);
      try {
        const result = await work(this.session);
        this.db.exec('COMMIT');
        return result;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  /** Nothing beyond BEGIN IMMEDIATE: it already makes a second migrating process wait. */
  async beforeMigrations(): Promise<void> {}

  /** @inheritdoc */
  async close(): Promise<void> {
    await this.inTurn(async () => this.db.close());
  }

  private run<Row>(sql: string, params: readonly SqlValue[]): SqlResult<Row> {
    const statement = this.prepared(sql);
    if (statement.reader) return { rows: statement.all(...params) as Row[], changes: 0 };
    return { rows: [], changes: statement.run(...params).changes };
  }

  /** Prepared statements are cached: preparing costs more than running a small insert. */
  private prepared(sql: string): Database.Statement {
    let cached = this.statements.get(sql);
    if (cached === undefined) {
      cached = this.db.prepare(sql);
      this.statements.set(sql, cached);
    }
    return cached;
  }

  private inTurn<T>(call: () => Promise<T>): Promise<T> {
    return inTurn(this.file, call);
  }
}
