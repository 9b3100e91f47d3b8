/**
 * The embedded default engine: the operation store ({@link SqlOperationStore}) on one SQLite file
 * (`.asyncjob/asyncjob.db` by default) through better-sqlite3 ({@link SqliteDriver}: WAL, busy timeout,
 * foreign keys, BEGIN IMMEDIATE for every write, so two processes appending to one operation take turns).
 */
import { type OperationStoreOptions } from './operation-store';
import { SqliteDriver } from './sqlite-driver';
import { migrated, SqlOperationStore } from './sql-store';

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

/** The SQLite {@link OperationStore}. Use {@link openSqliteStore} to open and migrate. */
export class SqliteOperationStore extends SqlOperationStore {
  /** Opens the file and sets WAL, busy timeout and foreign keys; call `migrate()` before use. */
  constructor(options: SqliteStoreOptions = {}) {
    super(
      new SqliteDriver({
        path: options.path ?? DEFAULT_SQLITE_PATH,
        fileMustExist: options.fileMustExist,
        busyTimeoutMs: options.busyTimeoutMs,
      }),
      options,
    );
  }
}

/** Opens a SQLite store and applies pending migrations. */
export async function openSqliteStore(options: SqliteStoreOptions = {}): Promise<SqliteOperationStore> {
  return migrated(new SqliteOperationStore(options));
}
