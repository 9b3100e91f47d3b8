/**
 * The small interface the one SQL operation store (`sql-store.ts`) runs on. A driver owns how a connection is
 * opened, how placeholders are bound, how a transaction begins and locks, and its engine's {@link SqlDialect};
 * the store owns every query. Implemented by `SqliteDriver` (better-sqlite3) and `PostgresDriver` (pg).
 */
import { type SqlDialect } from './sql-dialect';

/** A value bound to a `?` placeholder. */
export type SqlValue = string | number | null;

/** What a statement returned: its rows (none for a write) and how many rows it changed (0 for a read). */
export interface SqlResult<Row> {
  readonly rows: Row[];
  readonly changes: number;
}

/** Runs statements on one connection; inside a transaction, on the transaction's. */
export interface SqlSession {
  /** One statement with `?` placeholders. BIGINT columns may come back as strings (PostgreSQL). */
  query<Row extends object = Record<string, unknown>>(
    sql: string,
    params?: readonly SqlValue[],
  ): Promise<SqlResult<Row>>;
  /** Several statements without parameters (a migration's DDL). */
  script(sql: string): Promise<void>;
}

/**
 * How a transaction begins. `write`: the engine's write transaction (SQLite BEGIN IMMEDIATE takes the database's
 * write lock before anything is read; PostgreSQL locks rows as the statements ask). `snapshot`: every read sees
 * one consistent snapshot (SQLite: one WAL snapshot; PostgreSQL: REPEATABLE READ, READ ONLY).
 */
export type TransactionMode = 'write' | 'snapshot';

/** One engine under the operation store. A statement outside `transaction` runs on its own (autocommit). */
export interface SqlDriver extends SqlSession {
  /** The engine's SQL fragments. */
  readonly dialect: SqlDialect;
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. `work` must use the
   * session it is given, never the driver (SQLite runs one call at a time on its single connection).
   */
  transaction<T>(mode: TransactionMode, work: (session: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Runs first inside the migration's write transaction: whatever else makes two processes migrating one
   * database take turns (PostgreSQL: create the schema, take an advisory lock; SQLite: nothing more).
   */
  beforeMigrations(session: SqlSession): Promise<void>;
  /** Releases the connection(s) once calls under way have finished. Call once. */
  close(): Promise<void>;
}
