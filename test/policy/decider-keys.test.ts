/**
 * A decider's key pair on the decider's side (D3): the key file `asyncjob keys new` writes and `asyncjob decide
 * --sign` reads, and the decision it signs, which must verify with the workflow's own check. The secret key is in
 * no message, JSON or inspection of the key.
 */
import { chmod, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { keysOf } from '../../src/core/decider-policy';
import { checkDecision, decisionBounds } from '../../src/core/decision-check';
import { verifyDecisionSignature } from '../../src/core/decision-signature';
import { hasCode } from '../../src/core/errors';
import { type Decision, type OpenEscalation } from '../../src/core/escalation';
import { sha256HexOfText } from '../../src/core/sha256';
import {
  DeciderKey,
  DeciderKeyError,
  deciderKeyFile,
  deciderKeysDir,
  policyKeyLines,
} from '../../src/policy/decider-keys';
import { deciderPolicyFrom } from '../../src/policy/decider-policy-file';
import { escalated, T0 } from '../cli/fixtures';

/** The open escalation of the CLI fixtures' record, with the ID a current worker gives it. */
const ESCALATION: OpenEscalation = { ...escalated().escalation!, id: 7 };
const RAISED = ESCALATION.raisedAtMs;
const CANCEL: Decision = { option: 'cancel_at_provider', approvedBy: ' Alice@Example.COM', reason: ' not needed ' };

/** The secret key a key file holds, read back as text. */
async function secretIn(file: string): Promise<string> {
  return (JSON.parse(await readFile(file, 'utf8')) as { secretKey: string }).secretKey;
}

/** A policy file's `deciders` section listing `key`, as `keys new` prints it, with rules letting alice decide. */
function policyWith(key: DeciderKey) {
  const document = parseYaml(policyKeyLines(key).join('\n')) as { deciders: Record<string, unknown> };
  document.deciders.rules = [{ name: 'alice-decides', who: ['alice@example.com'], options: ['cancel_at_provider'] }];
  document.deciders.signaturesRequired = { options: ['cancel_at_provider'] };
  return deciderPolicyFrom({ version: 1, ...document }, 'test policy');
}

describe('a decider key file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-decider-keys-'));
  });

  it('D3: is written 0600, read back as the same key, and never overwritten', async () => {
    const file = path.join(dir, 'new', 'alice.json');
    const key = DeciderKey.generate('alice@example.com');
    await key.write(file);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    const read = await DeciderKey.read(file);
    expect(read.toJSON()).toEqual({ decider: 'alice@example.com', keyId: key.keyId });
    const before = await readFile(file, 'utf8');
    await expect(DeciderKey.generate('alice@example.com').write(file)).rejects.toThrow(
      /exists already, and a key file is never overwritten/,
    );
    expect(await readFile(file, 'utf8')).toBe(before);
  });

  it('D3: shows its decider and public key only: no JSON, inspection or property holds the secret', async () => {
    const file = path.join(dir, 'shown.json');
    const key = DeciderKey.generate('alice@example.com');
    await key.write(file);
    const secret = await secretIn(file);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    for (const shown of [JSON.stringify(key), inspect(key, { showHidden: true, depth: 5 }), Object.values(key).join()])
      expect(shown).not.toContain(secret);
  });

  it.each([
    ['not JSON', (secret: string) => `{"secretKey": "${secret}",`, /not JSON/],
    [
      'a keyId that is not its public half',
      (secret: string) =>
        JSON.stringify({ version: 1, for: 'alice@example.com', keyId: `ed25519:${'0'.repeat(64)}`, secretKey: secret }),
      /is not the public half of its secret key/,
    ],
    [
      'an identity not in canonical form',
      (secret: string) =>
        JSON.stringify({ version: 1, for: 'Alice@Example.com', keyId: `ed25519:${'0'.repeat(64)}`, secretKey: secret }),
      /"for" is not a canonical identity/,
    ],
    [
      'an unknown field',
      (secret: string) => JSON.stringify({ version: 1, for: 'alice', keyId: 'x', secretKey: secret, note: 1 }),
      /not a key file/,
    ],
  ])('D3: refuses a key file with %s, naming the file and never the secret', async (_what, text, message) => {
    const secret = sha256HexOfText('a secret of this test');
    const file = path.join(dir, `bad-${sha256HexOfText(String(message)).slice(0, 8)}.json`);
    await writeFile(file, text(secret), { mode: 0o600 });
    const error = await DeciderKey.read(file).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DeciderKeyError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).not.toContain(secret);
  });

  it('D3: a key file others can read is refused, as ssh refuses such a private key', async () => {
    const key = DeciderKey.generate('alice@example.com');
    const file = path.join(dir, 'shared.json');
    await key.write(file);
    await chmod(file, 0o644);
    await expect(DeciderKey.read(file)).rejects.toThrow(`key file ${file}: can be read by others (mode 644)`);
    await chmod(file, 0o600);
    expect((await DeciderKey.read(file)).keyId).toBe(key.keyId);
  });

  it('D3: a missing key file names the command that makes it', async () => {
    const file = path.join(dir, 'missing.json');
    await expect(DeciderKey.readFor(file, 'Alice@example.com')).rejects.toThrow(
      `key file ${file}: no such file: "asyncjob keys new --for alice@example.com" makes alice@example.com's key there`,
    );
  });

  it("D1, D3: is found by a hash of the canonical identity under ASYNCJOB_DECIDER_KEYS_DIR, else XDG's or ~/.config", () => {
    const hashed = `${sha256HexOfText('alice@example.com').slice(0, 32)}.json`;
    expect(deciderKeyFile({ ASYNCJOB_DECIDER_KEYS_DIR: '/keys' }, 'alice@example.com')).toBe(`/keys/${hashed}`);
    expect(deciderKeysDir({ XDG_CONFIG_HOME: '/xdg', HOME: '/home/a' })).toBe('/xdg/asyncjob/keys');
    // A relative XDG_CONFIG_HOME is not one (the XDG specification): ~/.config is used.
    expect(deciderKeysDir({ XDG_CONFIG_HOME: 'xdg', HOME: '/home/a' })).toBe('/home/a/.config/asyncjob/keys');
    expect(deciderKeysDir({ HOME: '/home/a' })).toBe('/home/a/.config/asyncjob/keys');
    expect(deciderKeyFile({ ASYNCJOB_DECIDER_KEYS_DIR: '/keys' }, '../../etc/passwd')).toMatch(
      /^\/keys\/[0-9a-f]{32}\.json$/,
    );
  });

  it('D3: the policy lines it prints list the key for its decider; an identity YAML would misread is quoted', () => {
    const key = DeciderKey.generate('alice@example.com');
    expect(policyKeyLines(key)).toEqual(['deciders:', '  keys:', `    alice@example.com: [${key.keyId}]`]);
    expect(keysOf(policyWith(key).policy, 'ALICE@example.com')).toEqual([key.keyId]);
    for (const decider of ['alice smith', 'service:billing', "o'brien", 'human:ops']) {
      const other = DeciderKey.generate(decider);
      const document = parseYaml(policyKeyLines(other).join('\n')) as { deciders: { keys: Record<string, string[]> } };
      expect(document.deciders.keys).toEqual({ [decider]: [other.keyId] });
    }
  });
});

