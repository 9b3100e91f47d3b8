/**
 * Signed decisions on the command line (D3): `asyncjob keys new` run as a user runs it (the package's bin, in a
 * shell) writes a decider's key file only its owner can read and prints no secret; `asyncjob decide --sign` and
 * `--key FILE` sign the decision over the open escalation with it, or refuse before sending anything. Every
 * decision the CLI sends declares its route (D5). The client is scripted.
 */
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { EXIT } from '../../src/cli/exit-codes';
import { runCli } from '../../src/cli/run-cli';
import { checkDecision } from '../../src/core/decision-check';
import { type Decision } from '../../src/core/escalation';
import { sha256HexOfText } from '../../src/core/sha256';
import { deciderPolicyFrom } from '../../src/policy/decider-policy-file';
import { runShell } from '../docs/shell';
import { escalated, FakeClient, fakeDeps } from './fixtures';

const ALICE_FILE = `${sha256HexOfText('alice@example.com').slice(0, 32)}.json`;

/** A scripted client whose operation is escalated, its escalation with the ID a current worker gives it (or none). */
function escalatedClient(id: number | null = 7): FakeClient {
  const client = new FakeClient();
  const record = escalated();
  client.records = [{ ...record, escalation: { ...record.escalation!, ...(id !== null ? { id } : {}) } }];
  return client;
}

/** Runs `asyncjob argv` in process with `env`; the clock a minute after the scripted escalation (if any) rose. */
async function run(client: FakeClient, argv: string[], env: Record<string, string>) {
  const io = fakeDeps(client);
  const raisedAtMs = client.records[0]?.escalation?.raisedAtMs;
  if (raisedAtMs !== undefined) await io.deps.sleep(raisedAtMs - io.deps.nowMs() + 60_000);
  const code = await runCli(argv, { ...io.deps, env });
  return { code, stdout: io.stdout(), stderr: io.stderr(), json: io.json };
}

const DECIDE = ['decide', 'op-42', '--option', 'cancel_at_provider', '--by', 'Alice@Example.com', '--reason', 'r'];

// The first test runs the package's bin twice, each loading the CLI's sources through tsx: seconds on a busy machine.
describe('asyncjob keys new', { timeout: 120_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-cli-keys-'));
  });

  it('D3: keys new --for alice@example.com writes a 0600 key file in ASYNCJOB_DECIDER_KEYS_DIR and prints no secret', async () => {
    const keys = path.join(dir, 'bin-keys');
    const env = { ASYNCJOB_DECIDER_KEYS_DIR: keys };
    const made = await runShell('asyncjob keys new --for alice@example.com', { env, timeoutMs: 60_000 });
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const file = path.join(keys, ALICE_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const written = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
    expect(Object.keys(written)).toEqual(['version', 'for', 'keyId', 'secretKey']);
    expect(written).toMatchObject({ version: 1, for: 'alice@example.com' });
    expect(made.stdout).not.toContain(written.secretKey);
    expect(made.stdout).toContain(`wrote ${file}: the secret key of alice@example.com`);
    expect(made.stdout).toContain(`\ndeciders:\n  keys:\n    alice@example.com: [${written.keyId}]\n`);

    const again = await runShell('asyncjob keys new --for Alice@Example.com --json', { env, timeoutMs: 60_000 });
    expect(again.code).toBe(EXIT.usage);
    expect(again.stdout + again.stderr).not.toContain(written.secretKey);
    expect(JSON.parse(again.stdout)).toMatchObject({ code: 'ASYNCJOB_ERR_INVALID_INPUT' });
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(written);
  });

  it('D3: --json gives the file, the identity, the public key and the policy lines, which list the key when pasted', async () => {
    const out = path.join(dir, 'json', 'alice.json');
    const made = await run(
      new FakeClient(),
      ['keys', 'new', '--for', ' ALICE@example.com', '--out', out, '--json'],
      {},
    );
    expect(made.code).toBe(EXIT.ok);
    const [doc] = made.json();
    expect(doc).toMatchObject({ schema: 'asyncjob.keys/v1', file: out, for: 'alice@example.com' });
    const secret = (JSON.parse(await readFile(out, 'utf8')) as { secretKey: string }).secretKey;
    expect(made.stdout).not.toContain(secret);
    const section = parseYaml(String(doc!.policy)) as { deciders: Record<string, unknown> };
    const policy = deciderPolicyFrom(
      {
        version: 1,
        deciders: { ...section.deciders, rules: [{ name: 'r', who: ['alice@example.com'], options: ['close'] }] },
      },
      'pasted',
    );
    expect(policy.policy.deciders).toEqual([{ identity: 'alice@example.com', keys: [doc!.keyId] }]);
  });

  it.each([
    [
      ['keys', 'new', '--for', 'ali\u200Bce'],
      /--for: not an identity: holds an invisible or control character \(U\+200B\)/,
    ],
    [['keys', 'new'], /--for is required/],
    [['keys'], /keys needs an action: new/],
    [['keys', 'old', '--for', 'alice'], /keys: unknown action "old"/],
  ])('D1: %j is a usage error (exit 2), nothing written', async (argv, message) => {
    const keys = path.join(dir, 'refused');
    const made = await run(new FakeClient(), argv, { ASYNCJOB_DECIDER_KEYS_DIR: keys });
    expect(made.code).toBe(EXIT.usage);
    expect(made.stderr).toMatch(message);
    await expect(stat(keys)).rejects.toThrow(/ENOENT/);
  });
});

