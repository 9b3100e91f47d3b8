/**
 * The tamper suite, run against every engine: a store written as the README configures it (the chain
 * key in ASYNCJOB_AUDIT_HMAC_KEY_FILE, read by the worker's own reader; checkpoints signed with an Ed25519 key
 * and appended to a file outside the database), then edited behind the product's back as an attacker with
 * database access would, and `asyncjob audit verify` run on it. Each edit must be reported with the operation
 * and the first bad sequence (or the missing range, or the checkpoint), exit 1; the untouched store exits 0.
 *
 * The store: op-a and op-b succeeded (9 entries each: ..., 8 the artifact, 9 -> succeeded), op-c still
 * collecting (7 entries). Checkpoint 1 was taken after sequence 7 of each, checkpoint 2 after everything.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AuditOperationRow } from '../../src/adapters/store/audit-source';
import { entryHash } from '../../src/adapters/store/chain';
import { type OperationStore, type OperationStoreOptions } from '../../src/adapters/store/operation-store';
import { runAuditCommand } from '../../src/audit/cli';
import { type AuditFinding } from '../../src/audit/findings';
import { type AuditShowJson } from '../../src/audit/story';
import { canonicalJson } from '../../src/core/canonical-json';
import { type JournalEntry } from '../../src/core/journal';
import { readChainKeySecret } from '../../src/audit/keys';
import { type AuditVerifyJson } from '../../src/audit/verify';
import { writeArtifact, writePhaseOne, writePhaseTwo } from './fixtures';

/** A fresh, isolated database with raw access behind the store's back. */
export interface TamperHarness {
  /** The location the CLI opens (`sqlite:PATH`, `postgres://...`). */
  readonly location: string;
  open(options?: OperationStoreOptions): Promise<OperationStore>;
  sql(statement: string): Promise<void>;
  /** Drops the append-only triggers of journal, artifacts and audit_checkpoints. */
  dropGuards(): Promise<void>;
  /** Creates them again as the migrations did (an attacker covering their tracks). */
  restoreGuards(): Promise<void>;
  /** Runs a statement with foreign keys not enforced (SQLite: PRAGMA foreign_keys; PostgreSQL: replica role). */
  sqlUnchecked(statement: string, params?: readonly unknown[]): Promise<void>;
  /** The rows a query returns (`?` placeholders). */
  rows(statement: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  cleanup(): Promise<void>;
}

const HMAC_KEY = 'k3y-from-the-vault-7f1e2d3c4b5a69788796a5b4';
/** A key ID no configured key has: what an attacker without the key writes to make an edit look unverifiable. */
const INVENTED_KEY = 'hmac:0123456789abcdef';
const q = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** Registers the suite for one engine. */
export function tamperSuite(engine: string, factory: () => Promise<TamperHarness>): void {
  describe(`T5: audit tamper suite: ${engine}`, () => {
    let h: TamperHarness;
    let dir: string;
    let env: Record<string, string>;
    let checkpoints: string;
    let artifacts: Record<string, ReturnType<typeof writeArtifact>>;
    let phaseOne: AuditOperationRow;
    let hashes: Map<number, string>;

    async function audit(
      argv: string[],
      overrides: Record<string, string | undefined> = {},
    ): Promise<{ code: number; out: string; err: string }> {
      let out = '';
      let err = '';
      const code = await runAuditCommand(argv, {
        stdout: (t) => (out += t),
        stderr: (t) => (err += t),
        env: { ...env, ...overrides },
        settleMs: 0,
      });
      return { code, out, err };
    }

    async function verifyJson(...argv: string[]): Promise<{ code: number; report: AuditVerifyJson }> {
      const { code, out } = await audit(['verify', '--json', ...argv]);
      return { code, report: JSON.parse(out) as AuditVerifyJson };
    }

    function about(report: AuditVerifyJson, operationId: string | null): AuditFinding[] {
      return report.breaks.filter((b) => b.operationId === operationId);
    }

    beforeEach(async () => {
      h = await factory();
      dir = mkdtempSync(join(tmpdir(), 'asyncjob-tamper-'));
      writeFileSync(join(dir, 'audit-hmac.key'), `${HMAC_KEY}\n`, { mode: 0o600 });
      const { privateKey } = generateKeyPairSync('ed25519');
      writeFileSync(join(dir, 'audit-signing.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), {
        mode: 0o600,
      });
      checkpoints = join(dir, 'checkpoints.jsonl');
      env = {
        ASYNCJOB_STORE: h.location,
        ASYNCJOB_AUDIT_HMAC_KEY_FILE: join(dir, 'audit-hmac.key'),
        ASYNCJOB_AUDIT_SIGNING_KEY_FILE: join(dir, 'audit-signing.pem'),
      };
      // The worker's way: the key read by the one shared reader from the README's setting.
      const store = await h.open({ hmacKey: await readChainKeySecret(env) });
      artifacts = Object.fromEntries(['op-a', 'op-b', 'op-c'].map((id) => [id, writeArtifact(dir, id)]));
      for (const id of ['op-a', 'op-b', 'op-c']) await writePhaseOne(store, id, artifacts[id]!);
      phaseOne = (await store.auditSource().readOperation('op-a')).row!;
      expect((await audit(['checkpoint', '--out', checkpoints])).code).toBe(0);
      for (const id of ['op-a', 'op-b']) await writePhaseTwo(store, id, artifacts[id]!);
      expect((await audit(['checkpoint', '--out', checkpoints])).code).toBe(0);
      hashes = new Map((await store.entries('op-a')).map((e) => [e.entry.sequence, e.hash]));
      await store.close();
    });
    afterEach(async () => {
      await h.cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    /** A truncation that hides the result: the last two entries (artifact, -> succeeded) deleted, head row rewritten. */
    async function truncateOpA(putBackOldSnapshot: boolean): Promise<void> {
      await h.dropGuards();
      await h.sql("DELETE FROM artifacts WHERE operation_id = 'op-a'");
      await h.sql("DELETE FROM journal WHERE operation_id = 'op-a' AND sequence >= 8");
      await h.sql(
        `UPDATE operations SET last_sequence = 7, last_hash = ${q(hashes.get(7)!)} WHERE operation_id = 'op-a'`,
      );
      if (!putBackOldSnapshot) return;
      const r = phaseOne;
      await h.sql(
        `UPDATE operations SET snapshot = ${q(r.snapshot!)}, snapshot_hash = ${q(r.snapshotHash!)}, local_state = ${q(r.localState!)}, version = ${r.version}, updated_at = ${q(r.updatedAt!)} WHERE operation_id = 'op-a'`,
      );
    }

    it('the untouched store, signed as the README configures it, verifies clean (exit 0), alone and against its checkpoints', async () => {
      const plain = await audit(['verify']);
      expect(plain.code).toBe(0);
      expect(plain.out).toMatch(
        /^note: held to checkpoint 2 .*\nok: 3 operations, 25 entries checked \(HMAC-SHA256, key hmac:[0-9a-f]{16}\), every chain intact\n {2}also checked: 3 snapshots; 2 artifact files hashed\n$/,
      );
      const against = await verifyJson('--against', checkpoints);
      expect(against.code).toBe(0);
      expect(against.report).toMatchObject({ ok: true, keyed: true, breaks: [], unverifiable: [] });
      expect(plain.out + against.report.notes.join()).not.toContain(HMAC_KEY);
      // The value form of the same setting reads the same key.
      expect(
        (await audit(['verify'], { ASYNCJOB_AUDIT_HMAC_KEY_FILE: undefined, ASYNCJOB_AUDIT_HMAC_KEY: HMAC_KEY })).code,
      ).toBe(0);
    });

    it('a missing or wrong key says which key is not configured, never "changed" (exit 2)', async () => {
      for (const overrides of [
        { ASYNCJOB_AUDIT_HMAC_KEY_FILE: undefined },
        { ASYNCJOB_AUDIT_HMAC_KEY_FILE: undefined, ASYNCJOB_AUDIT_HMAC_KEY: 'not-the-key-0123456789' },
      ]) {
        const { code, out } = await audit(['verify', '--against', checkpoints], overrides);
        expect(code).toBe(2);
        expect(out).toMatch(
          /UNCHECKED: cannot verify signatures: key hmac:[0-9a-f]{16} not configured \(set ASYNCJOB_AUDIT_HMAC_KEY_FILE or ASYNCJOB_AUDIT_HMAC_KEY\)/,
        );
        expect(out).not.toContain('BROKEN');
        const show = await audit(['show', 'op-a'], overrides);
        expect(show.code).toBe(2);
        expect(show.err).toContain('cannot verify signatures: key hmac:');
      }
      const both = await audit(['verify'], { ASYNCJOB_AUDIT_HMAC_KEY: HMAC_KEY });
      expect(both.code).toBe(2);
      expect(both.err).toContain('set ASYNCJOB_AUDIT_HMAC_KEY_FILE or ASYNCJOB_AUDIT_HMAC_KEY, not both');
      expect(both.err).not.toContain(HMAC_KEY);
    });

    it('an edited entry: hash_mismatch at its sequence', async () => {
      await h.dropGuards();
      await h.sql(
        `UPDATE journal SET entry = replace(entry, '"httpStatus":503', '"httpStatus":500') WHERE operation_id = 'op-a' AND sequence = 5`,
      );
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(about(report, 'op-a')[0]).toMatchObject({ sequence: 5, problem: 'hash_mismatch' });
      expect(about(report, 'op-b')).toEqual([]);
    });

    it('a deleted middle row: gap at its sequence', async () => {
      await h.dropGuards();
      await h.sql("DELETE FROM journal WHERE operation_id = 'op-a' AND sequence = 5");
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(about(report, 'op-a')).toContainEqual(expect.objectContaining({ sequence: 5, problem: 'gap' }));
      expect(about(report, 'op-a')).toContainEqual(
        expect.objectContaining({ sequence: 5, problem: 'truncated', checkpoint: 1 }),
      );
    });

    it('a deleted last row: missing_head, and the range the checkpoint covered', async () => {
      await h.dropGuards();
      await h.sql("DELETE FROM journal WHERE operation_id = 'op-b' AND sequence = 9");
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(about(report, 'op-b')).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ sequence: 9, problem: 'missing_head' }),
          expect.objectContaining({ sequence: 9, problem: 'truncated', checkpoint: 2 }),
        ]),
      );
    });

