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

function write(value: unknown, path: string, out: string[]): void {
  if (value === null) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value.normalize('NFC')));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError(`non-finite number ${String(value)}`, path);
      out.push(Object.is(value, -0) ? '0' : JSON.stringify(value));
      return;
    case 'object': {
      if (Array.isArray(value)) {
        out.push('[');
        value.forEach((item: unknown, index) => {
          if (item === undefined) throw new CanonicalJsonError('undefined array element', `${path}[${index}]`);
          if (index > 0) out.push(',');
          write(item, `${path}[${index}]`, out);
        });
        out.push(']');
        return;
      }
      if (!isPlainObject(value)) {
        throw new CanonicalJsonError(`unsupported object type ${value.constructor?.name ?? 'unknown'}`, path);
      }
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, member]) => member !== undefined)
        .map(([rawKey, member]) => [rawKey.normalize('NFC'), member, rawKey] as const)
        .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
      out.push('{');
      entries.forEach(([key, member, rawKey], index) => {
        if (index > 0 && entries[index - 1]?.[0] === key) {
          throw new CanonicalJsonError(`two keys normalise to the same key ${JSON.stringify(key)}`, path);
        }
        if (index > 0) out.push(',');
        out.push(JSON.stringify(key), ':');
        write(member, `${path}.${rawKey}`, out);
      });
      out.push('}');
      return;
    }
    default:
      throw new CanonicalJsonError(`unsupported value of type ${typeof value}`, path);
  }
}

/** Returns the canonical JSON text of `value`; throws {@link CanonicalJsonError} for what it cannot represent. */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, '$', out);
  return out.join('');
}
