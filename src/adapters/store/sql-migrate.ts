/** Applies pending schema migrations through a {@link SqlDriver}, the same way on both engines. */
import { renderMigrations } from './migrations/migration';
import { migrationLedgerSql, SCHEMA_MIGRATIONS } from './migrations/schema';
import { type SqlDriver } from './sql-driver';

/**
 * Applies every migration not yet recorded in `schema_migrations`, in version order, all in one write
 * transaction (all or none). Safe when two processes start at once: the second waits for the first's lock
 * (SQLite BEGIN IMMEDIATE, PostgreSQL an advisory lock), then finds nothing left to do. Idempotent.
 */
export async function migrateSchema(driver: SqlDriver): Promise<void> {
  const migrations = renderMigrations(SCHEMA_MIGRATIONS, driver.dialect);
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