    it('swapped rows: the first swapped sequence', async () => {
      await h.dropGuards();
      await h.sql("UPDATE journal SET sequence = 1000 WHERE operation_id = 'op-a' AND sequence = 5");
      await h.sql("UPDATE journal SET sequence = 5 WHERE operation_id = 'op-a' AND sequence = 6");
      await h.sql("UPDATE journal SET sequence = 6 WHERE operation_id = 'op-a' AND sequence = 1000");
      const { code, report } = await verifyJson();
      expect(code).toBe(1);
      expect(about(report, 'op-a')[0]).toMatchObject({
        operationId: 'op-a',
        sequence: 5,
        problem: 'prev_link_mismatch',
      });
    });

    it('the last two entries deleted and the head row rewritten: found by the snapshot alone, and by the checkpoint as 8-9', async () => {
      await truncateOpA(false);
      const plain = await verifyJson();
      expect(plain.code).toBe(1);
      expect(about(plain.report, 'op-a')).toContainEqual(
        expect.objectContaining({ sequence: 8, through: 9, problem: 'snapshot_ahead' }),
      );
      const against = await verifyJson('--against', checkpoints);
      expect(about(against.report, 'op-a')).toContainEqual(
        expect.objectContaining({ sequence: 8, through: 9, problem: 'truncated', checkpoint: 2 }),
      );
      // A checkpoint is never signed over it.
      const refused = await audit(['checkpoint', '--out', checkpoints]);
      expect(refused.code).toBe(1);
      expect(refused.out).toContain('BROKEN operation op-a, sequences 8-9 (checkpoint 2): truncated');
    });

