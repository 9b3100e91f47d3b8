/**
 * The bulk fill of figure 6 (not timed as steps): the filled operations' rows written by bulk SQL, SQLite one
 * transaction of prepared statements, PostgreSQL multi-row INSERT from JSON.
 */
import { closeSync, fsyncSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Client } from 'pg';
import type { ChainKey } from '../../../src/adapters/store/chain';
import {
  filledRows,
  JOB_COLUMNS,
  JOURNAL_COLUMNS,
  OPERATION_COLUMNS,
  type FilledRows,
  type MarkedTemplate,
} from './filled-rows';
import type { FilledOperation } from './template';

/** PostgreSQL fill: operations per INSERT (10,000 journal rows). */
export const PG_BATCH_OPERATIONS = 100;

const marks = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/**
 * Fills a migrated SQLite file on a connection of its own: one transaction of prepared statements, with a
 * rollback journal in memory and a large cache for the fill only; the file is left in WAL mode, as the store
 * leaves it.
 */
export function fillSqlite(
  file: string,
  template: MarkedTemplate,
  ops: readonly FilledOperation[],
  key: ChainKey,
): void {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -1048576');
    const operation = db.prepare(`INSERT INTO operations (${OPERATION_COLUMNS}) VALUES (${marks(13)})`);
    const entry = db.prepare(`INSERT INTO journal (${JOURNAL_COLUMNS}) VALUES (${marks(14)})`);
    const job = db.prepare(`INSERT INTO operation_jobs (${JOB_COLUMNS}) VALUES (${marks(3)})`);
    db.transaction(() => {
      for (const op of ops) {
        const rows = filledRows(template, op, key);
        operation.run(...rows.operation);
        for (const row of rows.journal) entry.run(...row);
        job.run(...rows.job);
      }
    })();
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
  // On disk before the steps: the fill wrote with synchronous = OFF, and a step's checkpoint must not pay its fsync.
  const fd = openSync(file, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** `INSERT ... SELECT` from one JSON array of rows (JSON.stringify is native: far cheaper than array literals). */
function insertFromJson(table: string, columns: string, types: readonly string[]): string {
  const cells = types.map((type, i) => `(r->>${i})::${type}`).join(', ');
  return `INSERT INTO ${table} (${columns}) SELECT ${cells} FROM jsonb_array_elements($1::jsonb) AS r`;
}

/** The column types, in the order of the column lists above. */
const OPERATION_TYPES = 'text text text jsonb text bigint text bigint text text text bigint text'.split(' ');
const JOURNAL_TYPES = 'text bigint text text text text text text text text int text text text'.split(' ');
const INSERT_OPERATIONS = insertFromJson('operations', OPERATION_COLUMNS, OPERATION_TYPES);
const INSERT_JOURNAL = insertFromJson('journal', JOURNAL_COLUMNS, JOURNAL_TYPES);
const INSERT_JOBS = insertFromJson('operation_jobs', JOB_COLUMNS, ['text', 'text', 'text']);

async function insertBatch(client: Client, batch: readonly FilledRows[]): Promise<void> {
  await client.query(INSERT_OPERATIONS, [JSON.stringify(batch.map((rows) => rows.operation))]);
  await client.query(INSERT_JOURNAL, [JSON.stringify(batch.flatMap((rows) => rows.journal))]);
  await client.query(INSERT_JOBS, [JSON.stringify(batch.map((rows) => rows.job))]);
}

/**
 * Fills a migrated PostgreSQL schema in one transaction: multi-row INSERTs from JSON arrays of rows, the next
 * batch generated while the server writes the last; then VACUUM ANALYZE, so the steps meet current statistics and
 * no autovacuum of the bulk fill (which production's steady trickle of inserts would not cause) runs among them.
 */
export async function fillPostgres(
  client: Client,
  template: MarkedTemplate,
  ops: readonly FilledOperation[],
  key: ChainKey,
) {
  await client.query('BEGIN');
  try {
    let pending: Promise<void> = Promise.resolve();
    for (let i = 0; i < ops.length; i += PG_BATCH_OPERATIONS) {
      const batch = ops.slice(i, i + PG_BATCH_OPERATIONS).map((op) => filledRows(template, op, key));
      await pending;
      pending = insertBatch(client, batch);
    }
    await pending;
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
  await client.query('VACUUM ANALYZE operations, journal, operation_jobs');
  // Written out before the steps, so no step meets the fill's dirty buffers (needs a superuser: else skipped).
  await client.query('CHECKPOINT').catch(() => undefined);
}
