/**
 * What differs between the two engines' SQL, and nothing else: column types, table options, the append-only
 * triggers, the row lock an append takes. Everything else (every query, every migration's shape) is written
 * once, with `?` placeholders, in `sql-store.ts`, `sql-writes.ts`, `sql-audit.ts` and `migrations/schema.ts`.
 * Pure data: importable by the doctor without opening a database.
 */

/** The engine-specific fragments of asyncjob's SQL. */
export interface SqlDialect {
  /** The engine's name in messages. */
  readonly label: 'SQLite' | 'PostgreSQL';
  /**
   * Appended to the SELECT of the row an append is about to change. PostgreSQL locks that row, which serialises
   * the writers of one operation; SQLite's BEGIN IMMEDIATE already holds the whole database's write lock.
   */
  readonly lockRow: string;
  /** A 64-bit integer column (SQLite's INTEGER is 64-bit; STRICT tables accept no other name). */
  readonly bigint: string;
  /** The column type of a JSON list. */
  readonly json: string;
  /** The default of a JSON list column: the empty list. */
  readonly emptyJsonList: string;
  /** After a table's closing parenthesis: SQLite checks column types (STRICT). */
  readonly tableOptions: string;
  /** After the closing parenthesis of a table looked up by its primary key only (SQLite: no rowid). */
  readonly keyedTableOptions: string;
  /** The `applied_at` column of the migration ledger, as each engine first created it. */
  readonly appliedAtColumn: string;
  /** The size in bytes of a text column's value. */
  byteLength(column: string): string;
  /** What the append-only triggers call, created once by migration 1 (SQLite raises inline: empty). */
  readonly refuseChangeFunction: string;
  /** The triggers refusing UPDATE and DELETE (and TRUNCATE where the engine has it) of `table`. */
  appendOnly(table: string): string;
  /**
   * Lists the triggers of the store's schema as rows `{ name, table_name, definition, body, enabled }`:
   * `definition` says when the trigger fires, `body` what it does (SQLite: both its CREATE statement;
   * PostgreSQL: `pg_get_triggerdef` and its function's source); `enabled` is `D` when disabled.
   */
  readonly triggersSql: string;
}

/** SQLite (better-sqlite3). */
export const SQLITE_DIALECT: SqlDialect = {
  label: 'SQLite',
  lockRow: '',
  bigint: 'INTEGER',
  json: 'TEXT',
  emptyJsonList: "'[]'",
  tableOptions: ' STRICT',
  keyedTableOptions: ' STRICT, WITHOUT ROWID',
  appliedAtColumn: 'TEXT NOT NULL',
  byteLength: (column) => `length(CAST(${column} AS BLOB))`,
  refuseChangeFunction: '',
  appendOnly: (table) =>
    ['UPDATE', 'DELETE']
      .map(
        (change) =>
          `CREATE TRIGGER ${table}_no_${change.toLowerCase()} BEFORE ${change} ON ${table}\n` +
          `BEGIN SELECT RAISE(ABORT, 'ASYNCJOB_ERR_APPEND_ONLY: ${table} is append-only; ${change} refused'); END;\n`,
      )
      .join(''),
  triggersSql:
    "SELECT name, tbl_name AS table_name, sql AS definition, sql AS body, 'O' AS enabled FROM sqlite_master WHERE type = 'trigger'",
};

/** PostgreSQL (pg). */
export const POSTGRES_DIALECT: SqlDialect = {
  label: 'PostgreSQL',
  lockRow: ' FOR UPDATE',
  bigint: 'BIGINT',
  json: 'JSONB',
  emptyJsonList: "'[]'::jsonb",
  tableOptions: '',
  keyedTableOptions: '',
  appliedAtColumn: 'TIMESTAMPTZ NOT NULL DEFAULT now()',
  byteLength: (column) => `octet_length(${column})`,
  refuseChangeFunction: `CREATE FUNCTION asyncjob_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION 'ASYNCJOB_ERR_APPEND_ONLY: % is append-only; % refused', TG_TABLE_NAME, TG_OP;
END;
$fn$;
`,
  appendOnly: (table) =>
    [
      ['update', 'UPDATE', 'ROW'],
      ['delete', 'DELETE', 'ROW'],
      ['truncate', 'TRUNCATE', 'STATEMENT'],
    ]
      .map(
        ([name, change, scope]) =>
          `CREATE TRIGGER ${table}_no_${name} BEFORE ${change} ON ${table} FOR EACH ${scope} EXECUTE FUNCTION asyncjob_refuse_change();\n`,
      )
      .join(''),
  triggersSql: `SELECT t.tgname AS name, c.relname AS table_name, pg_get_triggerdef(t.oid) AS definition, p.prosrc AS body, t.tgenabled AS enabled
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_proc p ON p.oid = t.tgfoid
  WHERE n.nspname = current_schema() AND NOT t.tgisinternal`,
};