    it('...and an older genuine snapshot put back: only the checkpoints know; the register, then the file outside the database', async () => {
      await truncateOpA(true);
      // The store's own register still holds checkpoint 2.
      const plain = await verifyJson();
      expect(plain.code).toBe(1);
      expect(about(plain.report, 'op-a')).toEqual([
        expect.objectContaining({ sequence: 8, through: 9, problem: 'truncated', checkpoint: 2 }),
      ]);
      // The attacker cuts the register back too and puts the triggers back: the store alone now looks intact (the
      // documented limit)...
      await h.sql('DELETE FROM audit_checkpoints WHERE sequence = 2');
      await h.restoreGuards();
      expect((await verifyJson()).code).toBe(0);
      // ...but the checkpoint file kept outside the database still names what was there.
      const against = await verifyJson('--against', checkpoints);
      expect(against.code).toBe(1);
      expect(about(against.report, null)).toContainEqual(
        expect.objectContaining({ checkpoint: 2, problem: 'checkpoint_unrecorded' }),
      );
      expect(about(against.report, 'op-a')).toEqual([
        expect.objectContaining({ sequence: 8, through: 9, problem: 'truncated', checkpoint: 2 }),
      ]);
    });

    it('an older genuine snapshot put back over an intact journal: snapshot_behind, the sequences it does not reflect', async () => {
      const r = phaseOne;
      await h.sql(
        `UPDATE operations SET snapshot = ${q(r.snapshot!)}, snapshot_hash = ${q(r.snapshotHash!)}, local_state = ${q(r.localState!)}, version = ${r.version}, updated_at = ${q(r.updatedAt!)} WHERE operation_id = 'op-a'`,
      );
      const { code, report } = await verifyJson();
      expect(code).toBe(1);
      expect(about(report, 'op-a')).toEqual([
        expect.objectContaining({ sequence: 8, through: 9, problem: 'snapshot_behind' }),
      ]);
    });

