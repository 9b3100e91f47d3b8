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
 *
 * No commit checkpoints the WAL. SQLite's automatic checkpoint runs inside the commit that takes the WAL past
 * 1,000 pages: that commit copies them into the database file and fsyncs both files, tens of ms on the
 * worker's thread (one provider step in ~80 paid it at 1,000,000 journal entries). Once the WAL file has
 * reached 1 MiB (a store that writes little never gets there: a CLI command, a test), the connection turns it
 * off (`wal_autocheckpoint = 0`) and a {@link WalCheckpointer} thread of its own checkpoints instead. That
 * thread's connection blocks only that thread when it waits; it takes the write lock (to finish a checkpoint)
 * only in a turn of this file's queue, when no transaction of this process is open, so it never holds a lock
 * the worker's thread is blocked on while it waits for that thread.
 */
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_DIALECT } from './sql-dialect';
import { type SqlDriver, type SqlResult, type SqlSession, type SqlValue, type TransactionMode } from './sql-driver';
import { SQLITE_CHECKPOINTER_DEFAULTS, WalCheckpointer, type SqliteWalStatus } from './sqlite-checkpointer';
import { StoreError } from './store-errors';

export { SQLITE_CHECKPOINTER_DEFAULTS, type SqliteWalStatus };

/** How the SQLite connection is opened. */
export interface SqliteConnectionOptions {
  /** The database file, or `:memory:`. Its directory is created unless `fileMustExist`. */
  readonly path: string;
  /** Refuse to create a missing file. */
  readonly fileMustExist?: boolean;
  /** How long a write waits for another process's lock, in ms. Default 10000. */
  readonly busyTimeoutMs?: number;
  /**
   * How often the background checkpointer copies the WAL into the database file, in ms. Default 1000. 0: no
   * background checkpointer; SQLite's automatic checkpoint then runs inside the commit that takes the WAL past
   * 1,000 pages (SQLite's default behaviour).
   */
  readonly checkpointIntervalMs?: number;
  /**
   * The WAL size, in bytes, past which the checkpointer takes one turn between this process's transactions to
   * finish the checkpoint, so that the next commit starts the WAL again, when writes came too close together for
   * it to finish between them. Default 64 MiB.
   */
  readonly walLimitBytes?: number;
}

const BEGIN: Record<TransactionMode, string> = { write: 'BEGIN IMMEDIATE', snapshot: 'BEGIN DEFERRED' };

const DEFAULT_CHECKPOINT_INTERVAL_MS = SQLITE_CHECKPOINTER_DEFAULTS.intervalMs;
const DEFAULT_WAL_LIMIT_BYTES = SQLITE_CHECKPOINTER_DEFAULTS.walLimitBytes;
/** SQLite's own automatic checkpoint threshold, in pages: restored if the checkpointer thread fails. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1_000;
/**
 * The WAL file size that starts the checkpointer, bytes: about 250 pages, a quarter of SQLite's threshold, so the
 * thread is checkpointing before a commit would. A thread costs ~40 ms of CPU to start.
 */
const CHECKPOINTER_START_BYTES = SQLITE_CHECKPOINTER_DEFAULTS.startBytes;
/** Calls between two looks at the WAL file's size while the checkpointer waits to start. */
const CALLS_PER_WAL_LOOK = 16;

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

/**
 * Puts the file in WAL mode (kept in the file once set) and says whether it is. Two processes opening a new file at
 * once can get SQLITE_BUSY from the journal-mode change at once, without the busy timeout's wait (SQLite does not
 * wait where waiting could deadlock), so it is tried again every 10 ms until the busy timeout has passed. The wait
 * blocks the thread: it happens only while a store is opened.
 */
function walModeSet(db: Database.Database, busyTimeoutMs: number): boolean {
  const giveUpAtMs = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      return db.pragma('journal_mode = WAL', { simple: true }) === 'wal';
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= giveUpAtMs) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/** better-sqlite3 under the operation store. */
export class SqliteDriver implements SqlDriver {
  readonly dialect = SQLITE_DIALECT;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /** Names the database file for the queue: its real path (or a name of its own for a private database). */
  private readonly file: string;
  /** How the checkpointer will run, until it starts; undefined when there is none to start. */
  private checkpointerPlan: { intervalMs: number; walLimitBytes: number } | undefined;
  private checkpointer: WalCheckpointer | undefined;
  private checkpointerFailed = false;
  private callsSinceWalLook = 0;
  private readonly session: SqlSession = {
    query: async <Row extends object>(sql: string, params: readonly SqlValue[] = []) => this.run<Row>(sql, params),
    script: async (sql: string) => {
      this.db.exec(sql);
    },
  };

