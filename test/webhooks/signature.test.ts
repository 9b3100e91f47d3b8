import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhookSignature } from '../../src/webhooks/signature';

const secret = 'whsec_test';
const body = Buffer.from('{"event_id":"e1","job_id":"j1","state":"succeeded"}');
const now = 1_790_000_000_000;
const t = Math.floor(now / 1000);
const check = (header: string | undefined, overrides: Partial<{ rawBody: Buffer; nowMs: number }> = {}) =>
  verifyWebhookSignature({ header, rawBody: body, secret, nowMs: now, toleranceMs: 300_000, ...overrides });

describe('webhook signatures (W1)', () => {
  it('W1: accepts a genuine signature', () => {
    expect(check(`t=${t},v1=${signWebhook(secret, t, body)}`)).toEqual({ kind: 'valid', timestampMs: t * 1000 });
  });

  it('W1: accepts any of several v1 values (secret rotation)', () => {
    expect(check(`t=${t},v1=${'0'.repeat(64)},v1=${signWebhook(secret, t, body)}`).kind).toBe('valid');
  });

  it.each([
    ['missing header', undefined, 'missing_signature'],
    ['no timestamp', `v1=${'a'.repeat(64)}`, 'malformed_signature'],
    ['short signature', `t=${t},v1=abcd`, 'malformed_signature'],
    ['garbage', 'hello', 'malformed_signature'],
    ['wrong secret', `t=${t},v1=${signWebhook('other', t, body)}`, 'bad_signature'],
    ['signature of another timestamp', `t=${t},v1=${signWebhook(secret, t - 1, body)}`, 'bad_signature'],
    ['stale timestamp', `t=${t - 3600},v1=${signWebhook(secret, t - 3600, body)}`, 'stale_timestamp'],
    ['future timestamp', `t=${t + 3600},v1=${signWebhook(secret, t + 3600, body)}`, 'stale_timestamp'],
  ])('W1: refuses %s', (_name, header, reason) => {
    expect(check(header)).toEqual({ kind: 'refused', reason });
  });

  it('W1: refuses a body changed after signing', () => {
    const header = `t=${t},v1=${signWebhook(secret, t, body)}`;
    expect(check(header, { rawBody: Buffer.from(body.toString().replace('succeeded', 'failed')) })).toEqual({
      kind: 'refused',
      reason: 'bad_signature',
    });
  });
});