    it('a whole operation deleted: operation_missing, sequences 1-9', async () => {
      await h.dropGuards();
      for (const table of ['artifacts', 'journal', 'operation_jobs', 'operations'])
        await h.sql(`DELETE FROM ${table} WHERE operation_id = 'op-b'`);
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(about(report, 'op-b')).toEqual([
        expect.objectContaining({ sequence: 1, through: 9, problem: 'operation_missing', checkpoint: 2 }),
      ]);
    });

    it('journal.to_state changed (a column outside the hash): column_mismatch', async () => {
      await h.dropGuards();
      await h.sql("UPDATE journal SET to_state = 'failed' WHERE operation_id = 'op-a' AND sequence = 9");
      const { code, report } = await verifyJson();
      expect(code).toBe(1);
      expect(about(report, 'op-a')).toEqual([
        expect.objectContaining({
          sequence: 9,
          problem: 'column_mismatch',
          expected: 'toState = succeeded (from the hashed entry)',
          found: 'toState = failed',
        }),
      ]);
    });

    it('operations.local_state changed: operation_row_mismatch', async () => {
      await h.sql("UPDATE operations SET local_state = 'failed' WHERE operation_id = 'op-a'");
      const { code, report } = await verifyJson();
      expect(code).toBe(1);
      expect(about(report, 'op-a')).toEqual([
        expect.objectContaining({ sequence: 9, problem: 'operation_row_mismatch', found: 'local_state = failed' }),
      ]);
    });

