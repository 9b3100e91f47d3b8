import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/cli/duration';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1.5h', 5_400_000],
    ['0.5s', 500],
    [' 15m ', 900_000],
  ])('reads %s as %i ms', (text, ms) => {
    expect(parseDuration(text)).toEqual({ kind: 'ok', ms });
  });

  it.each([
    ['15', /not a duration/],
    ['m', /not a duration/],
    ['-5m', /not a duration/],
    ['5 minutes', /not a duration/],
    ['5M', /not a duration/],
    ['0s', /longer than zero/],
    ['0.5ms', /whole number of milliseconds/],
    ['400d', /366 days/],
    ['', /not a duration/],
  ])('refuses %j', (text, message) => {
    const parsed = parseDuration(text);
    expect(parsed.kind).toBe('invalid');
    expect(parsed.kind === 'invalid' && parsed.message).toMatch(message);
  });
});

describe('formatDuration', () => {
  it.each([
    [850, '850ms'],
    [42_000, '42s'],
    [200_000, '3m20s'],
    [900_000, '15m'],
    [7_500_000, '2h5m'],
    [86_400_000 * 3 + 3_600_000 * 4, '3d4h'],
    [-5_000, '-5s'],
  ])('formats %i ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('round-trips through parseDuration for whole units', () => {
    for (const text of ['500ms', '30s', '15m', '2h', '1d']) {
      const parsed = parseDuration(text);
      expect(parsed.kind === 'ok' && formatDuration(parsed.ms)).toBe(text);
    }
  });
});
