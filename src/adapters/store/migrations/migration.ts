import { type SqlDialect } from '../sql-dialect';

/** One versioned schema migration as an engine runs it: applied once, in version order, recorded in `schema_migrations`. */
export interface Migration {
  /** Strictly increasing from 1. */
  readonly version: number;
  /** What it does, for `schema_migrations` and operators. */
  readonly name: string;
  /** The DDL, run inside the migration transaction. */
  readonly sql: string;
}

/** One migration written once for both engines: its DDL, given the engine's {@link SqlDialect}. */
export interface SchemaMigration {
  /** Strictly increasing from 1; the same number on both engines. */
  readonly version: number;
  /** What it does, for `schema_migrations` and operators. */
  readonly name: string;
  /** The DDL in the dialect's words. Pure. */
  sql(dialect: SqlDialect): string;
}

/** Renders migrations for one engine. Pure. */
export function renderMigrations(migrations: readonly SchemaMigration[], dialect: SqlDialect): readonly Migration[] {
  return migrations.map((migration) => ({
    version: migration.version,
    name: migration.name,
    sql: migration.sql(dialect),
  }));
}
