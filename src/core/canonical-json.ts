/**
 * Canonical JSON, the byte-exact form that request fingerprints and audit-chain hashes are computed over.
 *
 * Rules (a superset-compatible profile of RFC 8785, JCS):
 * - object keys sorted by UTF-16 code units, after Unicode NFC normalisation of the key;
 * - strings (keys and values) normalised to Unicode NFC, then escaped as JSON.stringify does;
 * - numbers in ECMAScript's shortest round-trip form (`1.0` and `1` are the same; `-0` becomes `0`);
 *   NaN and Infinity are refused;
 * - object properties whose value is `undefined` are omitted; `undefined` in an array is refused;
 * - only plain objects, arrays, strings, finite numbers, booleans and null are accepted (no Date, Map,
 *   BigInt, class instances), so two machines can never disagree about a value's form.
 * Pure and deterministic: safe in workflow code.
 */
import { AsyncJobError } from './errors';

/** Thrown for a value canonical JSON cannot represent; `path` names where (`$.items[2].at`). */
class CanonicalJsonError extends AsyncJobError {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super('ASYNCJOB_ERR_NOT_CANONICALIZABLE', `${message} at ${path}`);
  }
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Printable ASCII but `"` and `\\`: in NFC already and written as is between quotes (the common case). */
const PLAIN = /^[\u0020\u0021\u0023-\u005b\u005d-\u007e]*$/;

/** A code point at or above U+0080: without one a string is in NFC already, so normalising (a costly call) is skipped. */
const BEYOND_ASCII = /[^\p{ASCII}]/u;

function nfc(text: string): string {
  return BEYOND_ASCII.test(text) ? text.normalize('NFC') : text;
}

/** A string in NFC as JSON.stringify writes it. */
function quoted(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(nfc(text));
}

/**
 * The path of the value being written (`$.items[2].at`), kept as segments and joined only for an error: writing
 * stays free of string building for paths nobody reads.
 */
type PathSegments = (string | number)[];

function pathText(segments: PathSegments): string {
  return `$${segments.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('')}`;
}

function writeObject(value: Record<string, unknown>, path: PathSegments): string {
  const members: [key: string, rawKey: string][] = [];
  for (const rawKey of Object.keys(value)) if (value[rawKey] !== undefined) members.push([nfc(rawKey), rawKey]);
  members.sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
  let out = '{';
  for (let index = 0; index < members.length; index++) {
    const [key, rawKey] = members[index]!;
    if (index > 0) {
      if (members[index - 1]![0] === key)
        throw new CanonicalJsonError(`two keys normalise to the same key ${JSON.stringify(key)}`, pathText(path));
      out += ',';
    }
    path.push(rawKey);
    out += `${quoted(key)}:${write(value[rawKey], path)}`;
    path.pop();
  }
  return `${out}}`;
}

function writeArray(value: readonly unknown[], path: PathSegments): string {
  let out = '[';
  for (let index = 0; index < value.length; index++) {
    const item = value[index];
    path.push(index);
    if (item === undefined) throw new CanonicalJsonError('undefined array element', pathText(path));
    out += index > 0 ? `,${write(item, path)}` : write(item, path);
    path.pop();
  }
  return `${out}]`;
}

function write(value: unknown, path: PathSegments): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return quoted(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError(`non-finite number ${String(value)}`, pathText(path));
      return Object.is(value, -0) ? '0' : JSON.stringify(value);
    case 'object':
      if (Array.isArray(value)) return writeArray(value, path);
      if (!isPlainObject(value))
        throw new CanonicalJsonError(`unsupported object type ${value.constructor?.name ?? 'unknown'}`, pathText(path));
      return writeObject(value as Record<string, unknown>, path);
    default:
      throw new CanonicalJsonError(`unsupported value of type ${typeof value}`, pathText(path));
  }
}

/** Returns the canonical JSON text of `value`; throws {@link CanonicalJsonError} for what it cannot represent. */
export function canonicalJson(value: unknown): string {
  return write(value, []);
}
