/**
 * The payload codec: AES-256-GCM over whole payloads, the samples' format, rotation by key ID, and the keys read
 * from ASYNCJOB_PAYLOAD_KEYS.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { EncryptionCodec, PayloadKeyUnknownError, PayloadUndecryptableError } from '../../src/codec/encryption-codec';
import { decodePayload, encodePayload } from '../../src/codec/payload-proto';
import { keyBytes, loadPayloadCodecs } from '../../src/codec/payload-keys';
import { hasCode } from '../../src/core/errors';

const k1 = { keyId: 'k1', key: randomBytes(32) };
const k2 = { keyId: 'k2', key: randomBytes(32) };
const REQUEST = { report: 'quarterly', customer: 'distinctive-customer-4711' };
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

describe('payload protobuf bytes', () => {
  it('are the bytes @temporalio/proto writes, and read back', () => {
    const payload = defaultPayloadConverter.toPayload(REQUEST);
    const ours = encodePayload(payload);
    expect(Buffer.from(ours)).toEqual(Buffer.from(temporal.api.common.v1.Payload.encode(payload).finish()));
    const back = decodePayload(ours);
    expect(defaultPayloadConverter.fromPayload(back)).toEqual(REQUEST);
    expect(text(back.metadata?.encoding)).toBe('json/plain');
    const empty: Payload = { metadata: { encoding: Buffer.from('binary/null') } };
    expect(Buffer.from(encodePayload(empty))).toEqual(
      Buffer.from(temporal.api.common.v1.Payload.encode(empty).finish()),
    );
    expect(text(decodePayload(encodePayload(empty)).metadata?.encoding)).toBe('binary/null');
  });
});

describe('EncryptionCodec', () => {
  it('round trip: binary/encrypted with the key ID, a fresh IV each time, the whole payload back', async () => {
    const codec = new EncryptionCodec([k1]);
    const payload = defaultPayloadConverter.toPayload(REQUEST);
    const [a, b] = await codec.encode([payload, payload]);
    expect(text(a!.metadata?.encoding)).toBe('binary/encrypted');
    expect(text(a!.metadata?.['encryption-key-id'])).toBe('k1');
    expect(Object.keys(a!.metadata ?? {}).sort()).toEqual(['encoding', 'encryption-key-id']);
    expect(text(a!.data)).not.toContain('distinctive-customer-4711');
    expect(Buffer.from(a!.data!).subarray(0, 12)).not.toEqual(Buffer.from(b!.data!).subarray(0, 12));
    const [back] = await codec.decode([a!]);
    expect(text(back!.metadata?.encoding)).toBe('json/plain');
    expect(defaultPayloadConverter.fromPayload(back!)).toEqual(REQUEST);
  });

  it('rotation: the new first key encrypts, the old key still decrypts what it encrypted', async () => {
    const [old] = await new EncryptionCodec([k1]).encode([defaultPayloadConverter.toPayload(REQUEST)]);
    const rotated = new EncryptionCodec([k2, k1]);
    expect(rotated.encryptingKeyId).toBe('k2');
    const [fresh] = await rotated.encode([defaultPayloadConverter.toPayload(REQUEST)]);
    expect(text(fresh!.metadata?.['encryption-key-id'])).toBe('k2');
    const decoded = await rotated.decode([old!, fresh!]);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([REQUEST, REQUEST]);
  });

  it('a payload under a key ID not held fails with PayloadKeyUnknownError (ASYNCJOB_ERR_PAYLOAD_KEY_UNKNOWN)', async () => {
    const [sealed] = await new EncryptionCodec([k2]).encode([defaultPayloadConverter.toPayload(REQUEST)]);
    const err = await new EncryptionCodec([k1])
      .decode([sealed!])
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayloadKeyUnknownError);
    expect(hasCode(err, 'ASYNCJOB_ERR_PAYLOAD_KEY_UNKNOWN')).toBe(true);
    expect((err as PayloadKeyUnknownError).keyId).toBe('k2');
  });

  it('altered ciphertext, an altered key ID and another key under the same ID fail as undecryptable', async () => {
    const codec = new EncryptionCodec([k1]);
    const [sealed] = await codec.encode([defaultPayloadConverter.toPayload(REQUEST)]);
    const flipped = Buffer.from(sealed!.data!);
    flipped[20]! ^= 1;
    const impostor = new EncryptionCodec([{ keyId: 'k1', key: randomBytes(32) }]);
    for (const attempt of [
      () => codec.decode([{ ...sealed!, data: flipped }]),
      () => codec.decode([{ ...sealed!, data: Buffer.from(sealed!.data!).subarray(0, 20) }]),
      () => impostor.decode([sealed!]),
    ]) {
      const err = await attempt().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PayloadUndecryptableError);
      expect(hasCode(err, 'ASYNCJOB_ERR_PAYLOAD_UNDECRYPTABLE')).toBe(true);
    }
  });

  it('a payload written before encryption was turned on passes through', async () => {
    const plain = defaultPayloadConverter.toPayload(REQUEST);
    const [back] = await new EncryptionCodec([k1]).decode([plain]);
    expect(back).toBe(plain);
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new EncryptionCodec([{ keyId: 'short', key: randomBytes(16) }])).toThrow(/short is 16 bytes, not 32/);
    expect(() => new EncryptionCodec([])).toThrow(/at least one key/);
  });
});

describe('ASYNCJOB_PAYLOAD_KEYS', () => {
  it('a key is 64 hex digits or base64 of 32 bytes, nothing else', () => {
    const key = randomBytes(32);
    expect(keyBytes(key.toString('hex'))).toEqual(key);
    expect(keyBytes(key.toString('base64'))).toEqual(key);
    expect(keyBytes(randomBytes(16).toString('hex'))).toBeUndefined();
    expect(keyBytes(randomBytes(24).toString('base64'))).toBeUndefined();
    expect(keyBytes(randomBytes(33).toString('base64'))).toBeUndefined();
    expect(keyBytes('correct horse battery staple')).toBeUndefined();
  });

  it('reads each key by env: or file: reference, the first encrypting; unset is no codec', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-keys-'));
    await writeFile(path.join(dir, 'k1.key'), `${k1.key.toString('base64')}\n`);
    const loaded = await loadPayloadCodecs({
      ASYNCJOB_PAYLOAD_KEYS: `k2=env:ASYNCJOB_PAYLOAD_KEY_2, k1=file:${path.join(dir, 'k1.key')}`,
      ASYNCJOB_PAYLOAD_KEY_2: k2.key.toString('hex'),
    });
    expect(loaded.encryptingKeyId).toBe('k2');
    expect(loaded.secretValues).toEqual([k2.key.toString('hex'), k1.key.toString('base64')]);
    const [old] = await new EncryptionCodec([k1]).encode([defaultPayloadConverter.toPayload(REQUEST)]);
    const [back] = await loaded.payloadCodecs[0]!.decode([old!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toEqual(REQUEST);
    expect(await loadPayloadCodecs({})).toEqual({ payloadCodecs: [], secretValues: [] });
  });

  it('plain first: new payloads stay plain text, the keys after it still decrypt', async () => {
    const loaded = await loadPayloadCodecs({
      ASYNCJOB_PAYLOAD_KEYS: 'plain, k1=env:ASYNCJOB_PAYLOAD_KEY_1',
      ASYNCJOB_PAYLOAD_KEY_1: k1.key.toString('hex'),
    });
    expect(loaded.encryptingKeyId).toBeUndefined();
    const codec = loaded.payloadCodecs[0]!;
    const payload = defaultPayloadConverter.toPayload(REQUEST);
    const [written] = await codec.encode([payload]);
    expect(written).toEqual(payload);
    expect(text(written!.metadata?.encoding)).toBe('json/plain');
    const [sealed] = await new EncryptionCodec([k1]).encode([payload]);
    const [back] = await codec.decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toEqual(REQUEST);
  });

  it.each([
    ['plain', ['"plain" needs at least one key after it (the keys that decrypt)']],
    ['k1=env:K1,plain', ['"plain" is only allowed as the first entry']],
    ['plain,k1=env:K1,plain', ['"plain" is only allowed as the first entry']],
  ])('refuses %s: plain only as the first entry, with a key after it', async (setting, problems) => {
    const err = (await loadPayloadCodecs({ ASYNCJOB_PAYLOAD_KEYS: setting, K1: k1.key.toString('hex') }).catch(
      (e: unknown) => e,
    )) as { problems: string[] };
    expect(err.problems).toEqual(problems.map((p) => `ASYNCJOB_PAYLOAD_KEYS: ${p}`));
  });

  it('refuses, every problem at once and no value shown: a short key, an unset variable, a missing file, bad syntax', async () => {
    const short = randomBytes(16).toString('hex');
    const err = (await loadPayloadCodecs({
      ASYNCJOB_PAYLOAD_KEYS: 'a=env:SHORT,b=env:UNSET,c=file:/nonexistent/c.key',
      SHORT: short,
    }).catch((e: unknown) => e)) as Error & { problems: string[] };
    expect(hasCode(err, 'ASYNCJOB_ERR_CONFIG_INVALID')).toBe(true);
    expect(err.problems).toEqual([
      'ASYNCJOB_PAYLOAD_KEYS: key a is not 32 bytes written as 64 hex digits or in base64',
      'ASYNCJOB_PAYLOAD_KEYS: key b: environment variable UNSET is not set',
      'ASYNCJOB_PAYLOAD_KEYS: key c: file /nonexistent/c.key cannot be read (ENOENT)',
    ]);
    expect(err.message).not.toContain(short);
    const syntax = (await loadPayloadCodecs({ ASYNCJOB_PAYLOAD_KEYS: 'k1=k1.key,k1=env:X,=env:Y' }).catch(
      (e: unknown) => e,
    )) as { problems: string[] };
    expect(syntax.problems).toEqual([
      'ASYNCJOB_PAYLOAD_KEYS: "k1=k1.key": write k1=env:NAME or k1=file:PATH',
      'ASYNCJOB_PAYLOAD_KEYS: "=env:Y": a key ID is 1-64 letters, digits, ".", "_" or "-"',
    ]);
  });
});
