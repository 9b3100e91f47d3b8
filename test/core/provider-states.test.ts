import { describe, expect, it } from 'vitest';
import { categorize, providerStateTableSchema } from '../../src/core/provider-states';

const table = providerStateTableSchema.parse({
  pending: ['queued', 'running'],
  success: ['succeeded'],
  failure: ['failed'],
  cancelled: ['cancelled'],
  expired: ['expired'],
});

describe('P1: provider state tables', () => {
  it.each([
    ['queued', 'pending'],
    ['running', 'pending'],
    ['succeeded', 'success'],
    ['failed', 'failure'],
    ['cancelled', 'cancelled'],
    ['expired', 'expired'],
    ['paused', 'unknown'],
    ['Running', 'unknown'],
    [' running', 'unknown'],
    ['', 'unknown'],
    [undefined, 'unknown'],
  ])('P1: %j is %s (exact matching by default)', (raw, category) => {
    expect(categorize(table, raw)).toBe(category);
  });

  it('P1: a case-insensitive table compares trimmed lower-case words', () => {
    const ci = providerStateTableSchema.parse({ pending: ['Running'], success: ['DONE'], caseInsensitive: true });
    expect(categorize(ci, ' running ')).toBe('pending');
    expect(categorize(ci, 'done')).toBe('success');
    expect(categorize(ci, 'finished')).toBe('unknown');
  });

  it('P1: a word listed in two categories is refused, naming the field', () => {
    const parsed = providerStateTableSchema.safeParse({ pending: ['done'], success: ['done'] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['success']);
  });
});
