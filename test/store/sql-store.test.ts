/**
 * What the one SQL store adds beside the contract both engines pass: migrations written once still render as
 * first shipped (stores they created keep opening), placeholders are rewritten for PostgreSQL, and SQLite's
 * async store never deadlocks against itself inside one process.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_MIGRATIONS } from '../../src/adapters/store/migrations/postgres';
import { SQLITE_MIGRATIONS } from '../../src/adapters/store/migrations/sqlite';
import { numberedPlaceholders } from '../../src/adapters/store/postgres-driver';
import { openPostgresStore } from '../../src/adapters/store/postgres-store';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { snapshot, storyEntries } from './fixtures';

const root = mkdtempSync(join(tmpdir(), 'asyncjob-sql-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('migrations written once', () => {
  // The digests of each engine's DDL: a published migration that renders differently would give new stores a
  // shape old ones do not have. Before the first release a migration may still change, and its digest with it.
  it.each([
    ['SQLite', SQLITE_MIGRATIONS, 1, '83e9a67ad24ba2352a82b77ca886b442447e28c5125c82a0f465e3ad954b0c79'],
    ['PostgreSQL', POSTGRES_MIGRATIONS, 1, '9b6482d351bf2fefffa29c88d76883ea7e2bc2722a1cf9c61e2f930d5668d5a4'],
    ['SQLite', SQLITE_MIGRATIONS, 2, 'baa0aa589c5ac1492fde76b92d6b194d7ba8fadf173c86097da7ddec55390b20'],
    ['PostgreSQL', POSTGRES_MIGRATIONS, 2, 'b70f32575fa4da064539475d64aaeb2d1dadbdaa034a283f8aa340e0baf5e65c'],
  ])('C1: %s migration %i renders byte for byte as published', (_engine, migrations, version, digest) => {
    const migration = migrations.find((m) => m.version === version)!;
    expect(sha256(migration.sql)).toBe(digest);
  });

  it('C1: both engines have the same versions and names, in order', () => {
    const summary = (list: typeof SQLITE_MIGRATIONS) => list.map(({ version, name }) => ({ version, name }));
    expect(summary(POSTGRES_MIGRATIONS)).toEqual(summary(SQLITE_MIGRATIONS));
    expect(SQLITE_MIGRATIONS.map((m) => m.version)).toEqual([1, 2]);
  });
});

describe('PostgreSQL placeholders', () => {
  it.each([
    ['SELECT 1', 'SELECT 1'],
    ['SELECT a FROM t WHERE b = ? AND c >= ? LIMIT ?', 'SELECT a FROM t WHERE b = $1 AND c >= $2 LIMIT $3'],
    ["SELECT '?' || ? FROM t WHERE x = 'it''s ?' AND y = ?", "SELECT '?' || $1 FROM t WHERE x = 'it''s ?' AND y = $2"],
  ])('rewrites %s', (sql, expected) => {
    expect(numberedPlaceholders(sql)).toBe(expected);
  });
});

describe('SQLite within one process', () => {
  it('M3: two stores on one file append and put concurrently without waiting on each other for a lock', async () => {
    // A short busy timeout: a store waiting on a lock its own process holds would fail in 200 ms, not hang.
    const path = join(root, 'one-process', 'asyncjob.db');
    const [a, b] = await Promise.all([
      openSqliteStore({ path, busyTimeoutMs: 200 }),
      openSqliteStore({ path, busyTimeoutMs: 200 }),
    ]);
    try {
      const operations = ['op-a', 'op-b', 'op-c', 'op-d'];
      await Promise.all(
        operations.flatMap((id, index) => {
          const writer = index % 2 === 0 ? a : b;
          return [writer.appendMany(storyEntries(id)), writer.putOperation(snapshot(id)), writer.chainHead(id)];
        }),
      );
      for (const id of operations) {
        expect(await a.chainHead(id)).toMatchObject({ lastSequence: 7 });
        expect(await b.getOperation(id)).toMatchObject({ operationId: id, version: 1 });
      }
      expect((await b.verifyChains()).breaks).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('M3: concurrent appenders racing for the next sequence on one file get conflicts, never a duplicate or a gap', async () => {
    const path = join(root, 'race', 'asyncjob.db');
    const writers = await Promise.all([0, 1, 2].map(() => openSqliteStore({ path, busyTimeoutMs: 200 })));
    try {
      const template = storyEntries('op-race')[3]!;
      await writers[0]!.append(storyEntries('op-race')[0]!);
      const appendNext = async (writer: (typeof writers)[number], name: string) => {
        for (let done = 0; done < 10;) {
          const { lastSequence } = await writer.chainHead('op-race');
          const entry = { ...template, sequence: lastSequence + 1, actor: `${name}-${done}` };
          await writer.append(entry).then(
            () => (done += 1),
            (err: { code?: string }) => {
              if (err.code !== 'ASYNCJOB_ERR_JOURNAL_CONFLICT') throw err;
            },
          );
        }
      };
      await Promise.all(writers.map((writer, index) => appendNext(writer, `writer-${index}`)));
      const entries = await writers[1]!.entries('op-race');
      expect(entries.map((e) => e.entry.sequence)).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
      expect(new Set(entries.map((e) => e.entry.actor)).size).toBe(31);
    } finally {
      await Promise.all(writers.map((writer) => writer.close()));
    }
  });
});

const url = process.env.ASYNCJOB_TEST_PG_URL;

describe.skipIf(!url)('PostgreSQL store written by an earlier version', () => {
  it('C1: a schema at migration 1 opens, gets migration 2, and takes appends', async () => {
    const schema = `asyncjob_t_${process.pid}_${randomBytes(4).toString('hex')}`;
    const raw = new Client({ connectionString: url });
    await raw.connect();
    try {
      await raw.query(`CREATE SCHEMA "${schema}"; SET search_path TO "${schema}"`);
      await raw.query(
        'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
      );
      for (const migration of POSTGRES_MIGRATIONS.slice(0, 1)) {
        await raw.query(migration.sql);
        await raw.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
      }
      const store = await openPostgresStore({ connectionString: url!, schema, maxConnections: 2 });
      try {
        await store.appendMany(storyEntries('op-old'));
        expect(await store.chainHead('op-old')).toMatchObject({ lastSequence: 7 });
      } finally {
        await store.close();
      }
      const versions = await raw.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY 1');
      expect(versions.rows.map((row) => row.version)).toEqual([1, 2]);
    } finally {
      await raw.query(`DROP SCHEMA "${schema}" CASCADE`);
      await raw.end();
    }
  });
});
