/** One versioned schema migration: applied once, in version order, recorded in `schema_migrations`. */
export interface Migration {
  /** Strictly increasing from 1. */
  readonly version: number;
  /** What it does, for `schema_migrations` and operators. */
  readonly name: string;
  /** The DDL, run inside the migration transaction. */
  readonly sql: string;
}
