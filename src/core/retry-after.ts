/**
 * Retry-After (RFC 9110 section 10.2.3) and provider poll hints (P3), parsed and validated without the clock:
 * every relative value is measured from the answer's `receivedAtMs`. A rejected value carries the reason, which
 * the planner records (T3).
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const LONG_DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

const IMF_FIXDATE = /^([A-Za-z]{3}), (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const RFC850_DATE = /^([A-Za-z]+), (\d{2})-([A-Za-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const ASCTIME_DATE = /^([A-Za-z]{3}) ([A-Za-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

function utcMs(year: number, monthName: string, day: number, h: number, m: number, s: number): number | undefined {
  const month = MONTHS.indexOf(monthName);
  if (month < 0 || day < 1 || day > 31 || h > 23 || m > 59 || s > 60) return undefined;
  const ms = Date.UTC(year, month, day, h, m, Math.min(s, 59));
  // Reject dates that roll over (Feb 30 -> Mar 2).
  if (new Date(ms).getUTCDate() !== day) return undefined;
  return ms;
}

/**
 * Parses an HTTP-date in any of the three forms RFC 9110 requires recipients to accept (IMF-fixdate,
 * RFC 850, asctime) to epoch ms; `undefined` when it is none of them. RFC 850 two-digit years are read as
 * the nearest year not more than 50 years in the future of `referenceMs` (RFC 9110 section 5.6.7).
 */
export function parseHttpDate(text: string, referenceMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m) {
    if (!DAYS.includes(m[1]!)) return undefined;
    return utcMs(Number(m[4]), m[3]!, Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  }
  m = RFC850_DATE.exec(text);
  if (m) {
    if (!LONG_DAYS.includes(m[1]!)) return undefined;
    const refYear = new Date(referenceMs).getUTCFullYear();
    let year = Math.floor(refYear / 100) * 100 + Number(m[4]);
    if (year > refYear + 50) year -= 100;
    return utcMs(year, m[3]!, Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  }
  m = ASCTIME_DATE.exec(text);
  if (m) {
    if (!DAYS.includes(m[1]!)) return undefined;
    return utcMs(Number(m[7]), m[2]!, Number(m[3]!.trim()), Number(m[4]), Number(m[5]), Number(m[6]));
  }
  return undefined;
}

/** Why a Retry-After value or a provider hint was not used. */
type HintRejection = 'unparseable' | 'negative' | 'absurd' | 'past_deadline';

/** A validated wait instruction from the provider, as an absolute time. */
export type ParsedHint = { kind: 'ok'; atMs: number } | { kind: 'rejected'; reason: HintRejection; detail: string };

/**
 * Parses a raw `Retry-After` value (delta-seconds or HTTP-date) to the absolute time before which we must not
 * call again, measured from `receivedAtMs`. An HTTP-date in the past means "now" (`atMs = receivedAtMs`).
 * Values more than `maxHintMs` away are rejected as absurd. The deadline is not checked here: a Retry-After
 * beyond the deadline still forbids polling before it, so the planner stops instead (P3, S3).
 */
export function parseRetryAfter(raw: string, receivedAtMs: number, maxHintMs: number): ParsedHint {
  const text = raw.trim();
  if (/^-\d+$/.test(text)) return { kind: 'rejected', reason: 'negative', detail: `Retry-After "${raw}" is negative` };
  let atMs: number;
  if (/^\d+$/.test(text)) {
    atMs = receivedAtMs + Number(text) * 1000;
  } else {
    const date = parseHttpDate(text, receivedAtMs);
    if (date === undefined)
      return {
        kind: 'rejected',
        reason: 'unparseable',
        detail: `Retry-After "${raw}" is neither seconds nor an HTTP-date`,
      };
    atMs = Math.max(date, receivedAtMs);
  }
  if (!Number.isFinite(atMs) || atMs - receivedAtMs > maxHintMs) {
    return { kind: 'rejected', reason: 'absurd', detail: `Retry-After "${raw}" is more than ${maxHintMs} ms away` };
  }
  return { kind: 'ok', atMs };
}

/** The limits a provider poll hint is validated against. */
export interface HintLimits {
  /** When the answer carrying the hint arrived, epoch ms. */
  receivedAtMs: number;
  /** Hints further away than this are absurd. */
  maxHintMs: number;
  /** Our own deadline, epoch ms: a hint beyond it is rejected (P3). */
  deadlineMs: number;
}

function check(atMs: number, what: string, limits: HintLimits): ParsedHint {
  if (atMs - limits.receivedAtMs > limits.maxHintMs)
    return { kind: 'rejected', reason: 'absurd', detail: `${what} is more than ${limits.maxHintMs} ms away` };
  if (atMs > limits.deadlineMs)
    return { kind: 'rejected', reason: 'past_deadline', detail: `${what} is after our deadline` };
  return { kind: 'ok', atMs };
}

/**
 * Validates a provider's `pollAfterSeconds` hint (a number, or a string of a decimal number). Negative,
 * non-numeric, absurd (> maxHintMs) or past-deadline hints are rejected with the reason (P3).
 */
export function parsePollAfterSeconds(value: unknown, limits: HintLimits): ParsedHint {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)
        ? Number(value)
        : NaN;
  if (!Number.isFinite(n))
    return {
      kind: 'rejected',
      reason: 'unparseable',
      detail: `pollAfterSeconds ${JSON.stringify(String(value)).slice(0, 80)} is not a number`,
    };
  if (n < 0) return { kind: 'rejected', reason: 'negative', detail: `pollAfterSeconds ${n} is negative` };
  return check(limits.receivedAtMs + Math.round(n * 1000), `pollAfterSeconds ${n}`, limits);
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Validates a provider's `nextCheckAt` hint: an ISO-8601 instant with an explicit offset, or epoch ms as a
 * number. A time already past means "now". Unparseable, absurd or past-deadline hints are rejected (P3).
 */
export function parseNextCheckAt(value: unknown, limits: HintLimits): ParsedHint {
  let atMs = NaN;
  if (typeof value === 'string' && ISO_INSTANT.test(value)) atMs = Date.parse(value);
  else if (typeof value === 'number' && Number.isInteger(value) && value >= 0) atMs = value;
  if (!Number.isFinite(atMs))
    return {
      kind: 'rejected',
      reason: 'unparseable',
      detail: `nextCheckAt ${JSON.stringify(String(value)).slice(0, 80)} is not an instant`,
    };
  return check(Math.max(atMs, limits.receivedAtMs), `nextCheckAt ${String(value)}`, limits);
}
