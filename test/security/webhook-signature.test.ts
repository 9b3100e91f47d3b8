/**
 * W1, T4: webhook signatures are compared in constant time. A timing measurement would be flaky on a shared
 * machine, so this proves it structurally: every comparison goes through `crypto.timingSafeEqual` on buffers of
 * equal length (spied), every candidate is compared even after a match, and equal-length wrong signatures are
 * refused whichever byte differs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type * as Crypto from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { signWebhook, verifyWebhookSignature } from '../../src/webhooks/signature';

const calls = vi.hoisted(() => ({ lengths: [] as [number, number][] }));
// Hoisted above the imports by vitest: the module under test sees the spy.
vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof Crypto>();
  return {
    ...original,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls.lengths.push([a.byteLength, b.byteLength]);
      return original.timingSafeEqual(a, b);
    },
  };
});

const SECRET = 'whsec-constant-time-test';
const NOW_MS = 1_796_000_000_000;
const T = Math.floor(NOW_MS / 1000);
const BODY = Buffer.from('{"event_id":"evt-1","job_id":"job_1","state":"succeeded"}');
const GOOD = signWebhook(SECRET, T, BODY);
const check = (header: string) =>
  verifyWebhookSignature({ header, rawBody: BODY, secret: SECRET, nowMs: NOW_MS, toleranceMs: 300_000 });

/** The good signature with the hex digit at `index` changed: same length, one byte different. */
function flipAt(index: number): string {
  const c = GOOD[index]!;
  return GOOD.slice(0, index) + (c === '0' ? '1' : '0') + GOOD.slice(index + 1);
}

describe('W1, T4: constant-time webhook signature comparison', () => {
  beforeEach(() => {
    calls.lengths = [];
  });

  it('W1: the correct signature is valid, compared once with timingSafeEqual on 32-byte buffers', () => {
    expect(check(`t=${T},v1=${GOOD}`)).toEqual({ kind: 'valid', timestampMs: T * 1000 });
    expect(calls.lengths).toEqual([[32, 32]]);
  });

  it.each([0, 1, 31, 32, 62, 63])(
    'W1: an equal-length signature wrong at hex digit %i is refused as bad_signature through timingSafeEqual',
    (index) => {
      const wrong = flipAt(index);
      expect(wrong).toHaveLength(GOOD.length);
      expect(check(`t=${T},v1=${wrong}`)).toEqual({ kind: 'refused', reason: 'bad_signature' });
      expect(calls.lengths).toEqual([[32, 32]]);
    },
  );

  it('W1: with two candidates (secret rotation) both are compared even when the first matches, so time does not reveal which', () => {
    expect(check(`t=${T},v1=${GOOD},v1=${flipAt(5)}`).kind).toBe('valid');
    expect(calls.lengths).toEqual([
      [32, 32],
      [32, 32],
    ]);
    expect(check(`t=${T},v1=${flipAt(5)},v1=${GOOD}`).kind).toBe('valid');
  });

  it('W1: a signature of another length never reaches a comparison (refused as malformed, not compared byte by byte)', () => {
    expect(check(`t=${T},v1=${GOOD.slice(0, 62)}`)).toEqual({ kind: 'refused', reason: 'malformed_signature' });
    expect(check(`t=${T},v1=${GOOD}00`)).toEqual({ kind: 'refused', reason: 'malformed_signature' });
    expect(calls.lengths).toEqual([]);
  });

  it('W1: a signature over another body or another timestamp is refused', () => {
    expect(
      verifyWebhookSignature({
        header: `t=${T},v1=${GOOD}`,
        rawBody: Buffer.from(`${BODY.toString()} `),
        secret: SECRET,
        nowMs: NOW_MS,
        toleranceMs: 300_000,
      }).kind,
    ).toBe('refused');
    expect(check(`t=${T + 1},v1=${GOOD}`)).toEqual({ kind: 'refused', reason: 'bad_signature' });
  });

  it('W1: the source compares signatures only with timingSafeEqual (no ===, equals() or compare() on them)', () => {
    const source = readFileSync(path.join(__dirname, '..', '..', 'src', 'webhooks', 'signature.ts'), 'utf8');
    const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    expect(code).toMatch(/import \{[^}]*\btimingSafeEqual\b[^}]*\} from 'node:crypto'/);
    expect(code).toMatch(/timingSafeEqual\(candidate, expected\)/);
    expect(code).not.toMatch(/\b(candidate|expected)\s*[!=]==|[!=]==\s*(candidate|expected)\b/);
    expect(code).not.toMatch(/\.(equals|compare)\(/);
  });
});
