/** Applies pending schema migrations through a {@link SqlDriver}, the same way on both engines. */
import { renderMigrations, type Migration } from './migrations/migration';
import { migrationLedgerSql, SCHEMA_MIGRATIONS } from './migrations/schema';
import { type SqlDriver } from './sql-driver';

/**
 * Applies every migration not yet recorded in `schema_migrations`, in version order, all in one write
 * transaction (all or none). Safe when two processes start at once: the second waits for the first's lock
 * (SQLite BEGIN IMMEDIATE, PostgreSQL an advisory lock), then finds nothing left to do. Idempotent. A store that
 * has every migration is opened with one read: a role that may read but not create (an agent's, an auditor's)
 * opens it, and no process takes the write lock to find nothing to do.
 */
export async function migrateSchema(driver: SqlDriver): Promise<void> {
  const migrations = renderMigrations(SCHEMA_MIGRATIONS, driver.dialect);
  if (await allApplied(driver, migrations)) return;
  await driver.transaction('write', async (session) => {
    await driver.beforeMigrations(session);
    await session.script(migrationLedgerSql(driver.dialect));
    const recorded = await session.query<{ version: number | string }>('SELECT version FROM schema_migrations');
    const applied = new Set(recorded.rows.map((row) => Number(row.version)));
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await session.script(migration.sql);
      await session.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
        migration.version,
        migration.name,
        new Date().toISOString(),
      ]);
    }
  });
}

/** Whether the ledger records every migration; false when it cannot be read (a new store: the write says why). */
async function allApplied(driver: SqlDriver, migrations: readonly Migration[]): Promise<boolean> {
  try {
    const recorded = await driver.query<{ version: number | string }>('SELECT version FROM schema_migrations');
    const applied = new Set(recorded.rows.map((row) => Number(row.version)));
    return migrations.every((migration) => applied.has(migration.version));
  } catch {
    return false;
  }
}
