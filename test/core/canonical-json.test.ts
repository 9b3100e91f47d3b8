/**
 * Canonical JSON (`src/core/canonical-json.ts`): its rules, and agreement with a plain reference implementation of
 * them on arbitrary values, so a faster writer can never change a stored hash or fingerprint.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical-json';

/** The rules written as plainly as possible: the reference the writer must agree with, text and refusals alike. */
function reference(value: unknown, path = '$'): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.normalize('NFC'));
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`non-finite number ${String(value)} at ${path}`);
      return Object.is(value, -0) ? '0' : JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value))
        return `[${value
          .map((item: unknown, i) => {
            if (item === undefined) throw new Error(`undefined array element at ${path}[${i}]`);
            return reference(item, `${path}[${i}]`);
          })
          .join(',')}]`;
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null)
        throw new Error(`unsupported object type ${value.constructor?.name ?? 'unknown'} at ${path}`);
      const members = Object.entries(value as Record<string, unknown>)
        .filter(([, member]) => member !== undefined)
        .map(([rawKey, member]) => [rawKey.normalize('NFC'), member, rawKey] as const)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${members
        .map(([key, member, rawKey], i) => {
          if (i > 0 && members[i - 1]![0] === key)
            throw new Error(`two keys normalise to the same key ${JSON.stringify(key)} at ${path}`);
          return `${JSON.stringify(key)}:${reference(member, `${path}.${rawKey}`)}`;
        })
        .join(',')}}`;
    }
    default:
      throw new Error(`unsupported value of type ${typeof value} at ${path}`);
  }
}

/** What `f` gives for `value`: its text, or the message it refused with. */
function outcome(f: (value: unknown) => string, value: unknown): string {
  try {
    return f(value);
  } catch (error) {
    return `refused: ${(error as Error).message.replace(/^ASYNCJOB_ERR_NOT_CANONICALIZABLE: /, '')}`;
  }
}

/** Strings with composed and decomposed accents, controls and astral characters beside plain ASCII. */
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('caf\u00e9', 'cafe\u0301', '\u00e9t\u00e9', 'e\u0301te\u0301', '\u0000\u001f"\\', '\ud83d\ude00'),
);

const values = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.double(),
    fc.constantFrom(-0, 0, 1.0, 1e21, 5e-324),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 5 }),
  ),
})).value;

describe('canonical JSON', () => {
  it('C1, I2: agrees with the reference on arbitrary values: the same text, or the same refusal at the same path', () => {
    fc.assert(
      fc.property(values, (value) => {
        expect(outcome(canonicalJson, value)).toBe(outcome((v) => reference(v), value));
      }),
      { numRuns: 3_000 },
    );
  });

  it('C1: sorts keys after NFC, writes -0 as 0, omits undefined members and refuses what JSON cannot hold', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], c: undefined, z: -0 })).toBe(
      '{"a":[true,null,"x"],"b":1,"z":0}',
    );
    expect(canonicalJson({ s: 'cafe\u0301' })).toBe(canonicalJson({ s: 'caf\u00e9' }));
    expect(() => canonicalJson({ list: [1, undefined] })).toThrow('undefined array element at $.list[1]');
    expect(() => canonicalJson({ at: new Date(0) })).toThrow('unsupported object type Date at $.at');
    expect(() => canonicalJson({ n: [{ x: Number.NaN }] })).toThrow('non-finite number NaN at $.n[0].x');
    expect(() => canonicalJson({ ['\u00e9']: 1, ['e\u0301']: 2 })).toThrow('two keys normalise to the same key');
  });
});