    it('the snapshot changed (and its hash dropped): snapshot_hash_mismatch, then snapshot_hash_missing and snapshot_mismatch against the journal', async () => {
      await h.sql(
        `UPDATE operations SET snapshot = replace(snapshot, '"localState":"succeeded"', '"localState":"failed"'), local_state = 'failed' WHERE operation_id = 'op-a'`,
      );
      const keyed = await verifyJson();
      expect(keyed.code).toBe(1);
      expect(about(keyed.report, 'op-a')).toContainEqual(
        expect.objectContaining({ sequence: 9, problem: 'snapshot_hash_mismatch' }),
      );
      expect(about(keyed.report, 'op-a')).toContainEqual(
        expect.objectContaining({
          sequence: 9,
          problem: 'snapshot_mismatch',
          expected: 'localState = succeeded (from the journal)',
        }),
      );
      // Dropping the hash too is a finding of its own, and the recomputation from the journal still holds.
      await h.sql("UPDATE operations SET snapshot_hash = NULL, snapshot_key_id = NULL WHERE operation_id = 'op-a'");
      const stripped = await verifyJson();
      expect(stripped.code).toBe(1);
      expect(about(stripped.report, 'op-a')).toEqual([
        expect.objectContaining({ sequence: 9, problem: 'snapshot_hash_missing' }),
        expect.objectContaining({ sequence: 9, problem: 'snapshot_mismatch' }),
      ]);
    });

    it('artifacts.sha256 overwritten: artifact_row_mismatch at the artifact entry', async () => {
      await h.dropGuards();
      await h.sql(`UPDATE artifacts SET sha256 = '${'0'.repeat(64)}' WHERE operation_id = 'op-b'`);
      const { code, report } = await verifyJson();
      expect(code).toBe(1);
      expect(about(report, 'op-b')).toEqual([
        expect.objectContaining({ sequence: 8, problem: 'artifact_row_mismatch', found: `sha256 = ${'0'.repeat(64)}` }),
      ]);
    });

    it('the artifact file overwritten: artifact_file_mismatch', async () => {
      writeFileSync(artifacts['op-a']!.path, '{"rows":[]}');
      const { code, report } = await verifyJson();
      expect(code).toBe(1);
      expect(about(report, 'op-a')).toEqual([
        expect.objectContaining({ sequence: 8, problem: 'artifact_file_mismatch' }),
      ]);
    });

    it('an entry edited and the chain recomputed without the key: unsigned_entry where the rewrite begins, anchor_mismatch over what checkpoint 1 pinned', async () => {
      await h.dropGuards();
      const rows = await h.rows(
        "SELECT sequence, entry, prev_hash FROM journal WHERE operation_id = 'op-a' AND sequence >= 5 ORDER BY sequence",
      );
      // Every row from the edit on is re-linked with plain SHA-256 hashes, as one without the key can.
      let prevHash = String(rows[0]!.prev_hash);
      for (const row of rows) {
        const sequence = Number(row.sequence);
        const text = String(row.entry).replace('"httpStatus":503', '"httpStatus":500');
        const hash = entryHash(JSON.parse(text) as JournalEntry, prevHash);
        await h.sql(
          `UPDATE journal SET entry = ${q(text)}, prev_hash = ${q(prevHash)}, hash = ${q(hash)}, key_id = NULL${sequence === 5 ? ', http_status = 500' : ''} WHERE operation_id = 'op-a' AND sequence = ${sequence}`,
        );
        prevHash = hash;
      }
      await h.sql(`UPDATE operations SET last_hash = ${q(prevHash)} WHERE operation_id = 'op-a'`);
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(about(report, 'op-a')).toContainEqual(expect.objectContaining({ sequence: 5, problem: 'unsigned_entry' }));
      expect(about(report, 'op-a')).toContainEqual(
        expect.objectContaining({ sequence: 1, through: 7, problem: 'anchor_mismatch', checkpoint: 1 }),
      );
      expect(about(report, 'op-b')).toEqual([]);
    });

