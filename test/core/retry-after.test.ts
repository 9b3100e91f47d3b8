import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseNextCheckAt, parsePollAfterSeconds, parseRetryAfter } from '../../src/core/retry-after';

const RECEIVED = Date.UTC(1994, 10, 6, 8, 49, 0); // Sun, 06 Nov 1994 08:49:00 GMT
const MAX = 6 * 3600 * 1000;

describe('Retry-After (P3, H1)', () => {
  it.each([
    ['delta-seconds', '120', RECEIVED + 120_000],
    ['delta-seconds zero', '0', RECEIVED],
    ['delta-seconds with spaces', ' 5 ', RECEIVED + 5_000],
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:51:37 GMT', RECEIVED + 157_000],
    ['RFC 850 date', 'Sunday, 06-Nov-94 08:51:37 GMT', RECEIVED + 157_000],
    ['asctime date', 'Sun Nov  6 08:51:37 1994', RECEIVED + 157_000],
    ['HTTP-date in the past (means now)', 'Sun, 06 Nov 1994 08:00:00 GMT', RECEIVED],
  ])('P3: parses Retry-After as %s', (_name, raw, expected) => {
    expect(parseRetryAfter(raw, RECEIVED, MAX)).toEqual({ kind: 'ok', atMs: expected });
  });

  it.each([
    ['negative seconds', '-5', 'negative'],
    ['fractional seconds', '1.5', 'unparseable'],
    ['garbage', 'soon', 'unparseable'],
    ['wrong weekday name', 'Sun, 06-Nov-94 08:51:37 GMT', 'unparseable'],
    ['impossible date', 'Mon, 30 Feb 2026 10:00:00 GMT', 'unparseable'],
    ['not GMT', 'Sun, 06 Nov 1994 08:51:37 CET', 'unparseable'],
    ['absurd seconds', String(7 * 3600), 'absurd'],
    ['absurd date', 'Mon, 07 Nov 1994 08:49:00 GMT', 'absurd'],
  ])('P3: rejects Retry-After with %s and says why', (_name, raw, reason) => {
    expect(parseRetryAfter(raw, RECEIVED, MAX)).toMatchObject({ kind: 'rejected', reason });
  });

  it('P3: reads RFC 850 two-digit years within 50 years of the answer', () => {
    const ref = Date.UTC(2026, 0, 1);
    expect(parseHttpDate('Thursday, 01-Jan-70 00:00:00 GMT', ref)).toBe(Date.UTC(2070, 0, 1));
    expect(parseHttpDate('Monday, 01-Jan-90 00:00:00 GMT', ref)).toBe(Date.UTC(1990, 0, 1));
  });
});

describe('provider poll hints (P3)', () => {
  const limits = { receivedAtMs: RECEIVED, maxHintMs: MAX, deadlineMs: RECEIVED + 3_600_000 };
  it.each([
    ['pollAfterSeconds number', 'pollAfterSeconds', 30, RECEIVED + 30_000],
    ['pollAfterSeconds string', 'pollAfterSeconds', '2.5', RECEIVED + 2_500],
    ['nextCheckAt ISO', 'nextCheckAt', '1994-11-06T09:00:00Z', Date.UTC(1994, 10, 6, 9, 0, 0)],
    ['nextCheckAt with offset', 'nextCheckAt', '1994-11-06T10:00:00+01:00', Date.UTC(1994, 10, 6, 9, 0, 0)],
    ['nextCheckAt in the past (means now)', 'nextCheckAt', '1994-11-06T08:00:00Z', RECEIVED],
  ])('P3: uses a valid hint: %s', (_name, field, value, expected) => {
    const parsed =
      field === 'pollAfterSeconds' ? parsePollAfterSeconds(value, limits) : parseNextCheckAt(value, limits);
    expect(parsed).toEqual({ kind: 'ok', atMs: expected });
  });

  it.each([
    ['negative pollAfterSeconds', 'pollAfterSeconds', -1, 'negative'],
    ['non-numeric pollAfterSeconds', 'pollAfterSeconds', 'later', 'unparseable'],
    ['object pollAfterSeconds', 'pollAfterSeconds', { s: 1 }, 'unparseable'],
    ['NaN pollAfterSeconds', 'pollAfterSeconds', Number.NaN, 'unparseable'],
    ['absurd pollAfterSeconds', 'pollAfterSeconds', 10 * 3600, 'absurd'],
    ['nextCheckAt past our deadline', 'nextCheckAt', '1994-11-06T10:00:00Z', 'past_deadline'],
    ['nextCheckAt without offset', 'nextCheckAt', '1994-11-06T09:00:00', 'unparseable'],
    ['nextCheckAt free text', 'nextCheckAt', 'tomorrow', 'unparseable'],
  ])('P3: rejects %s with the reason', (_name, field, value, reason) => {
    const parsed =
      field === 'pollAfterSeconds' ? parsePollAfterSeconds(value, limits) : parseNextCheckAt(value, limits);
    expect(parsed).toMatchObject({ kind: 'rejected', reason });
  });

  it('P3: a hint inside maxHintMs but after the deadline is rejected as past_deadline', () => {
    expect(parsePollAfterSeconds(3601, limits)).toMatchObject({ kind: 'rejected', reason: 'past_deadline' });
  });
});
