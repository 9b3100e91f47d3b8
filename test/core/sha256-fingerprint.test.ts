import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkFingerprint, newIdempotencyToken, requestFingerprint, tokenDigest } from '../../src/core/fingerprint';
import { sha256Hex, sha256HexOfText } from '../../src/core/sha256';

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

describe('sha256 (FIPS 180-4)', () => {
  it.each([
    ['empty', '', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    [
      '448-bit',
      'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    ],
    [
      '896-bit',
      'abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu',
      'cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1',
    ],
  ])('matches the NIST vector %s', (_name, input, expected) => {
    expect(sha256Hex(ascii(input))).toBe(expected);
  });

  it('matches the NIST vector of one million "a"', () => {
    expect(sha256Hex(new Uint8Array(1_000_000).fill(0x61))).toBe(
      'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0',
    );
  });

  it('agrees with node:crypto on 2000 random inputs, including block-boundary lengths', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 300 }), (bytes) => {
        expect(sha256Hex(bytes)).toBe(createHash('sha256').update(bytes).digest('hex'));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('sha256HexOfText (UTF-8 as WHATWG TextEncoder writes it)', () => {
  it('agrees with node:crypto over the UTF-8 bytes of arbitrary strings, lone surrogates included', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((n) => String.fromCharCode(n)) }),
        (a, b) => {
          const text = a + b + a;
          expect(sha256HexOfText(text)).toBe(createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex'));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('hashes a lone surrogate as U+FFFD (EF BF BD), as the stored fingerprints were computed', () => {
    expect(sha256HexOfText('a\ud800b')).toBe(sha256Hex(Uint8Array.of(0x61, 0xef, 0xbf, 0xbd, 0x62)));
    expect(sha256HexOfText('\udc00')).toBe(sha256HexOfText('\ufffd'));
  });
});

describe('requestFingerprint (C1, I2)', () => {
  it.each([
    [
      'nested object',
      { b: [true, null, 'x'], a: 1 },
      'sha256:eca8cfb31ab74533e1eb2f4c74d2d55dfe3c79ac704787e54be8647ea7777eb1',
    ],
    [
      'NFC text, -0 and 1.0',
      { zero: -0, name: 'caf\u0065\u0301', amount: 1.0 },
      'sha256:0f775acede4bdea8024936be3ddfc9ecc140166ecdbe7d5f130e1358d1a8fffe',
    ],
    ['empty object', {}, 'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a'],
  ])('C1: is stable across machines for %s (fixed expected hash)', (_name, request, expected) => {
    expect(requestFingerprint(request)).toBe(expected);
  });

  it.each([
    ['key order', { a: 1, b: 2 }, { b: 2, a: 1 }],
    ['-0 and 0', { n: -0 }, { n: 0 }],
    ['1.0 and 1', { n: 1.0 }, { n: 1 }],
    ['NFC and NFD', { s: 'caf\u00e9' }, { s: 'cafe\u0301' }],
    ['NFD key', { ['\u00e9t\u00e9']: 1 }, { ['e\u0301te\u0301']: 1 }],
  ])('I2: treats %s as the same request', (_name, a, b) => {
    expect(requestFingerprint(a)).toBe(requestFingerprint(b));
  });

  it('I2: any changed value changes the fingerprint', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.integer()), fc.string(), fc.integer(), (base, key, value) => {
        fc.pre(base[key] !== value);
        expect(requestFingerprint({ ...base, [key]: value })).not.toBe(
          requestFingerprint({ ...base, [key]: value === 0 ? 1 : -value || 1 }),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('I2: checkFingerprint refuses a changed request with ASYNCJOB_ERR_FINGERPRINT_MISMATCH', () => {
    const a = requestFingerprint({ range: '2026-01' });
    const b = requestFingerprint({ range: '2026-02' });
    expect(checkFingerprint(a, a)).toEqual({ kind: 'ok' });
    const refused = checkFingerprint(a, b);
    expect(refused).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_FINGERPRINT_MISMATCH',
      existing: a,
      incoming: b,
    });
  });
});

describe('newIdempotencyToken (I1)', () => {
  it('I1: refuses fewer than 128 bits of randomness', () => {
    expect(newIdempotencyToken(new Uint8Array(15))).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_INSUFFICIENT_ENTROPY',
    });
  });

  it('I1: encodes every input byte (base64url, 6 bits per character, no padding)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 64 }), (bytes) => {
        const result = newIdempotencyToken(bytes);
        if (result.kind !== 'ok') throw new Error('refused');
        expect(result.token).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(result.token.length * 6).toBeGreaterThanOrEqual(bytes.length * 8);
        expect(Buffer.from(result.token, 'base64url').equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('I1: distinct random inputs give distinct tokens, and the digest never shows the token', () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const bytes = new Uint8Array(16);
      new DataView(bytes.buffer).setUint32(0, i);
      const r = newIdempotencyToken(bytes);
      if (r.kind === 'ok') tokens.add(r.token);
    }
    expect(tokens.size).toBe(1000);
    const [first] = tokens;
    expect(tokenDigest(first!)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(tokenDigest(first!)).not.toContain(first!);
  });
});
