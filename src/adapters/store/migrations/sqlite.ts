/** The SQLite rendering of the one migration list ({@link SCHEMA_MIGRATIONS}), for the doctor and for tests. */
import { SQLITE_DIALECT } from '../sql-dialect';
import { renderMigrations, type Migration } from './migration';
import { SCHEMA_MIGRATIONS } from './schema';

/** The SQLite migrations, in version order. */
export const SQLITE_MIGRATIONS: readonly Migration[] = renderMigrations(SCHEMA_MIGRATIONS, SQLITE_DIALECT);