  /**
   * Opens the file (creating its directory unless it must exist) and sets WAL, busy timeout and foreign keys.
   * Unless `checkpointIntervalMs` is 0, the background checkpointer starts once the WAL file reaches 1 MiB.
   */
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
    const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 10_000));
    this.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    const wal = walModeSet(this.db, busyTimeoutMs);
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    const isPrivate = this.db.memory || path === '';
    this.file = isPrivate ? `private:${++privateDatabases}` : realpathSync(path);
    const intervalMs = Math.floor(options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS);
    if (wal && !isPrivate && intervalMs > 0)
      this.checkpointerPlan = {
        intervalMs,
        walLimitBytes: Math.max(1, options.walLimitBytes ?? DEFAULT_WAL_LIMIT_BYTES),
      };
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
      this.prepared(BEGIN[mode]).run();
      try {
        const result = await work(this.session);
        this.prepared('COMMIT').run();
        return result;
      } catch (err) {
        if (this.db.inTransaction) this.prepared('ROLLBACK').run();
        throw err;
      }
    });
  }

  /** Nothing beyond BEGIN IMMEDIATE: it already makes a second migrating process wait. */
  async beforeMigrations(): Promise<void> {}

  /** What the background checkpointer has done since the connection opened. */
  walStatus(): SqliteWalStatus {
    const counted = this.checkpointer?.status();
    const checkpointer = this.checkpointerFailed
      ? 'failed'
      : counted?.running
        ? 'running'
        : this.checkpointerPlan && this.db.open
          ? 'waiting'
          : 'off';
    return {
      checkpointer,
      passiveCheckpoints: counted?.passiveCheckpoints ?? 0,
      turns: counted?.turns ?? 0,
      restarts: counted?.restarts ?? 0,
      walFrames: counted?.walFrames ?? 0,
      walFramesMax: counted?.walFramesMax ?? 0,
      walFramesCopied: counted?.walFramesCopied ?? 0,
      errors: counted?.errors ?? 0,
    };
  }

  /** Stops the checkpointer, then closes the connection, once calls under way have finished. */
  async close(): Promise<void> {
    await this.inTurn(async () => {
      this.checkpointerPlan = undefined;
      await this.checkpointer?.stop();
      this.db.close();
    });
  }

  /** Starts the checkpointer once the WAL file has reached {@link CHECKPOINTER_START_BYTES}. */
  private startCheckpointerWhenDue(): void {
    const plan = this.checkpointerPlan;
    if (plan === undefined || this.checkpointer !== undefined || ++this.callsSinceWalLook < CALLS_PER_WAL_LOOK) return;
    this.callsSinceWalLook = 0;
    const walBytes = statSync(`${this.file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    if (walBytes < CHECKPOINTER_START_BYTES) return;
    // Off before the thread starts, not when it says it is ready: a caller that never yields to the event loop
    // would never hear it. Until the thread's first checkpoint, the WAL only grows.
    this.db.pragma('wal_autocheckpoint = 0');
    this.checkpointer = new WalCheckpointer(
      this.file,
      plan,
      (work) => this.inTurn(work),
      () => this.checkpointerLost(),
    );
  }

  /** The checkpointer thread failed: the WAL is bounded again by SQLite's automatic checkpoint, in commits. */
  private checkpointerLost(): void {
    this.checkpointerFailed = true;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  }

  private run<Row>(sql: string, params: readonly SqlValue[]): SqlResult<Row> {
    const statement = this.prepared(sql);
    if (statement.reader) return { rows: statement.all(...params) as Row[], changes: 0 };
    return { rows: [], changes: statement.run(...params).changes };
  }

  /** Prepared statements are cached (BEGIN and COMMIT too): preparing costs more than running a small insert. */
  private prepared(sql: string): Database.Statement {
    let cached = this.statements.get(sql);
    if (cached === undefined) {
      cached = this.db.prepare(sql);
      this.statements.set(sql, cached);
    }
    return cached;
  }

  private inTurn<T>(call: () => Promise<T>): Promise<T> {
    return inTurn(this.file, async () => {
      try {
        return await call();
      } finally {
        if (this.db.open) this.startCheckpointerWhenDue();
      }
    });
  }
}
