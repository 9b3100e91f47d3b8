/**
 * How each decision was proven (D5), in a real SQLite store: operations decided through the core steps under a
 * decider policy, then `asyncjob audit verify` and `asyncjob audit show` run on the store. A decision forged in the
 * store by an insider holding the chain key (the chain recomputed, so no chain finding) is caught by the decision
 * checks: a changed bound under a kept signature, a decider no rule allows, a required signature removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entryHash, GENESIS_HASH } from '../../src/adapters/store/chain';
import { SQLITE_DIALECT } from '../../src/adapters/store/sql-dialect';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { runAuditCommand } from '../../src/audit/cli';
import { type DecisionBody } from '../../src/audit/decision-proof';
import { type AuditShowJson } from '../../src/audit/story';
import { type AuditVerifyJson } from '../../src/audit/verify';
import { canonicalJson } from '../../src/core/canonical-json';
import { REQUESTER_WITHDRAWS } from '../../src/core/decider-policy';
import { type JournalEntryBody } from '../../src/core/journal';
import { readAuditStory } from '../../src/mcp/audit-story';
import { ALICE, ALICE_SECRET, BOB, DecidedOperation } from './decision-fixtures';

const HMAC_KEY = 'insider-visible-chain-key-5e4d3c2b1a';

describe('D5: audit verify re-checks how each decision was proven', () => {
  let dir: string;
  let path: string;
  let env: Record<string, string>;
  /** Sequences of interest, by operation. */
  let at: Record<string, number>;

  async function audit(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runAuditCommand(argv, {
      stdout: (t) => (out += t),
      stderr: (t) => (err += t),
      env,
      settleMs: 0,
    });
    return { code, out, err };
  }

  async function verify(operationId: string): Promise<{ code: number; report: AuditVerifyJson }> {
    const { code, out } = await audit('verify', '--json', '--operation', operationId);
    return { code, report: JSON.parse(out) as AuditVerifyJson };
  }

  /**
   * An insider with database access and the chain key: rewrites one entry's body and recomputes its hash and every
   * later one with the key, and the head, putting the append-only triggers back. The chain verifies afterwards.
   */
  async function rewriteEntry(
    operationId: string,
    sequence: number,
    edit: (body: JournalEntryBody) => JournalEntryBody,
  ): Promise<void> {
    const store = await openSqliteStore({ path, hmacKey: HMAC_KEY });
    const stored = await store.entries(operationId);
    await store.close();
    const raw = new Database(path);
    try {
      raw.exec('DROP TRIGGER journal_no_update; DROP TRIGGER journal_no_delete;');
      let prev = stored.find((s) => s.entry.sequence === sequence - 1)?.hash ?? GENESIS_HASH;
      const update = raw.prepare(
        'UPDATE journal SET entry = ?, prev_hash = ?, hash = ? WHERE operation_id = ? AND sequence = ?',
      );
      for (const s of stored.filter((e) => e.entry.sequence >= sequence)) {
        const entry = s.entry.sequence === sequence ? { ...s.entry, body: edit(s.entry.body) } : s.entry;
        const hash = entryHash(entry, prev, HMAC_KEY);
        update.run(canonicalJson(entry), prev, hash, operationId, s.entry.sequence);
        prev = hash;
      }
      raw.prepare('UPDATE operations SET last_hash = ? WHERE operation_id = ?').run(prev, operationId);
      raw.exec(SQLITE_DIALECT.appendOnly('journal'));
    } finally {
      raw.close();
    }
  }

  /** {@link rewriteEntry} for a decision entry. */
  async function rewriteDecision(
    operationId: string,
    sequence: number,
    edit: (body: DecisionBody) => DecisionBody,
  ): Promise<void> {
    await rewriteEntry(operationId, sequence, (body) => {
      if (body.kind !== 'decision') throw new Error(`sequence ${sequence} is a ${body.kind} entry`);
      return edit(body);
    });
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asyncjob-decision-proof-'));
    path = join(dir, 'asyncjob.db');
    env = { ASYNCJOB_STORE: `sqlite:${path}`, ASYNCJOB_AUDIT_HMAC_KEY: HMAC_KEY };
    const store = await openSqliteStore({ path, hmacKey: HMAC_KEY });
    at = {};
    // Extended by alice, signed, from the CLI.
    const extended = new DecidedOperation('op-extend').escalate();
    at['op-extend'] = extended.decide(
      {
        option: 'extend',
        approvedBy: ALICE,
        reason: 'the customer agreed to wait',
        extendMs: 900_000,
        extraStatusRequests: 4,
        route: 'cli',
      },
      { signWith: ALICE_SECRET },
    );
    // Cancelled by alice: unsigned from the Web UI's signal form (refused: the policy requires a signature), then
    // signed from the CLI.
    const cancelled = new DecidedOperation('op-cancel').escalate();
    at['op-cancel-refused'] = cancelled.decide(
      { option: 'cancel_at_provider', approvedBy: ALICE, reason: 'the order was withdrawn' },
      { transport: 'signal', refused: true },
    );
    at['op-cancel'] = cancelled.decide(
      { option: 'cancel_at_provider', approvedBy: ALICE, reason: 'the order was withdrawn', route: 'cli' },
      { signWith: ALICE_SECRET },
    );
    // Extended by bob through the client library, unsigned (the policy does not require it).
    const byBob = new DecidedOperation('op-bob').escalate();
    at['op-bob'] = byBob.decide({
      option: 'extend',
      approvedBy: BOB,
      reason: 'one more hour',
      extendMs: 600_000,
      extraStatusRequests: 2,
    });
    // No decider policy at all, decided from the Web UI.
    const open = new DecidedOperation('op-open', null).escalate();
    at['op-open'] = open.decide({ option: 'close', approvedBy: BOB, reason: 'not needed' }, { transport: 'signal' });
    for (const op of [extended, cancelled, byBob, open]) await op.write(store);
    await store.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('D5: a journal with signed, unsigned, refused and policy-less decisions verifies clean', async () => {
    const { code, out } = await audit('verify');
    expect(out).toMatch(
      /^ok: 4 operations, \d+ entries checked \(HMAC-SHA256, key hmac:[0-9a-f]{16}\), every chain intact/,
    );
    expect(code).toBe(0);
  });

  it('D5: a bound changed under a kept signature (chain recomputed with the key) is decision_signature_invalid', async () => {
    const sequence = at['op-extend']!;
    await rewriteDecision('op-extend', sequence, (b) => ({ ...b, bounds: { ...b.bounds, extendMs: 3_600_000 } }));
    const { code, report } = await verify('op-extend');
    expect(report.breaks).toEqual([
      expect.objectContaining({ operationId: 'op-extend', sequence, problem: 'decision_signature_invalid' }),
    ]);
    expect(report.breaks[0]!.found).toContain('does not match this decision');
    expect(code).toBe(1);
    const text = (await audit('verify', '--operation', 'op-extend')).out;
    expect(text).toContain(`BROKEN operation op-extend at sequence ${sequence}: decision_signature_invalid: `);
  });

  it('D5: a decider no rule allows (signature dropped, chain recomputed with the key) is decision_not_allowed', async () => {
    const sequence = at['op-bob']!;
    await rewriteDecision('op-bob', sequence, (b) => ({ ...b, approvedBy: 'mallory@example.com' }));
    const { code, report } = await verify('op-bob');
    expect(report.breaks).toEqual([
      expect.objectContaining({ operationId: 'op-bob', sequence, problem: 'decision_not_allowed' }),
    ]);
    expect(report.breaks[0]!.found).toContain('no rule of the decider policy lets mallory@example.com choose extend');
    expect(code).toBe(1);
  });

  it('D5: a decision the policy requires signed, its signature removed (chain recomputed with the key), is decision_unsigned', async () => {
    const sequence = at['op-cancel']!;
    await rewriteDecision('op-cancel', sequence, ({ signature: _removed, ...b }) => b);
    const { code, report } = await verify('op-cancel');
    expect(report.breaks).toEqual([
      expect.objectContaining({ operationId: 'op-cancel', sequence, problem: 'decision_unsigned', found: 'none' }),
    ]);
    expect(code).toBe(1);
  });

  it('D5: an extension beyond the rule, the recorded rule or the policy digest edited are findings of their own', async () => {
    const sequence = at['op-bob']!;
    await rewriteDecision('op-bob', sequence, (b) => ({
      ...b,
      bounds: { extendMs: 7_200_000, extraStatusRequests: 2 },
      policy: { digest: `sha256:${'0'.repeat(64)}`, rule: 'alice-may-cancel' },
    }));
    const { report } = await verify('op-bob');
    expect(report.breaks.map((f) => [f.sequence, f.problem])).toEqual([
      [sequence, 'decision_policy_mismatch'],
      [sequence, 'decision_not_allowed'],
    ]);
    expect(report.breaks[1]!.found).toContain('grants an extension of at most 3600000 ms');
  });

  it('D5: a decider added to the policy the intent records, its digest kept, is decision_policy_mismatch at the intent', async () => {
    await rewriteEntry('op-bob', 1, (body) => {
      if (body.kind !== 'intent' || body.deciderPolicy === undefined) throw new Error('no policy in the intent');
      const { digest, policy } = body.deciderPolicy;
      const groups = { ...policy.groups, oncall: [...policy.groups.oncall!, 'mallory@example.com'] };
      return { ...body, deciderPolicy: { digest, policy: { ...policy, groups } } };
    });
    const { code, report } = await verify('op-bob');
    expect(report.breaks).toEqual([
      expect.objectContaining({ operationId: 'op-bob', sequence: 1, problem: 'decision_policy_mismatch' }),
    ]);
    expect(code).toBe(1);
  });

  it('D5: an agent granting, with or without a policy, is decision_by_agent', async () => {
    await rewriteDecision('op-open', at['op-open']!, (b) => ({ ...b, approvedBy: 'agent:planner' }));
    const { report } = await verify('op-open');
    expect(report.breaks).toEqual([
      expect.objectContaining({
        sequence: at['op-open'],
        problem: 'decision_by_agent',
        found: 'agent:planner chose close',
      }),
    ]);
    await rewriteDecision('op-bob', at['op-bob']!, (b) => ({ ...b, approvedBy: 'AGENT:Planner ' }));
    expect((await verify('op-bob')).report.breaks.map((f) => f.problem)).toEqual([
      'decision_by_agent',
      'decision_not_allowed',
    ]);
  });

  it('D1, D5: the requester named on the escalation granting it, in any spelling, is decision_self_approval', async () => {
    const escalation = (
      await openSqliteStore({ path, hmacKey: HMAC_KEY }).then(async (store) => {
        const entries = await store.entries('op-bob');
        await store.close();
        return entries;
      })
    )
      .filter((s) => s.entry.body.kind === 'escalation' && s.entry.sequence < at['op-bob']!)
      .at(-1)!.entry.sequence;
    // As if bob had asked for the escalation he granted: the requester is recorded on it.
    await rewriteEntry(
      'op-bob',
      escalation,
      (body) => ({ ...body, requestedBy: ' Bob@Example.com' }) as JournalEntryBody,
    );
    const { code, report } = await verify('op-bob');
    expect(report.breaks).toEqual([
      expect.objectContaining({
        sequence: at['op-bob'],
        problem: 'decision_self_approval',
        found: `${BOB} chose extend`,
      }),
    ]);
    expect(code).toBe(1);
  });

  it('D4, D5: a decision recorded as granted by a requester who joined the escalation is decision_self_approval', async () => {
    const store = await openSqliteStore({ path, hmacKey: HMAC_KEY });
    const op = new DecidedOperation('op-joined').request('agent:planner', 'the export is large').request(BOB, 'me too');
    const sequence = op.decide({
      option: 'extend',
      approvedBy: ALICE,
      reason: 'fine',
      extendMs: 600_000,
      extraStatusRequests: 4,
    });
    await op.write(store);
    await store.close();
    expect((await verify('op-joined')).report.breaks).toEqual([]);
    const shown = await audit('show', 'op-joined');
    expect(shown.out).toContain(`joined escalation ${sequence - 2}: ${BOB} asks for 600 s more: me too`);
    // An insider holding the chain key makes bob, who joined the request, its granter.
    await rewriteDecision('op-joined', sequence, (b) => ({ ...b, approvedBy: BOB }));
    const { code, report } = await verify('op-joined');
    expect(report.breaks).toEqual([
      expect.objectContaining({
        sequence,
        problem: 'decision_self_approval',
        expected: `someone other than ${BOB}, who asked for it`,
        found: `${BOB} chose extend`,
      }),
    ]);
    expect(code).toBe(1);
  });

  it("D2, D5: a withdrawal recorded as the requester's by someone who did not ask for the escalation is decision_not_allowed", async () => {
    await rewriteDecision('op-bob', at['op-bob']!, (b) => {
      const { bounds: _bounds, ...rest } = b;
      return { ...rest, decision: 'keep_bounds', policy: { digest: b.policy!.digest, rule: REQUESTER_WITHDRAWS } };
    });
    expect((await verify('op-bob')).report.breaks).toEqual([
      expect.objectContaining({ sequence: at['op-bob'], problem: 'decision_not_allowed' }),
    ]);
  });

  it('D5: a naive edit of a decision (no key) is both a chain break and a decision finding', async () => {
    const sequence = at['op-extend']!;
    const raw = new Database(path);
    raw.exec('DROP TRIGGER journal_no_update; DROP TRIGGER journal_no_delete;');
    raw.exec(
      `UPDATE journal SET entry = replace(entry, '"extendMs":900000', '"extendMs":3600000') WHERE operation_id = 'op-extend' AND sequence = ${sequence}`,
    );
    raw.exec(SQLITE_DIALECT.appendOnly('journal'));
    raw.close();
    const { report } = await verify('op-extend');
    expect(report.breaks.map((f) => [f.sequence, f.problem])).toEqual([
      [sequence, 'hash_mismatch'],
      [sequence, 'decision_signature_invalid'],
    ]);
  });

  it('D5: audit show and the agent story print each decision with its route, rule and signature, and the refusal', async () => {
    const cancel = await audit('show', 'op-cancel');
    expect(cancel.code).toBe(0);
    const lines = cancel.out.split('\n');
    expect(lines.find((l) => l.includes('rejected'))).toMatch(
      /decision cancel_at_provider by alice@example\.com, rejected \(ASYNCJOB_ERR_SIGNATURE_REQUIRED: .*--sign\): the order was withdrawn; route web-ui, decider policy sha256:[0-9a-f]{12}…, unsigned$/,
    );
    expect(lines.find((l) => l.includes(', accepted:'))).toMatch(
      /decision cancel_at_provider by alice@example\.com, accepted: the order was withdrawn; route cli, rule alice-may-cancel, signed, verified \(key ed25519:[0-9a-f]{16}…\)$/,
    );
    const bob = await readAuditStory('op-bob', `sqlite:${path}`, env, () => undefined);
    expect(bob.chainIntact).toBe(true);
    expect(bob.text).toContain(
      'decision extend by bob@example.com, accepted: one more hour; bounds extendMs=600000, extraStatusRequests=2; route api, rule oncall-may-extend, unsigned',
    );
    expect((await audit('show', 'op-open')).out).toContain(
      'decision close by bob@example.com, accepted: not needed; route web-ui, no decider policy, unsigned',
    );
    const json = JSON.parse((await audit('show', 'op-extend', '--json')).out) as AuditShowJson;
    const decided = json.entries.find((e) => e.sequence === at['op-extend']);
    expect(decided).toMatchObject({ kind: 'decision', signatureVerified: true, body: { route: 'cli' } });
    expect(decided!.text).toContain('route cli, rule oncall-may-extend, signed, verified');
  });

  it('D5: audit show marks a signature that no longer verifies', async () => {
    await rewriteDecision('op-extend', at['op-extend']!, (b) => ({ ...b, reason: 'edited afterwards' }));
    const shown = await audit('show', 'op-extend');
    expect(shown.out).toMatch(
      /route cli, rule oncall-may-extend, signed, NOT VERIFIED \(key ed25519:[0-9a-f]{16}…\): the signature does not match this decision/,
    );
    const json = JSON.parse((await audit('show', 'op-extend', '--json')).out) as AuditShowJson;
    expect(json.entries.find((e) => e.sequence === at['op-extend'])?.signatureVerified).toBe(false);
  });
});
