/**
 * The PostgreSQL engine, for many workers and operators: the operation store ({@link SqlOperationStore}) on a
 * `pg` Pool ({@link PostgresDriver}), optionally bound to one schema. Appends lock the operation's head row
 * (`SELECT ... FOR UPDATE`) inside the write transaction, so concurrent writers to one operation take turns;
 * migrations run under a transaction-scoped advisory lock.
 */
import { type OperationStoreOptions } from './operation-store';
import { PostgresDriver, type PostgresConnectionOptions } from './postgres-driver';
import { migrated, SqlOperationStore } from './sql-store';

/** Options of the PostgreSQL engine. */
export interface PostgresStoreOptions extends OperationStoreOptions, PostgresConnectionOptions {}

/** The PostgreSQL {@link OperationStore}. Use {@link openPostgresStore} to open and migrate. */
export class PostgresOperationStore extends SqlOperationStore {
  /** Creates the pool (no connection yet); call `migrate()` before use. */
  constructor(options: PostgresStoreOptions) {
    super(new PostgresDriver(options), options);
  }
}

/** Opens a PostgreSQL store and applies pending migrations. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresOperationStore> {
  return migrated(new PostgresOperationStore(options));
}
