import { describe, expect, it } from 'vitest';
import { issueText } from '../../src/core/issues';

describe('issueText', () => {
  it('names each field by its dotted path, whether zod gave the path as keys or it is already dotted', () => {
    const text = issueText([
      { path: ['policy', 'baseDelayMs'], message: 'too small' },
      { path: ['payload', 0, 'name'], message: 'required' },
      { path: 'variables.region', message: 'not declared' },
    ]);
    expect(text).toBe('policy.baseDelayMs: too small; payload.0.name: required; variables.region: not declared');
  });

  it('names the value itself by the root it is given, (input) unless named', () => {
    expect(issueText([{ path: [], message: 'expected an object' }])).toBe('(input): expected an object');
    expect(issueText([{ path: '', message: 'expected an object' }], '(request)')).toBe('(request): expected an object');
  });
});
