/**
 * Durations on the command line: an integer or decimal number followed by a unit, `500ms`, `30s`, `15m`, `2h`,
 * `1d`, `1.5h`. Pure.
 */

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/** The result of {@link parseDuration}. */
export type DurationResult = { kind: 'ok'; ms: number } | { kind: 'invalid'; message: string };

/**
 * Parses a positive duration into whole milliseconds. Refuses zero, negative numbers, missing or unknown units,
 * a fraction of a millisecond, and anything beyond 366 days.
 */
export function parseDuration(text: string): DurationResult {
  const m = DURATION.exec(text.trim());
  if (!m) return { kind: 'invalid', message: `"${text}" is not a duration (examples: 500ms, 30s, 15m, 2h, 1d)` };
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  if (!Number.isInteger(ms)) return { kind: 'invalid', message: `"${text}" is not a whole number of milliseconds` };
  if (ms <= 0) return { kind: 'invalid', message: `"${text}" must be longer than zero` };
  if (ms > 366 * UNIT_MS.d) return { kind: 'invalid', message: `"${text}" is longer than 366 days` };
  return { kind: 'ok', ms };
}

/** Formats milliseconds compactly for people: `850ms`, `42s`, `3m20s`, `2h5m`, `3d4h`. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(Math.round(ms));
  if (abs < 1000) return `${sign}${abs}ms`;
  const s = Math.floor(abs / 1000);
  if (s < 60) return `${sign}${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${sign}${m}m${s % 60 ? `${s % 60}s` : ''}`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${sign}${h}h${m % 60 ? `${m % 60}m` : ''}`;
  const d = Math.floor(h / 24);
  return `${sign}${d}d${h % 24 ? `${h % 24}h` : ''}`;
}
