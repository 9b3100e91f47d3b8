import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { SQLITE_DIALECT } from '../../src/adapters/store/sql-dialect';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { chainKeyId } from '../../src/adapters/store/chain';
import { runAuditCommand, type AuditIo } from '../../src/audit/cli';
import { type AuditShowJson } from '../../src/audit/story';
import { type AuditVerifyJson } from '../../src/audit/verify';
import { storyEntries } from '../store/fixtures';

const root = mkdtempSync(join(tmpdir(), 'asyncjob-audit-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

function capture(env: Record<string, string | undefined> = {}): AuditIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
    env,
    out: () => out,
    err: () => err,
  };
}

describe('asyncjob audit', () => {
  let path: string;
  let store: string;
  beforeEach(async () => {
    path = join(root, `db-${++counter}`, 'asyncjob.db');
    store = `sqlite:${path}`;
    const s = await openSqliteStore({ path });
    await s.appendMany(storyEntries('op-1'));
    await s.appendMany(storyEntries('op-2'));
    await s.close();
  });

  function tamper(statement: string): void {
    const raw = new Database(path);
    for (const t of ['journal_no_update', 'journal_no_delete', 'artifacts_no_update', 'artifacts_no_delete'])
      raw.exec(`DROP TRIGGER IF EXISTS ${t}`);
    raw.exec(statement);
    // Put back as the migrations made them: a dropped trigger is a finding of its own (append_only_guard_missing).
    for (const t of ['journal', 'artifacts']) raw.exec(SQLITE_DIALECT.appendOnly(t));
    raw.close();
  }

  it('T2: verify reports intact chains with exit 0', async () => {
    const io = capture();
    expect(await runAuditCommand(['verify', '--store', store], io)).toBe(0);
    // The fixtures' artifact files (file:///var/asyncjob/...) do not exist here: counted, never failed.
    expect(io.out()).toBe(
      'ok: 2 operations, 14 entries checked (SHA-256), every chain intact\n  also checked: 0 artifact files hashed, 2 not reachable from here\n',
    );
  });

  it('T2: verify names the edited row (operation, sequence, expected, found) and exits 1', async () => {
    tamper(
      `UPDATE journal SET entry = replace(entry, '"httpStatus":503', '"httpStatus":200') WHERE operation_id = 'op-2' AND sequence = 4`,
    );
    const io = capture();
    expect(await runAuditCommand(['verify', `--store=${store}`], io)).toBe(1);
    expect(io.out()).toMatch(
      /^BROKEN operation op-2 at sequence 4: hash_mismatch: .*\n {2}expected sha256:[0-9a-f]{64}\n {2}found {4}sha256:[0-9a-f]{64}\n/,
    );
    // The walk of a broken chain stops at its first break: 7 entries of op-1, then 4 of op-2. The http_status
    // column, copied from the entry before the edit, no longer matches it either.
    expect(io.out()).toContain('BROKEN operation op-2 at sequence 4: column_mismatch:');
    expect(io.out()).toContain('FAILED: 2 findings in 2 operations, 11 entries checked (SHA-256)');

    const json = capture({ ASYNCJOB_STORE: store });
    expect(await runAuditCommand(['verify', '--json'], json)).toBe(1);
    const parsed = JSON.parse(json.out()) as AuditVerifyJson;
    expect(parsed).toMatchObject({
      schema: 'asyncjob.audit-verify/v1',
      ok: false,
      keyed: false,
      operationsChecked: 2,
      entriesChecked: 11,
    });
    expect(parsed.breaks).toEqual([
      expect.objectContaining({ operationId: 'op-2', sequence: 4, problem: 'hash_mismatch' }),
      expect.objectContaining({
        operationId: 'op-2',
        sequence: 4,
        problem: 'column_mismatch',
        expected: 'httpStatus = 200 (from the hashed entry)',
        found: 'httpStatus = 503',
      }),
    ]);

    const onlyOp1 = capture();
    expect(await runAuditCommand(['verify', '--operation', 'op-1', '--store', store], onlyOp1)).toBe(0);
    expect(onlyOp1.out()).toContain('ok: 1 operation, 7 entries');
  });

  it('T2: verify detects a deleted row and a deleted tail', async () => {
    tamper(
      "DELETE FROM journal WHERE operation_id = 'op-1' AND sequence = 2; DELETE FROM journal WHERE operation_id = 'op-2' AND sequence = 6;",
    );
    const io = capture();
    expect(await runAuditCommand(['verify', '--json', '--store', store], io)).toBe(1);
    const parsed = JSON.parse(io.out()) as AuditVerifyJson;
    expect(parsed.breaks.map((b) => [b.operationId, b.sequence, b.problem])).toEqual([
      ['op-1', 2, 'gap'],
      ['op-2', 6, 'gap'],
    ]);
    tamper(
      "DELETE FROM artifacts WHERE operation_id = 'op-2'; DELETE FROM journal WHERE operation_id = 'op-2' AND sequence >= 6",
    );
    const tail = capture();
    expect(await runAuditCommand(['verify', '--operation', 'op-2', '--store', store], tail)).toBe(1);
    expect(tail.out()).toContain('BROKEN operation op-2 at sequence 6: missing_head');
  });

  it('T3: show renders the story as the seeds timeline', async () => {
    const io = capture();
    expect(await runAuditCommand(['show', 'op-1', '--store', store], io)).toBe(0);
    const lines = io.out().trimEnd().split('\n');
    expect(lines[0]).toBe('operation op-1 (times UTC, 2026-11-29)');
    expect(lines).toContain('10:18:02 create_pending -> accepted (job job_7ad2) by workflow');
    expect(lines).toContain('10:25:00 escalated: deadline_exceeded; options: extend, cancel_at_provider, close');
    expect(lines).toHaveLength(8);
  });

  it('T3: show --json gives the stable shape, and a broken chain exits 1', async () => {
    const io = capture();
    expect(await runAuditCommand(['show', 'op-1', '--json', '--store', store], io)).toBe(0);
    const parsed = JSON.parse(io.out()) as AuditShowJson;
    expect(parsed.schema).toBe('asyncjob.audit-show/v1');
    expect(parsed.chain).toEqual({ intact: true, break: null });
    expect(parsed.entries.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(parsed.entries[2]!.text).toBe('create_pending -> accepted (job job_7ad2) by workflow');

    tamper(`UPDATE journal SET entry = '{not json' WHERE operation_id = 'op-1' AND sequence = 3`);
    const broken = capture();
    expect(await runAuditCommand(['show', 'op-1', '--store', store], broken)).toBe(1);
    expect(broken.out()).toContain('broken at sequence 3 (hash_mismatch)');
  });

  it('T2: reads the HMAC key from ASYNCJOB_AUDIT_HMAC_KEY', async () => {
    const keyedPath = join(root, `keyed-${++counter}`, 'asyncjob.db');
    const s = await openSqliteStore({ path: keyedPath, hmacKey: 'k-123456' });
    await s.appendMany(storyEntries('op-k'));
    await s.close();
    const withKey = capture({ ASYNCJOB_AUDIT_HMAC_KEY: 'k-123456' });
    expect(await runAuditCommand(['verify', '--store', `sqlite:${keyedPath}`], withKey)).toBe(0);
    expect(withKey.out()).toContain(`(HMAC-SHA256, key ${chainKeyId('k-123456')})`);
    // Without the key the signatures cannot be checked: said so (exit 2), never reported as changed entries.
    const withoutKey = capture();
    expect(await runAuditCommand(['verify', '--store', `sqlite:${keyedPath}`], withoutKey)).toBe(2);
    expect(withoutKey.out()).toContain(
      `UNCHECKED: cannot verify signatures: key ${chainKeyId('k-123456')} not configured`,
    );
    expect(withoutKey.out()).not.toContain('BROKEN');
    expect(withoutKey.out() + withKey.out()).not.toContain('k-123456');
  });

  it.each([
    [['verify', '--frobnicate'], 'unknown option --frobnicate'],
    [['show'], 'exactly one operation ID'],
    [['show', 'a', 'b'], 'exactly one operation ID'],
    [['verify', 'op-1'], 'use --operation ID'],
    [['verify', '--operation'], '--operation needs a value'],
    [['rewrite'], 'unknown audit command'],
  ])('usage error %j exits 2', async (argv, message) => {
    const io = capture();
    expect(await runAuditCommand(argv, io)).toBe(2);
    expect(io.err()).toContain(message);
  });

  it('bad input exits 2: unknown operation, unknown store scheme, missing SQLite file', async () => {
    const unknown = capture();
    expect(await runAuditCommand(['show', 'op-missing', '--store', store], unknown)).toBe(2);
    expect(unknown.err()).toContain('nothing is recorded for operation op-missing');
    const unknownVerify = capture();
    expect(await runAuditCommand(['verify', '--operation', 'op-missing', '--store', store], unknownVerify)).toBe(2);
    const scheme = capture();
    expect(await runAuditCommand(['verify', '--store', 'mysql://x'], scheme)).toBe(2);
    expect(scheme.err()).toContain('ASYNCJOB_ERR_STORE_LOCATION');
    const missing = capture();
    expect(await runAuditCommand(['verify', '--store', `sqlite:${join(root, 'nope', 'x.db')}`], missing)).toBe(2);
    expect(missing.err()).toContain('ASYNCJOB_ERR_STORE_LOCATION');
  });

  it('prints usage for help', async () => {
    const io = capture();
    expect(await runAuditCommand(['--help'], io)).toBe(0);
    expect(io.out()).toContain('asyncjob audit verify [--operation ID] [--against FILE]... [--with-temporal] [--json]');
    expect(io.out()).toContain('asyncjob audit checkpoint [--out FILE]');
  });
});
