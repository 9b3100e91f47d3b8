import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFieldPath, readField } from '../../../src/adapters/providers';

describe('field paths', () => {
  it.each([
    ['state', { state: 'queued' }, 'queued'],
    ['metadata.state', { metadata: { state: 'RUNNING' } }, 'RUNNING'],
    ['jobs[1].job_id', { jobs: [{ job_id: 'a' }, { job_id: 'b' }] }, 'b'],
    ['jobs.0.job_id', { jobs: [{ job_id: 'a' }] }, 'a'],
    ['matrix[1][0]', { matrix: [[1], [2, 3]] }, 2],
    ['error', { error: null }, null],
  ])('reads %s', (path, root, expected) => {
    expect(readField(root, path)).toEqual({ found: true, value: expected });
  });

  it.each([
    ['missing', { state: 'x' }],
    ['state.inner', { state: 'x' }],
    ['jobs[2]', { jobs: [1] }],
    ['jobs.name', { jobs: [1] }],
  ])('reports %s as not found', (path, root) => {
    expect(readField(root, path)).toEqual({ found: false });
  });

  it.each(['__proto__', 'a.__proto__', 'constructor', 'a.constructor.name', 'prototype', 'toString', 'hasOwnProperty'])(
    'F8: never reads through the prototype chain (%s)',
    (path) => {
      expect(readField({ a: {} }, path)).toEqual({ found: false });
    },
  );

  it('F8: a JSON own key "__proto__" is still refused', () => {
    const hostile = JSON.parse('{"__proto__": {"state": "succeeded"}}') as unknown;
    expect(readField(hostile, '__proto__.state')).toEqual({ found: false });
    expect(parseFieldPath('__proto__.state')).toEqual({
      ok: false,
      message: 'the key "__proto__" is not allowed in a field path',
    });
  });

  it('does not read properties of class instances or strings', () => {
    expect(readField({ d: new Date(0) }, 'd.getTime')).toEqual({ found: false });
    expect(readField({ s: 'abc' }, 's.length')).toEqual({ found: false });
  });

  it.each(['', 'a..b', 'a.', 'a[x]', 'a b', 'a[-1]'])('refuses the malformed path "%s"', (path) => {
    expect(parseFieldPath(path).ok).toBe(false);
  });

  it('reads exactly what was written at any valid key path (property)', () => {
    const key = fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}$/).filter((k) => !['constructor', 'prototype'].includes(k));
    fc.assert(
      fc.property(fc.array(key, { minLength: 1, maxLength: 6 }), fc.jsonValue(), (keys, value) => {
        const root: Record<string, unknown> = {};
        let cursor = root;
        keys.forEach((k, i) => {
          if (i === keys.length - 1) cursor[k] = value;
          else {
            const next: Record<string, unknown> = {};
            cursor[k] = next;
            cursor = next;
          }
        });
        expect(readField(root, keys.join('.'))).toEqual({ found: true, value });
      }),
    );
  });
});
