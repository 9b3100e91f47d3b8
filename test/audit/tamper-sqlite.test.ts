import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll } from 'vitest';
import { APPEND_ONLY_TABLES } from '../../src/adapters/store/audit-source';
import { SQLITE_DIALECT } from '../../src/adapters/store/sql-dialect';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { generativeTamper } from './tamper-generative.contract';
import { tamperSuite, type TamperHarness } from './tamper.contract';

const root = mkdtempSync(join(tmpdir(), 'asyncjob-tamper-sqlite-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

async function harness(): Promise<TamperHarness> {
  const path = join(root, `store-${++counter}`, 'asyncjob.db');
  await (await openSqliteStore({ path })).close();
  const raw = new Database(path);
  return {
    location: `sqlite:${path}`,
    open: (options = {}) => openSqliteStore({ ...options, path }),
    async sql(statement) {
      raw.exec(statement);
    },
    async dropGuards() {
      for (const t of [
        'journal_no_update',
        'journal_no_delete',
        'artifacts_no_update',
        'artifacts_no_delete',
        'audit_checkpoints_no_update',
        'audit_checkpoints_no_delete',
      ]) {
        raw.exec(`DROP TRIGGER IF EXISTS ${t}`);
      }
    },
    async sqlUnchecked(statement, params = []) {
      raw.pragma('foreign_keys = OFF');
      try {
        if (params.length === 0) raw.exec(statement);
        else raw.prepare(statement).run(...params);
      } finally {
        raw.pragma('foreign_keys = ON');
      }
    },
    async rows(statement, params = []) {
      return raw.prepare(statement).all(...params) as Record<string, unknown>[];
    },
    async restoreGuards() {
      for (const table of APPEND_ONLY_TABLES) raw.exec(SQLITE_DIALECT.appendOnly(table));
    },
    async cleanup() {
      raw.close();
    },
  };
}

tamperSuite('SQLite', harness);
generativeTamper('SQLite', harness);
