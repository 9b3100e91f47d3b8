/** The PostgreSQL rendering of the one migration list ({@link SCHEMA_MIGRATIONS}), for the doctor and for tests. */
import { POSTGRES_DIALECT } from '../sql-dialect';
import { renderMigrations, type Migration } from './migration';
import { SCHEMA_MIGRATIONS } from './schema';

/** The PostgreSQL migrations, in version order. */
export const POSTGRES_MIGRATIONS: readonly Migration[] = renderMigrations(SCHEMA_MIGRATIONS, POSTGRES_DIALECT);
