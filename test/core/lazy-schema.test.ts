import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { lazySchema } from '../../src/core/lazy-schema';

describe('lazySchema: a schema built on first use (a cached workflow pays only for the schemas it parses with)', () => {
  it('builds nothing until first used, then once', () => {
    let builds = 0;
    const schema = lazySchema(() => {
      builds += 1;
      return z.object({ id: z.string().min(1) });
    });
    expect(builds).toBe(0);
    expect(schema.parse({ id: 'a' })).toEqual({ id: 'a' });
    expect(schema.safeParse({ id: '' }).success).toBe(false);
    expect(builds).toBe(1);
  });

  it('behaves as the schema inside other schemas, with the same errors, enum options and instanceof', () => {
    const state = lazySchema(() => z.enum(['queued', 'running']));
    const job = lazySchema(() => z.object({ state, tags: z.array(state).max(2) }).strict());
    expect(state.options).toEqual(['queued', 'running']);
    expect(state instanceof z.ZodType).toBe(true);
    expect(job.parse({ state: 'queued', tags: ['running'] })).toEqual({ state: 'queued', tags: ['running'] });
    const bad = job.safeParse({ state: 'done', tags: [], extra: 1 });
    const plain = z
      .object({ state: z.enum(['queued', 'running']), tags: z.array(z.enum(['queued', 'running'])).max(2) })
      .strict();
    expect(bad.success).toBe(false);
    expect(bad.error?.issues).toEqual(plain.safeParse({ state: 'done', tags: [], extra: 1 }).error?.issues);
    expect(job.extend({ n: z.number() }).parse({ state: 'running', tags: [], n: 1 })).toEqual({
      state: 'running',
      tags: [],
      n: 1,
    });
    expect(job.optional().parse(undefined)).toBeUndefined();
  });
});

describe('lazySchema in a module the worker shares between workflows (frozen once loaded)', () => {
  it('refuses to be frozen, without building, and stays usable', () => {
    let builds = 0;
    const schema = lazySchema(() => {
      builds += 1;
      return z.object({ id: z.string().min(1) });
    });
    expect(Object.isFrozen(schema)).toBe(false);
    expect(() => Object.freeze(schema)).toThrow(TypeError);
    expect(() => Object.preventExtensions(schema)).toThrow(TypeError);
    expect(builds).toBe(0);
    expect(schema.parse({ id: 'a' })).toEqual({ id: 'a' });
    expect(Object.isFrozen(schema)).toBe(false);
  });
});