    it('T2: an entry edited and given an invented key ID: key_id_unknown at its sequence (exit 1), and audit show marks it unverified', async () => {
      await h.dropGuards();
      await h.sql(
        `UPDATE journal SET entry = replace(entry, '"httpStatus":503', '"httpStatus":500'), http_status = 500, key_id = ${q(INVENTED_KEY)} WHERE operation_id = 'op-a' AND sequence = 5`,
      );
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(report.unverifiable).toEqual([]);
      expect(about(report, 'op-a')).toContainEqual(
        expect.objectContaining({
          sequence: 5,
          problem: 'key_id_unknown',
          found: expect.stringContaining(INVENTED_KEY),
        }),
      );
      const show = await audit(['show', 'op-a']);
      expect(show.code).toBe(1);
      expect(show.out).toMatch(/^\d\d:\d\d:\d\d UNVERIFIED: received 500/m);
      expect(show.out).not.toMatch(/^\d\d:\d\d:\d\d received 500/m);
      expect(show.out).toMatch(/^\d\d:\d\d:\d\d create_pending -> accepted/m);
    });

    it('T2: a forged row appended under an invented key ID, the snapshot moved with it: key_id_unknown for both (exit 1)', async () => {
      const forged: JournalEntry = {
        operationId: 'op-a',
        sequence: 10,
        at: '2026-11-29T10:19:00.000Z',
        actor: 'worker:host-a',
        body: { kind: 'observation', action: 'status', transport: 'response', httpStatus: 500, decision: 'wait' },
      };
      const fakeHash = `hmac-sha256:${'ab'.repeat(32)}`;
      await h.sql(
        `INSERT INTO journal (operation_id, sequence, at, actor, kind, entry, prev_hash, hash, http_status, key_id)
           VALUES ('op-a', 10, ${q(forged.at)}, ${q(forged.actor)}, 'observation', ${q(canonicalJson(forged))}, ${q(hashes.get(9)!)}, ${q(fakeHash)}, 500, ${q(INVENTED_KEY)})`,
      );
      await h.sql(
        `UPDATE operations SET last_sequence = 10, last_hash = ${q(fakeHash)}, version = 10, snapshot = replace(replace(snapshot, '"version":9', '"version":10'), '"nextSequence":10', '"nextSequence":11'),
           snapshot_hash = ${q(fakeHash)}, snapshot_key_id = ${q(INVENTED_KEY)} WHERE operation_id = 'op-a'`,
      );
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(report.unverifiable).toEqual([]);
      expect(about(report, 'op-a')).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            sequence: 10,
            problem: 'key_id_unknown',
            found: expect.stringContaining('key_id'),
          }),
          expect.objectContaining({
            sequence: 10,
            problem: 'key_id_unknown',
            found: expect.stringContaining('snapshot_key_id'),
          }),
        ]),
      );
      const show = await audit(['show', 'op-a', '--json']);
      expect(show.code).toBe(1);
      const story = JSON.parse(show.out) as AuditShowJson;
      expect(story.entries.filter((e) => !e.verified).map((e) => e.sequence)).toEqual([10]);
    });

    it('T2: snapshot counters edited under an invented snapshot key ID: key_id_unknown at its version (exit 1)', async () => {
      await h.sql(
        `UPDATE operations SET snapshot = replace(snapshot, '"statusRequests":2', '"statusRequests":0'), snapshot_key_id = ${q(INVENTED_KEY)} WHERE operation_id = 'op-a'`,
      );
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(report.unverifiable).toEqual([]);
      expect(about(report, 'op-a')).toEqual([expect.objectContaining({ sequence: 9, problem: 'key_id_unknown' })]);
    });

    it('T2: a key ID swapped on a genuine entry or snapshot: key_id_mismatch, the key whose signature it carries', async () => {
      await h.dropGuards();
      await h.sql(`UPDATE journal SET key_id = ${q(INVENTED_KEY)} WHERE operation_id = 'op-a' AND sequence = 3`);
      await h.sql(`UPDATE operations SET snapshot_key_id = ${q(INVENTED_KEY)} WHERE operation_id = 'op-b'`);
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(report.unverifiable).toEqual([]);
      expect(about(report, 'op-a')).toEqual([
        expect.objectContaining({ sequence: 3, problem: 'key_id_mismatch', found: `key_id ${INVENTED_KEY}` }),
      ]);
      expect(about(report, 'op-b')).toEqual([
        expect.objectContaining({ sequence: 9, problem: 'key_id_mismatch', found: `snapshot_key_id ${INVENTED_KEY}` }),
      ]);
    });

    it('T2: a key ID removed from a genuine entry or snapshot: key_id_mismatch, the key whose signature it carries', async () => {
      await h.dropGuards();
      await h.sql("UPDATE journal SET key_id = NULL WHERE operation_id = 'op-a' AND sequence = 3");
      await h.sql("UPDATE operations SET snapshot_key_id = NULL WHERE operation_id = 'op-b'");
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(report.unverifiable).toEqual([]);
      expect(about(report, 'op-a')).toEqual([
        expect.objectContaining({ sequence: 3, problem: 'key_id_mismatch', found: 'no key_id' }),
      ]);
      expect(about(report, 'op-b')).toEqual([
        expect.objectContaining({ sequence: 9, problem: 'key_id_mismatch', found: 'no snapshot_key_id' }),
      ]);
    });

    it('T2: a snapshot stripped of its hash: snapshot_hash_missing (exit 1)', async () => {
      await h.sql("UPDATE operations SET snapshot_hash = NULL, snapshot_key_id = NULL WHERE operation_id = 'op-b'");
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(about(report, 'op-b')).toEqual([
        expect.objectContaining({ sequence: 9, problem: 'snapshot_hash_missing' }),
      ]);
    });

    it('T2: an artifact file deleted: artifact_file_missing at its entry (exit 1); --allow-missing-artifacts passes and says so', async () => {
      rmSync(artifacts['op-b']!.path);
      const { code, report } = await verifyJson();
      expect(code).toBe(1);
      expect(report.breaks).toEqual([
        expect.objectContaining({ operationId: 'op-b', sequence: 8, problem: 'artifact_file_missing' }),
      ]);
      const allowed = await audit(['verify', '--allow-missing-artifacts']);
      expect(allowed.code).toBe(0);
      expect(allowed.out).toContain(
        'note: 1 artifact files are gone from this host, allowed by --allow-missing-artifacts (deliberate retention)',
      );
      expect(allowed.out).toContain('1 artifact files hashed, 1 missing (allowed: --allow-missing-artifacts)');
    });

    it('T2: an orphan artifact row (no journal entry at its sequence, or its entry deleted): artifact_row_orphan', async () => {
      await h.sqlUnchecked(
        `INSERT INTO artifacts (operation_id, sequence, at, location, sha256, size_bytes, content_type, validation)
           VALUES ('op-c', 20, '2026-11-29T10:19:00.000Z', 'file:///forged', '${'0'.repeat(64)}', 1, NULL, 'valid')`,
      );
      await h.dropGuards();
      await h.sqlUnchecked("DELETE FROM journal WHERE operation_id = 'op-b' AND sequence = 8");
      await h.restoreGuards();
      const { code, report } = await verifyJson();
      expect(code).toBe(1);
      expect(about(report, 'op-c')).toEqual([
        expect.objectContaining({ sequence: 20, problem: 'artifact_row_orphan' }),
      ]);
      expect(about(report, 'op-b')).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ sequence: 8, problem: 'gap' }),
          expect.objectContaining({ sequence: 8, problem: 'artifact_row_orphan' }),
        ]),
      );
    });

    it('T2: an artifact row deleted, its journal entry kept: artifact_row_missing at the entry (exit 1)', async () => {
      await h.dropGuards();
      await h.sql("DELETE FROM artifacts WHERE operation_id = 'op-b'");
      await h.restoreGuards();
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(report.unverifiable).toEqual([]);
      expect(report.breaks).toEqual([
        expect.objectContaining({ operationId: 'op-b', sequence: 8, problem: 'artifact_row_missing' }),
      ]);
    });

    it('T2: a job link deleted: job_link_missing at the first entry naming the job; a link without its entry: job_link_unsupported', async () => {
      await h.sql("DELETE FROM operation_jobs WHERE operation_id = 'op-a'");
      await h.sql(
        "INSERT INTO operation_jobs (provider, remote_job_id, operation_id) VALUES ('acme', 'job_forged', 'op-b')",
      );
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(about(report, 'op-a')).toEqual([
        expect.objectContaining({ sequence: 3, problem: 'job_link_missing', expected: 'a link acme/job_op-a -> op-a' }),
      ]);
      expect(about(report, 'op-b')).toEqual([
        expect.objectContaining({ problem: 'job_link_unsupported', found: 'acme/job_forged' }),
      ]);
    });

    it('T2: the append-only triggers dropped (nothing else touched): append_only_guard_missing naming each table (exit 1)', async () => {
      await h.dropGuards();
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(new Set(report.breaks.map((b) => `${b.table}:${b.problem}`))).toEqual(
        new Set(['journal', 'artifacts', 'audit_checkpoints'].map((t) => `${t}:append_only_guard_missing`)),
      );
      const text = await audit(['verify']);
      expect(text.out).toContain('BROKEN table journal: append_only_guard_missing');
      await h.restoreGuards();
      expect((await verifyJson('--against', checkpoints)).code).toBe(0);
    });

    it('an edited checkpoint: checkpoint_signature, naming the checkpoint', async () => {
      const lines = readFileSync(checkpoints, 'utf8').trimEnd().split('\n');
      const edited = JSON.parse(lines[1]!) as { heads: [string, number, string][] };
      edited.heads = edited.heads.filter(([id]) => id !== 'op-b');
      writeFileSync(checkpoints, `${lines[0]}\n${JSON.stringify(edited)}\n`);
      const { code, report } = await verifyJson('--against', checkpoints);
      expect(code).toBe(1);
      expect(about(report, null)).toEqual([
        expect.objectContaining({ checkpoint: 2, problem: 'checkpoint_signature' }),
      ]);
    });

    it('a replayed old checkpoint does not hide a truncation a newer one covers', async () => {
      const first = readFileSync(checkpoints, 'utf8').split('\n')[0]!;
      const old = join(dir, 'old-checkpoint.json');
      writeFileSync(old, `${first}\n`);
      // Against the old checkpoint alone, the untouched store is consistent (it only grew).
      const consistent = await verifyJson('--against', old);
      expect(consistent.code).toBe(0);
      expect(consistent.report.notes).toContain(
        "checkpoint 1 was given; the store's register holds checkpoints up to 2, so the store was held to 2",
      );
      await truncateOpA(true);
      const { code, report } = await verifyJson('--against', old);
      expect(code).toBe(1);
      expect(about(report, 'op-a')).toEqual([
        expect.objectContaining({ sequence: 8, through: 9, problem: 'truncated', checkpoint: 2 }),
      ]);
      // Lines out of order or a stranger's checkpoint break the chain.
      const [one, two] = readFileSync(checkpoints, 'utf8').trimEnd().split('\n');
      const other = JSON.parse(two!) as { previous: string };
      other.previous = `sha256:${'1'.repeat(64)}`;
      writeFileSync(old, `${one}\n${JSON.stringify(other)}\n`);
      expect(about((await verifyJson('--against', old)).report, null).map((f) => f.problem)).toContain(
        'checkpoint_signature',
      );
    });
  });
}
