import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chainKeyOf } from '../../src/adapters/store/chain';
import {
  buildCheckpoint,
  checkpointDigest,
  checkSignature,
  headSetSummary,
  merkleRoot,
  parseCheckpointFile,
  type Checkpoint,
  type HeadSet,
} from '../../src/audit/checkpoint';
import { resolveCheckpoints } from '../../src/audit/checkpoint-chain';
import {
  readChainKey,
  readCheckpointSigner,
  readCheckpointVerifier,
  readKeySetting,
  AUDIT_KEY_SETTINGS,
} from '../../src/audit/keys';

const root = mkdtempSync(join(tmpdir(), 'asyncjob-checkpoint-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const H = (c: string): string => `hmac-sha256:${c.repeat(64)}`;

describe('the Merkle tree hash (RFC 9162 2.1.1)', () => {
  it('matches the RFC 6962 reference vectors for 0-8 leaves', () => {
    const leaves = [
      '',
      '00',
      '10',
      '2021',
      '3031',
      '40414243',
      '5051525354555657',
      '606162636465666768696a6b6c6d6e6f',
    ].map((h) => Buffer.from(h, 'hex'));
    const roots = [
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
      'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
      '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
      '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
      'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
      '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
    ];
    roots.forEach((r, n) => expect(merkleRoot(leaves.slice(0, n))).toBe(`sha256:${r}`));
  });

  it('summarises a head set independently of insertion order', () => {
    const a: HeadSet = new Map([
      ['op-1', [3, H('a')]],
      ['op-2', [5, H('b')]],
    ]);
    const b: HeadSet = new Map([
      ['op-2', [5, H('b')]],
      ['op-1', [3, H('a')]],
    ]);
    expect(headSetSummary(a)).toEqual(headSetSummary(b));
    expect(headSetSummary(a)).toMatchObject({ operations: 2, entries: 8 });
  });
});

describe('checkpoints', () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const env = { ASYNCJOB_AUDIT_SIGNING_KEY: pem };

  async function chainOfTwo(): Promise<[Checkpoint, Checkpoint]> {
    const signer = (await readCheckpointSigner(env, undefined))!;
    const first: HeadSet = new Map([
      ['op-1', [3, H('a')]],
      ['op-2', [5, H('b')]],
    ]);
    const c1 = buildCheckpoint({
      previous: null,
      base: new Map(),
      current: first,
      takenAt: '2026-11-29T10:00:00.000Z',
      signer,
    });
    const second: HeadSet = new Map([...first, ['op-1', [4, H('c')]], ['op-3', [1, H('d')]]]);
    const c2 = buildCheckpoint({
      previous: c1,
      base: first,
      current: second,
      takenAt: '2026-11-29T11:00:00.000Z',
      signer,
    });
    return [c1, c2];
  }

  it('lists only the heads that changed, links to the previous digest, and verifies offline with the public half alone', async () => {
    const [c1, c2] = await chainOfTwo();
    expect(c1).toMatchObject({ sequence: 1, previous: null, operations: 2, entries: 8, alg: 'ed25519' });
    expect(c2.heads).toEqual([
      ['op-1', 4, H('c')],
      ['op-3', 1, H('d')],
    ]);
    expect(c2).toMatchObject({ sequence: 2, previous: checkpointDigest(c1), operations: 3, entries: 10 });
    const publicPem = generateKeyPairSync('ed25519').publicKey; // another key: unknown
    const stranger = await readCheckpointVerifier(
      { ASYNCJOB_AUDIT_VERIFY_KEY: publicPem.export({ type: 'spki', format: 'pem' }).toString() },
      undefined,
    );
    expect(checkSignature(c2, stranger)).toBe('unknown_key');
    const file = join(root, 'verify.pem');
    writeFileSync(
      file,
      (await import('node:crypto')).createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }),
    );
    const verifier = await readCheckpointVerifier({ ASYNCJOB_AUDIT_VERIFY_KEY_FILE: file }, undefined);
    expect(checkSignature(c2, verifier)).toBe('ok');
    expect(checkSignature({ ...c2, entries: 11 }, verifier)).toBe('bad');
  });

  it('signs with the HMAC chain key when no Ed25519 key is configured', async () => {
    const chain = chainOfKey('a-long-enough-hmac-key-0123456789');
    const signer = (await readCheckpointSigner({}, chain))!;
    expect(signer).toMatchObject({ alg: 'hmac-sha256', keyId: chain.id });
    const c = buildCheckpoint({
      previous: null,
      base: new Map(),
      current: new Map(),
      takenAt: '2026-11-29T10:00:00.000Z',
      signer,
    });
    expect(checkSignature(c, await readCheckpointVerifier({}, chain))).toBe('ok');
    expect(checkSignature(c, await readCheckpointVerifier({}, chainOfKey('another-key-0123456789')))).toBe(
      'unknown_key',
    );
  });

  it('reads a file of JSON lines, a single pretty document, and names what does not parse', async () => {
    const [c1, c2] = await chainOfTwo();
    const lines = parseCheckpointFile(`${JSON.stringify(c1)}\n\n${JSON.stringify(c2)}\n{"schema":"x"}\n`, 'cp.jsonl');
    expect(lines.map((l) => (l.ok ? l.checkpoint.sequence : l.where))).toEqual([1, 2, 'cp.jsonl line 4']);
    expect(parseCheckpointFile(JSON.stringify(c2, null, 2), 'one.json')).toEqual([
      { ok: true, checkpoint: c2, where: 'one.json' },
    ]);
    expect(parseCheckpointFile('{"sequence": 1,\n "x": 2}', 'bad.json')[0]).toMatchObject({
      ok: false,
      where: 'bad.json',
    });
  });

  /** The store's register row of a checkpoint, as `audit checkpoint` writes it. */
  const row = (c: Checkpoint) => ({
    sequence: c.sequence,
    takenAt: c.takenAt,
    digest: checkpointDigest(c),
    document: JSON.stringify(c),
  });
  const problems = (resolved: { findings: readonly { checkpoint?: number; problem: string }[] }) =>
    resolved.findings.map((f) => [f.checkpoint, f.problem]);

  it('resolves the chain: a missing middle checkpoint, a broken link and a shrinking head are findings', async () => {
    const [c1, c2] = await chainOfTwo();
    const verifier = await readCheckpointVerifier(env, undefined);
    const ok = resolveCheckpoints([], [row(c1), row(c2)], verifier);
    expect(ok.findings).toEqual([]);
    expect(ok.newest?.sequence).toBe(2);
    expect(ok.anchors.get('op-1')).toEqual([
      { sequence: 3, hash: H('a'), checkpoint: 1 },
      { sequence: 4, hash: H('c'), checkpoint: 2 },
    ]);
    const missing = resolveCheckpoints([{ ok: true, checkpoint: c2, where: 'f' }], [row(c2)], verifier);
    expect(missing.findings.map((f) => [f.checkpoint, f.problem])).toEqual([[1, 'checkpoint_missing']]);
    const signer = (await readCheckpointSigner(env, undefined))!;
    const shrunk = buildCheckpoint({
      previous: c2,
      base: new Map(),
      current: new Map([['op-1', [2, H('e')]]]),
      takenAt: '2026-11-29T12:00:00.000Z',
      signer,
    });
    const inconsistent = resolveCheckpoints([], [row(c1), row(c2), row(shrunk)], verifier);
    expect(inconsistent.findings.map((f) => [f.checkpoint, f.problem])).toContainEqual([3, 'checkpoint_inconsistent']);
    const forked = buildCheckpoint({
      previous: c1,
      base: new Map(),
      current: new Map(),
      takenAt: '2026-11-29T12:00:00.000Z',
      signer,
    });
    const relinked = resolveCheckpoints([], [row(c1), row(c2), row({ ...forked, sequence: 3 })], verifier);
    expect(relinked.findings.map((f) => f.problem)).toContain('checkpoint_signature');
  });

  it('an edited register row, a given checkpoint the register holds otherwise, twins, and a checkpoint that names another predecessor', async () => {
    const [c1, c2] = await chainOfTwo();
    const verifier = await readCheckpointVerifier(env, undefined);
    const signer = (await readCheckpointSigner(env, undefined))!;
    // The register's row says another time than the checkpoint it holds: the row was edited.
    const edited = resolveCheckpoints([], [row(c1), { ...row(c2), takenAt: '2026-11-29T11:30:00.000Z' }], verifier);
    expect(problems(edited)).toContainEqual([2, 'checkpoint_register']);
    // A genuinely signed checkpoint 2 given from a file, but not the one the register recorded.
    const other = buildCheckpoint({
      previous: c1,
      base: new Map(),
      current: new Map([['op-9', [1, H('f')]]]),
      takenAt: '2026-11-29T11:00:00.000Z',
      signer,
    });
    const given = (c: Checkpoint, where: string) => ({ ok: true as const, checkpoint: c, where });
    const differs = resolveCheckpoints([given(other, 'cp.jsonl line 2')], [row(c1), row(c2)], verifier);
    expect(problems(differs)).toContainEqual([2, 'checkpoint_register']);
    // Two different checkpoints 2 given: the chain forked.
    const twins = resolveCheckpoints([given(c2, 'a'), given(other, 'b')], [row(c1), row(c2)], verifier);
    expect(problems(twins)).toContainEqual([2, 'checkpoint_chain']);
    // A checkpoint 2 that follows another checkpoint 1 than the one held.
    const stranger = buildCheckpoint({
      previous: null,
      base: new Map(),
      current: new Map(),
      takenAt: '2026-11-29T09:00:00.000Z',
      signer,
    });
    const unlinked = buildCheckpoint({
      previous: stranger,
      base: new Map(),
      current: new Map(),
      takenAt: '2026-11-29T11:00:00.000Z',
      signer,
    });
    expect(unlinked.sequence).toBe(2);
    expect(problems(resolveCheckpoints([], [row(c1), row(unlinked)], verifier))).toContainEqual([
      2,
      'checkpoint_chain',
    ]);
    expect(problems(resolveCheckpoints([], [row(c1), row(c2)], verifier))).toEqual([]);
  });
});

