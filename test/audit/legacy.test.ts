/**
 * Stores written before migration 3 (no key IDs, no snapshot hashes, no checkpoint register) still open (the
 * migration is applied) and verify: a keyed row without a key ID is checked with the configured key; a snapshot
 * without a hash is checked by recomputation from the journal alone, and counted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SQLITE_MIGRATIONS } from '../../src/adapters/store/migrations/sqlite';
import { SQLITE_DIALECT } from '../../src/adapters/store/sql-dialect';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { runAuditCommand } from '../../src/audit/cli';
import { writeArtifact, writePhaseOne, writePhaseTwo } from './fixtures';

const root = mkdtempSync(join(tmpdir(), 'asyncjob-legacy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const KEY = 'legacy-store-hmac-key-0123456789';

async function verify(path: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runAuditCommand(['verify', '--store', `sqlite:${path}`], {
    stdout: (t) => (out += t),
    stderr: (t) => (out += t),
    env,
    settleMs: 0,
  });
  return { code, out };
}

describe('a store from before migration 3', () => {
  it('opens (migration 3 applied), and its rows without key IDs or snapshot hashes verify clean', async () => {
    const path = join(root, 'v2.db');
    const raw = new Database(path);
    raw.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    for (const m of SQLITE_MIGRATIONS.slice(0, 2)) {
      raw.exec(m.sql);
      raw.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, '2026-01-01T00:00:00.000Z');
    }
    raw.close();
    const store = await openSqliteStore({ path, hmacKey: KEY });
    const artifact = writeArtifact(root, 'op-old');
    await writePhaseOne(store, 'op-old', artifact);
    await writePhaseTwo(store, 'op-old', artifact);
    await store.close();
    const db = new Database(path);
    expect(db.prepare('SELECT max(version) AS v FROM schema_migrations').get()).toEqual({ v: 3 });
    // As written by the code before: no key ID, no snapshot hash.
    db.exec('DROP TRIGGER journal_no_update');
    db.exec('UPDATE journal SET key_id = NULL; UPDATE operations SET snapshot_hash = NULL, snapshot_key_id = NULL');
    db.exec(SQLITE_DIALECT.appendOnly('journal').split('\n').slice(0, 2).join('\n'));
    db.close();
    const keyed = await verify(path, { ASYNCJOB_AUDIT_HMAC_KEY: KEY });
    expect(keyed.code).toBe(0);
    expect(keyed.out).toContain('1 snapshots (1 without a hash: written before migration 3)');
    // Without the key, the signed rows are named unverifiable (no key ID to name), not changed.
    const keyless = await verify(path, {});
    expect(keyless.code).toBe(2);
    expect(keyless.out).toContain('cannot verify signatures: key (unnamed: written before key IDs) not configured');
  });
});
