/**
 * Safe reading of a JSON value by a dotted field path (`metadata.state`, `jobs[0].job_id`, `items.0.id`).
 * Provider answers are hostile input (F8): a path never walks the prototype chain, never reads `__proto__`,
 * `prototype` or `constructor`, and only reads own properties of plain JSON objects and arrays.
 */

/** One step of a field path: an object key or an array index. */
export type FieldPathSegment = string | number;

/** The result of reading a field: found with its value, or absent (missing, or a step that is not a container). */
export type FieldRead = { found: true; value: unknown } | { found: false };

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
const KEY = /^[A-Za-z0-9_$@:-]+$/;
const MAX_PATH_LENGTH = 200;
const MAX_SEGMENTS = 32;

/**
 * Parses a field path into segments, or returns a message saying why it is invalid. Keys are
 * `[A-Za-z0-9_$@:-]+`; `[n]` or a purely numeric key is an array index. Forbidden keys: `__proto__`,
 * `prototype`, `constructor`.
 */
export function parseFieldPath(
  path: string,
): { ok: true; segments: FieldPathSegment[] } | { ok: false; message: string } {
  if (path.length === 0) return { ok: false, message: 'a field path must not be empty' };
  if (path.length > MAX_PATH_LENGTH)
    return { ok: false, message: `a field path is at most ${MAX_PATH_LENGTH} characters` };
  const segments: FieldPathSegment[] = [];
  for (const part of path.split('.')) {
    const match = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!match) return { ok: false, message: `invalid field path segment "${part}"` };
    const key = match[1] ?? '';
    const indexes = match[2] ?? '';
    if (key === '' && indexes === '') return { ok: false, message: `empty segment in field path "${path}"` };
    if (key !== '') {
      if (!KEY.test(key))
        return { ok: false, message: `invalid key "${key}" in field path (allowed: letters, digits, _ $ @ : -)` };
      if (FORBIDDEN.has(key)) return { ok: false, message: `the key "${key}" is not allowed in a field path` };
      segments.push(/^\d+$/.test(key) ? Number(key) : key);
    }
    for (const index of indexes.matchAll(/\[(\d+)\]/g)) segments.push(Number(index[1]));
  }
  if (segments.length > MAX_SEGMENTS)
    return { ok: false, message: `a field path has at most ${MAX_SEGMENTS} segments` };
  return { ok: true, segments };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Reads `path` in `root`. Returns `{ found: false }` when a step is missing, is not an own property, or crosses
 * a value that is not a plain object or array; an invalid path (including a forbidden key) is never found.
 * A JSON `null` is found (its value is `null`). Pure; safe to repeat.
 */
export function readField(root: unknown, path: string | readonly FieldPathSegment[]): FieldRead {
  let segments: readonly FieldPathSegment[];
  if (typeof path === 'string') {
    const parsed = parseFieldPath(path);
    if (!parsed.ok) return { found: false };
    segments = parsed.segments;
  } else {
    segments = path;
  }
  let current: unknown = root;
  for (const segment of segments) {
    if (Array.isArray(current)) {
      if (typeof segment !== 'number' || !Number.isSafeInteger(segment) || segment < 0 || segment >= current.length)
        return { found: false };
      current = current[segment] as unknown;
    } else if (isPlainObject(current)) {
      const key = String(segment);
      if (FORBIDDEN.has(key) || !Object.prototype.hasOwnProperty.call(current, key)) return { found: false };
      current = current[key];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}
