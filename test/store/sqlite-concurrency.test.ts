import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { startStoreChild } from './workers/start';

const root = mkdtempSync(join(tmpdir(), 'asyncjob-sqlite-race-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function startWorker(path: string, goFile: string, name: string, count: number) {
  const script = join(__dirname, 'workers', 'append-worker.ts');
  return startStoreChild<{ appended: number; conflicts: number }>(
    script,
    [path, goFile, name, String(count)],
    `worker ${name}`,
  );
}

describe('SQLite engine under two processes', () => {
  it('M3: two worker processes migrating a fresh file and appending to one operation never produce a duplicate or a gap', async () => {
    const path = join(root, 'shared.db');
    const goFile = join(root, 'go');
    const perWorker = 150;
    const workers = [startWorker(path, goFile, 'a', perWorker), startWorker(path, goFile, 'b', perWorker)];
    await Promise.all(workers.map((w) => w.ready));
    writeFileSync(goFile, 'go');
    const results = await Promise.all(workers.map((w) => w.done));
    expect(results.map((r) => r.appended)).toEqual([perWorker, perWorker]);

    const store = await openSqliteStore({ path, fileMustExist: true });
    const entries = await store.entries('op-shared');
    expect(entries.map((e) => e.entry.sequence)).toEqual(Array.from({ length: 2 * perWorker }, (_, i) => i + 1));
    const actors = entries.map((e) => e.entry.actor);
    expect(new Set(actors).size).toBe(2 * perWorker);
    for (const name of ['a', 'b']) {
      expect(actors.filter((a) => a.startsWith(`${name}-`)).sort()).toEqual(
        Array.from({ length: perWorker }, (_, i) => `${name}-${i}`).sort(),
      );
    }
    expect(await store.verifyChains()).toEqual({ operationsChecked: 1, entriesChecked: 2 * perWorker, breaks: [] });
    await store.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT version FROM schema_migrations').pluck().all()).toEqual([1, 2]);
    raw.close();
  }, 60_000);
});
