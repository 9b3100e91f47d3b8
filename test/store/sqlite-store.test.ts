import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { operationStoreContract, type StoreHarness } from './operation-store.contract';

const root = mkdtempSync(join(tmpdir(), 'asyncjob-sqlite-'));
let counter = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function harness(): Promise<StoreHarness> {
  const path = join(root, `store-${++counter}`, 'asyncjob.db');
  const store = await openSqliteStore({ path });
  const opened = [store];
  const raw = new Database(path);
  return {
    store,
    async open(options = {}) {
      const s = await openSqliteStore({ ...options, path });
      opened.push(s);
      return s;
    },
    async sql(statement) {
      raw.exec(statement);
    },
    async dropAppendOnlyTriggers() {
      for (const t of ['journal_no_update', 'journal_no_delete', 'artifacts_no_update', 'artifacts_no_delete'])
        raw.exec(`DROP TRIGGER ${t}`);
    },
    async cleanup() {
      raw.close();
      await Promise.all(opened.map((s) => s.close()));
    },
  };
}

operationStoreContract('SQLite', harness);

describe('SQLite engine', () => {
  it('opens the file in WAL mode with foreign keys and records the applied migrations', async () => {
    const path = join(root, 'pragmas', 'asyncjob.db');
    const store = await openSqliteStore({ path });
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.prepare('SELECT version, name FROM schema_migrations').all()).toEqual([
      {
        version: 1,
        name: 'operation record, signed hash-chained journal, artifacts, webhook events, provider sessions, audit checkpoints',
      },
      {
        version: 2,
        name: 'provider send slots: the next free send instant of each provider queue, shared by a fleet',
      },
    ]);
    raw.close();
    await store.close();
  });

  it('refuses to create a missing file when told it must exist', async () => {
    await expect(openSqliteStore({ path: join(root, 'absent', 'x.db'), fileMustExist: true })).rejects.toMatchObject({
      code: 'ASYNCJOB_ERR_STORE_LOCATION',
    });
  });
});
