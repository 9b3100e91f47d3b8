import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_VARIABLE_NAMES,
  MAX_VARIABLE_VALUE_CHARS,
  MAX_VARIABLES,
  type VariableDeclarations,
  checkOperationVariables,
  startVariablesSchema,
  variableDeclarationsSchema,
} from '../../src/core/operation-variables';

/** Parses a `variables:` block as a provider document gives it; throws on a refused one. */
function declare(block: unknown): VariableDeclarations {
  return variableDeclarationsSchema.parse(block);
}

/** The refusal's issues as `path: message` lines. */
function refusals(block: unknown, schema: typeof variableDeclarationsSchema | typeof startVariablesSchema) {
  const parsed = schema.safeParse(block);
  expect(parsed.success).toBe(false);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('variable declarations', () => {
  it('fills the defaults: type string, maxLength 500, not reserved', () => {
    expect(declare({ region: {} })).toEqual({ region: { type: 'string', maxLength: 500, reserved: false } });
  });

  it('keeps every field an adapter may give', () => {
    const block = {
      scope: {
        description: 'resource scope',
        type: 'string',
        pattern: 'subscriptions/[^/]+/resourceGroups/[^/]+',
        maxLength: 2000,
        reserved: true,
        required: true,
      },
      pageSize: { type: 'integer', default: '100' },
    };
    expect(declare(block)).toEqual({
      scope: { ...block.scope },
      pageSize: { type: 'integer', default: '100', maxLength: 500, reserved: false },
    });
  });

  it.each<[string, string, string]>([
    ['an upper-case first letter', 'Region', 'not a variable name'],
    ['a leading underscore', '_x', 'not a variable name'],
    ['a hyphen', 'a-b', 'not a variable name'],
    ['41 characters', `a${'b'.repeat(40)}`, 'not a variable name'],
    ['__proto__', '__proto__', 'not a variable name'],
    ...BUILT_IN_VARIABLE_NAMES.map((name): [string, string, string] => [`the built-in ${name}`, name, 'built-in name']),
  ])('refuses a name with %s', (_what, name, phrase) => {
    const block = JSON.parse(`{${JSON.stringify(name)}: {}}`) as unknown;
    const lines = refusals(block, variableDeclarationsSchema);
    expect(lines.join('\n')).toContain(phrase);
    expect(lines[0]!.startsWith(`${name}:`)).toBe(true);
  });

  it('accepts a 40-character name', () => {
    expect(Object.keys(declare({ [`a${'b'.repeat(39)}`]: {} }))).toHaveLength(1);
  });

  it.each([
    ['required and a default together', { required: true, default: 'x' }, 'x.default: a required variable'],
    ['a pattern that does not compile', { pattern: '([a-z' }, 'x.pattern: does not compile'],
    ['a default that fails its own pattern', { pattern: '[a-z]+', default: 'ABC' }, 'x.default: the default does'],
    ['a default with a slash, not reserved', { default: 'a/b' }, "x.default: the default contains '/'"],
    ['an integer default that is not one', { type: 'integer', default: '1.5' }, 'x.default: the default must be'],
    ['a default over maxLength', { maxLength: 2, default: 'abc' }, 'x.default: the default is 3 characters'],
    ['maxLength over 2000', { maxLength: 2001 }, 'x.maxLength'],
    ['maxLength zero', { maxLength: 0 }, 'x.maxLength'],
    ['required: false', { required: false }, 'x.required'],
    ['a type not offered', { type: 'number' }, 'x.type'],
    ['an unknown field', { secret: true }, 'x: Unrecognized key'],
    ['a default that is not text', { default: 5 }, 'x.default'],
  ])('refuses %s', (_what, declaration, start) => {
    const lines = refusals({ x: declaration }, variableDeclarationsSchema);
    expect(
      lines.some((line) => line.startsWith(start)),
      lines.join('\n'),
    ).toBe(true);
  });

  it(`refuses more than ${MAX_VARIABLES} declarations`, () => {
    const block = Object.fromEntries(Array.from({ length: MAX_VARIABLES + 1 }, (_, i) => [`v${i}`, {}]));
    expect(refusals(block, variableDeclarationsSchema).join('\n')).toContain(`at most ${MAX_VARIABLES}`);
  });
});

describe('variables given at start', () => {
  it('accepts names and single-line values', () => {
    const given = { scope: 'subscriptions/s1/resourceGroups/rg', region: 'eu-west-1', empty: '' };
    expect(startVariablesSchema.parse(given)).toEqual(given);
  });

  it.each([
    ['a built-in name', { token: 'x' }, 'token: '],
    ['a bad name', { 'Bad-Name': 'x' }, 'Bad-Name: '],
    ['a newline', { a: 'x\ny' }, 'a: must be one line'],
    ['a tab', { a: 'x\ty' }, 'a: must be one line'],
    ['a NUL', { a: 'x\u0000y' }, 'a: must be one line'],
    ['DEL', { a: 'x\u007fy' }, 'a: must be one line'],
    ['a line separator', { a: 'x\u2028y' }, 'a: must be one line'],
    ['a value too long', { a: 'x'.repeat(MAX_VARIABLE_VALUE_CHARS + 1) }, 'a: 2001 characters'],
    ['a number', { a: 5 }, 'a: '],
    ['__proto__', JSON.parse('{"__proto__": "x"}') as unknown, '__proto__: '],
  ])('refuses %s, naming the variable', (_what, given, start) => {
    const lines = refusals(given, startVariablesSchema);
    expect(
      lines.some((line) => line.startsWith(start)),
      lines.join('\n'),
    ).toBe(true);
  });

  it(`refuses more than ${MAX_VARIABLES} variables`, () => {
    const given = Object.fromEntries(Array.from({ length: MAX_VARIABLES + 1 }, (_, i) => [`v${i}`, 'x']));
    expect(refusals(given, startVariablesSchema).join('\n')).toContain(`at most ${MAX_VARIABLES}`);
  });

  it('accepts a value of exactly the largest length', () => {
    expect(startVariablesSchema.safeParse({ a: 'x'.repeat(MAX_VARIABLE_VALUE_CHARS) }).success).toBe(true);
  });
});

describe('checkOperationVariables: the given variables against the declarations', () => {
  const declared = declare({
    scope: { pattern: 'subscriptions/[^/]+/resourceGroups/[^/]+', reserved: true, required: true },
    bucket: { pattern: '[a-z0-9.-]{3,63}' },
    region: { default: 'us-east-1' },
    pageSize: { type: 'integer' },
    label: { maxLength: 5 },
  });
  const scope = 'subscriptions/s1/resourceGroups/rg';

  it('returns the given values with defaults applied; an optional variable not given stays absent', () => {
    expect(checkOperationVariables(declared, { scope, pageSize: '-20' })).toEqual({
      ok: true,
      values: { scope, region: 'us-east-1', pageSize: '-20' },
    });
  });

  it('a given value wins over the default', () => {
    expect(checkOperationVariables(declared, { scope, region: 'eu-west-1' })).toEqual({
      ok: true,
      values: { scope, region: 'eu-west-1' },
    });
  });

  it('an adapter that declares none accepts none and returns none', () => {
    expect(checkOperationVariables(undefined, undefined)).toEqual({ ok: true, values: {} });
    expect(checkOperationVariables({}, {})).toEqual({ ok: true, values: {} });
    expect(checkOperationVariables(undefined, { region: 'x' })).toEqual({
      ok: false,
      issues: [{ path: 'variables.region', message: 'not declared: the adapter declares no variables' }],
    });
  });

  it.each([
    ['an unknown name, listing the declared ones', { scope, bukket: 'x' }, 'bukket', 'bucket, label, pageSize'],
    ['a missing required variable', {}, 'scope', 'required by the adapter and not given'],
    ['a value that misses the pattern', { scope, bucket: 'UPPER' }, 'bucket', 'does not match the pattern'],
    ['a pattern matched only in part (anchored)', { scope, bucket: 'ab' }, 'bucket', 'does not match'],
    ['a pattern matched only as a prefix', { scope: `${scope}/x` }, 'scope', 'does not match'],
    ['an integer with a fraction', { scope, pageSize: '1.5' }, 'pageSize', 'must be an integer'],
    ['an integer with a leading zero', { scope, pageSize: '07' }, 'pageSize', 'must be an integer'],
    ['an integer beyond 2^53', { scope, pageSize: '9007199254740993' }, 'pageSize', 'must be an integer'],
    ['an empty integer', { scope, pageSize: '' }, 'pageSize', 'must be an integer'],
    ['a value over maxLength', { scope, label: 'abcdef' }, 'label', '6 characters long, at most 5'],
    ['a value over the default maxLength', { scope, region: 'r'.repeat(501) }, 'region', 'at most 500'],
    ['a slash in a variable not reserved', { scope, region: 'eu/west' }, 'region', 'reserved: true'],
  ])('refuses %s, naming the variable', (_what, given, name, phrase) => {
    const check = checkOperationVariables(declared, given);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.issues).toContainEqual({ path: `variables.${name}`, message: expect.stringContaining(phrase) });
  });

  it('names every problem at once', () => {
    const check = checkOperationVariables(declared, { bucket: 'X', pageSize: 'many', other: 'y' });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.issues.map((i) => i.path)).toEqual([
      'variables.other',
      'variables.bucket',
      'variables.pageSize',
      'variables.scope',
    ]);
  });

  it('a reserved variable keeps its slashes', () => {
    const check = checkOperationVariables(declared, { scope });
    expect(check.ok && check.values.scope).toBe(scope);
  });
});
