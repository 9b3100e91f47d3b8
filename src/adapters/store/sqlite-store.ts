/**
 * The embedded default engine: the operation store ({@link SqlOperationStore}) on one SQLite file
 * (`.asyncjob/asyncjob.db` by default) through better-sqlite3 ({@link SqliteDriver}: WAL, busy timeout,
 * foreign keys, BEGIN IMMEDIATE for every write, so two processes appending to one operation take turns; the
 * WAL checkpointed by a thread of its own, never inside a commit).
 */
import { type OperationStoreOptions } from './operation-store';
import { SqliteDriver, type SqliteWalStatus } from './sqlite-driver';
import { migrated, SqlOperationStore } from './sql-store';

export { SQLITE_CHECKPOINTER_DEFAULTS, type SqliteWalStatus } from './sqlite-driver';

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
  /**
   * How often the background checkpointer copies the WAL into the database file, in ms. Default 1000; 0 leaves
   * checkpoints to SQLite, inside the commit that takes the WAL past 1,000 pages.
   */
  readonly checkpointIntervalMs?: number;
  /**
   * The WAL size, bytes, past which the checkpointer finishes a checkpoint between two of this process's
   * transactions, so the next commit starts the WAL again. Default 64 MiB.
   */
  readonly walLimitBytes?: number;
}

/** The SQLite {@link OperationStore}. Use {@link openSqliteStore} to open and migrate. */
export class SqliteOperationStore extends SqlOperationStore {
  private readonly sqlite: SqliteDriver;

  /** Opens the file, sets WAL, busy timeout and foreign keys, starts the checkpointer; call `migrate()` before use. */
  constructor(options: SqliteStoreOptions = {}) {
    const driver = new SqliteDriver({
      path: options.path ?? DEFAULT_SQLITE_PATH,
      fileMustExist: options.fileMustExist,
      busyTimeoutMs: options.busyTimeoutMs,
      checkpointIntervalMs: options.checkpointIntervalMs,
      walLimitBytes: options.walLimitBytes,
    });
    super(driver, options);
    this.sqlite = driver;
  }

  /** What the WAL checkpointer has done since the store opened. Cheap (shared counters); safe at any time. */
  walStatus(): SqliteWalStatus {
    return this.sqlite.walStatus();
  }
}

/** Opens a SQLite store and applies pending migrations. */
export async function openSqliteStore(options: SqliteStoreOptions = {}): Promise<SqliteOperationStore> {
  return migrated(new SqliteOperationStore(options));
}