describe('a decision signed as asyncjob decide signs it', () => {
  const file = 'alice.json';

  it('D3: verifies with verifyDecisionSignature over the open escalation, and passes the workflow check under the policy', () => {
    const key = DeciderKey.generate('alice@example.com');
    const nowMs = RAISED + 60_000;
    const signed = key.signedDecision(file, { operationId: 'op-42', escalation: ESCALATION, decision: CANCEL, nowMs });
    expect(signed).toMatchObject({
      option: 'cancel_at_provider',
      approvedBy: 'alice@example.com',
      reason: 'not needed',
      route: 'cli',
      signature: { keyId: key.keyId, signedAt: new Date(nowMs).toISOString() },
    });
    const fields = {
      operationId: 'op-42',
      escalationId: 7,
      option: signed.option,
      bounds: decisionBounds(signed),
      decider: 'alice@example.com',
      reason: 'not needed',
    };
    expect(verifyDecisionSignature(signed.signature!, fields, [key.keyId])).toEqual({ kind: 'verified' });
    expect(verifyDecisionSignature(signed.signature!, { ...fields, escalationId: 8 }, [key.keyId]).kind).toBe(
      'invalid',
    );
    const checked = checkDecision(ESCALATION, signed, {
      nowMs: nowMs + 1_000,
      operationId: 'op-42',
      provider: 'rest',
      transport: 'update',
      deciders: policyWith(key),
    });
    expect(checked).toMatchObject({
      kind: 'ok',
      proof: { route: 'cli', policy: { rule: 'alice-decides' }, signature: signed.signature },
    });
  });

  it('D3: signs the bounds an extension names', () => {
    const key = DeciderKey.generate('alice@example.com');
    const extend: Decision = { ...CANCEL, option: 'extend', extendMs: 600_000, extraStatusRequests: 4 };
    const signed = key.signedDecision(file, {
      operationId: 'op-42',
      escalation: ESCALATION,
      decision: extend,
      nowMs: RAISED,
    });
    const fields = {
      operationId: 'op-42',
      escalationId: 7,
      option: 'extend',
      bounds: { extendMs: 600_000, extraStatusRequests: 4 },
      decider: 'alice@example.com',
      reason: 'not needed',
    };
    expect(verifyDecisionSignature(signed.signature!, fields, [key.keyId])).toEqual({ kind: 'verified' });
    expect(
      verifyDecisionSignature(signed.signature!, { ...fields, bounds: { ...fields.bounds, extendMs: 900_000 } }, [
        key.keyId,
      ]).kind,
    ).toBe('invalid');
  });

  it("D1, D3: a key file for another identity than the decider's is refused, in any spelling", () => {
    const bob = DeciderKey.generate('bob@example.com');
    expect(() =>
      bob.signedDecision(file, { operationId: 'op-42', escalation: ESCALATION, decision: CANCEL, nowMs: T0 }),
    ).toThrow(new DeciderKeyError(file, 'holds the key of bob@example.com, not of alice@example.com (--by)'));
    const alice = DeciderKey.generate('alice@example.com');
    expect(() =>
      alice.signedDecision(file, {
        operationId: 'op-42',
        escalation: ESCALATION,
        decision: { ...CANCEL, approvedBy: 'ALICE@example.com ' },
        nowMs: RAISED,
      }),
    ).not.toThrow();
  });

  it('D3: an escalation without an ID (raised by an older worker) is refused: there is nothing to sign it for', () => {
    const key = DeciderKey.generate('alice@example.com');
    const { id: _id, ...older } = ESCALATION;
    let error: unknown;
    try {
      key.signedDecision(file, { operationId: 'op-42', escalation: older, decision: CANCEL, nowMs: RAISED });
    } catch (err) {
      error = err;
    }
    expect(hasCode(error, 'ASYNCJOB_ERR_SIGNATURE_INVALID')).toBe(true);
    expect((error as Error).message).toBe(
      'the open escalation of op-42 has no ID to sign (it was raised by an older worker); decide without signing',
    );
  });
});