describe('asyncjob decide, signed', () => {
  let keys: string;
  let env: Record<string, string>;
  let keyId: string;
  beforeAll(async () => {
    keys = await mkdtemp(path.join(tmpdir(), 'asyncjob-cli-decide-keys-'));
    env = { ASYNCJOB_DECIDER_KEYS_DIR: keys };
    const made = await run(new FakeClient(), ['keys', 'new', '--for', 'alice@example.com', '--json'], env);
    keyId = String(made.json()[0]!.keyId);
  });

  it("D3: --sign signs with --by's own key over the open escalation; the workflow's check accepts it under the policy", async () => {
    const client = escalatedClient();
    const decided = await run(client, [...DECIDE, '--sign'], env);
    expect(decided.stderr).toBe('');
    expect(decided.code).toBe(EXIT.ok);
    expect(decided.stdout).toBe(
      `decision "cancel_at_provider" recorded for op-42 (now observing), signed with ${keyId}\n`,
    );
    const [, sent] = client.calls.find((c) => c.method === 'decide')!.args as [string, Decision];
    expect(sent).toMatchObject({ approvedBy: 'alice@example.com', route: 'cli', signature: { keyId } });
    const deciders = deciderPolicyFrom(
      {
        version: 1,
        deciders: {
          keys: { 'alice@example.com': [keyId] },
          rules: [{ name: 'alice-cancels', who: ['alice@example.com'], options: ['cancel_at_provider'], signed: true }],
        },
      },
      'test',
    );
    const escalation = client.records[0]!.escalation!;
    const context = { operationId: 'op-42', provider: 'rest', transport: 'update', deciders } as const;
    expect(checkDecision(escalation, sent, { ...context, nowMs: escalation.raisedAtMs + 120_000 })).toMatchObject({
      kind: 'ok',
      proof: { route: 'cli', policy: { rule: 'alice-cancels' }, signature: sent.signature },
    });
    // The same signature does not answer another escalation of the operation.
    expect(
      checkDecision({ ...escalation, id: 8 }, sent, { ...context, nowMs: escalation.raisedAtMs + 120_000 }),
    ).toMatchObject({ kind: 'refused', code: 'ASYNCJOB_ERR_SIGNATURE_INVALID' });
  });

  it('D3: --key FILE signs with the key in FILE', async () => {
    const client = escalatedClient();
    const decided = await run(client, [...DECIDE, '--key', path.join(keys, ALICE_FILE)], {});
    expect(decided.code).toBe(EXIT.ok);
    const [, sent] = client.calls.find((c) => c.method === 'decide')!.args as [string, Decision];
    expect(sent.signature?.keyId).toBe(keyId);
  });

  it('D3: a key file for another identity than --by is refused before anything is asked of the server', async () => {
    const bob = path.join(keys, 'bob.json');
    expect((await run(new FakeClient(), ['keys', 'new', '--for', 'bob@example.com', '--out', bob], {})).code).toBe(0);
    const client = escalatedClient();
    const decided = await run(client, [...DECIDE, '--key', bob], {});
    expect(decided.code).toBe(EXIT.usage);
    expect(decided.stderr).toBe(
      `asyncjob: key file ${bob}: holds the key of bob@example.com, not of alice@example.com (--by)\n`,
    );
    expect(client.calls).toEqual([]);
  });

  it("D3: --sign without --by's key file names the command that makes it; nothing is sent", async () => {
    const client = escalatedClient();
    const decided = await run(client, [...DECIDE.slice(0, 5), 'carol@example.com', '--reason', 'r', '--sign'], env);
    expect(decided.code).toBe(EXIT.usage);
    expect(decided.stderr).toContain('no such file: "asyncjob keys new --for carol@example.com" makes');
    expect(client.calls).toEqual([]);
  });

  it('D3: an escalation without an ID to sign is refused (exit 3); nothing is sent', async () => {
    const client = escalatedClient(null);
    const decided = await run(client, [...DECIDE, '--sign', '--json'], env);
    expect(decided.code).toBe(EXIT.refused);
    expect(decided.json()[0]).toMatchObject({ code: 'ASYNCJOB_ERR_SIGNATURE_INVALID' });
    expect(client.calls.some((c) => c.method === 'decide')).toBe(false);
  });

  it.each([
    [['--sign'], /--sign needs --option/],
    [['--key', 'k.json'], /--key needs --option/],
  ])('D3: %j without --option is a usage error', async (extra, message) => {
    const decided = await run(escalatedClient(), ['decide', 'op-42', ...extra], env);
    expect(decided.code).toBe(EXIT.usage);
    expect(decided.stderr).toMatch(message);
  });

  it('D1, D3: a decision signed is by an identity: --by with an invisible character is a usage error', async () => {
    const client = escalatedClient();
    const decided = await run(client, [...DECIDE.slice(0, 5), 'ali\u200Bce', '--reason', 'r', '--sign'], env);
    expect(decided.code).toBe(EXIT.usage);
    expect(decided.stderr).toMatch(/--by: not an identity/);
    expect(client.calls).toEqual([]);
  });
});