function chainOfKey(secret: string) {
  return chainKeyOf(secret)!;
}

describe('audit key settings (one reader for the worker and every audit command)', () => {
  it('reads a file or a value, trimmed; refuses both, an empty file and an unreadable one without echoing anything', async () => {
    const file = join(root, 'hmac.key');
    writeFileSync(file, '  s3cret-key-material \n');
    expect(await readKeySetting({ ASYNCJOB_AUDIT_HMAC_KEY_FILE: file }, AUDIT_KEY_SETTINGS.hmac)).toBe(
      's3cret-key-material',
    );
    expect(await readKeySetting({ ASYNCJOB_AUDIT_HMAC_KEY: 's3cret-key-material' }, AUDIT_KEY_SETTINGS.hmac)).toBe(
      's3cret-key-material',
    );
    expect((await readChainKey({ ASYNCJOB_AUDIT_HMAC_KEY_FILE: file }))?.id).toMatch(/^hmac:[0-9a-f]{16}$/);
    expect(await readChainKey({})).toBeUndefined();
    await expect(
      readKeySetting({ ASYNCJOB_AUDIT_HMAC_KEY_FILE: file, ASYNCJOB_AUDIT_HMAC_KEY: 'x' }, AUDIT_KEY_SETTINGS.hmac),
    ).rejects.toThrow(/not both/);
    const empty = join(root, 'empty.key');
    writeFileSync(empty, '\n');
    await expect(readKeySetting({ ASYNCJOB_AUDIT_HMAC_KEY_FILE: empty }, AUDIT_KEY_SETTINGS.hmac)).rejects.toThrow(
      /is empty/,
    );
    const missing = await readKeySetting(
      { ASYNCJOB_AUDIT_HMAC_KEY_FILE: join(root, 'nope') },
      AUDIT_KEY_SETTINGS.hmac,
    ).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'ASYNCJOB_ERR_CONFIG_INVALID' });
    expect(String(missing)).toContain('ENOENT');
  });

  it('refuses a signing key that is not Ed25519, naming the setting, never the key', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    await expect(readCheckpointSigner({ ASYNCJOB_AUDIT_SIGNING_KEY: rsa }, undefined)).rejects.toThrow(
      'ASYNCJOB_AUDIT_SIGNING_KEY_FILE: an Ed25519 key is required, found rsa',
    );
    await expect(readCheckpointSigner({ ASYNCJOB_AUDIT_SIGNING_KEY: 'not a key' }, undefined)).rejects.toThrow(
      /^ASYNCJOB_AUDIT_SIGNING_KEY_FILE: not a PEM private key$/,
    );
  });
});
