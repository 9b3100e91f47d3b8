import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, EXIT } from '../../src/core/codes';
import { idSchema, startRequestSchema } from '../../src/core/start-request';
import { WORKFLOW_BUNDLER_OPTIONS } from '../../src/workflow-bundle';

const CORE = join(__dirname, '../../src/core');
const files = readdirSync(CORE).filter((f) => f.endsWith('.ts'));

describe('src/core is pure (no I/O, no clock, no randomness)', () => {
  it.each(files)(
    '%s imports only zod, @noble/hashes, @noble/curves ed25519 and other core modules, and reads no clock or randomness',
    (file) => {
      const text = readFileSync(join(CORE, file), 'utf8');
      const imports = [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
      for (const spec of imports)
        expect(
          spec === 'zod' ||
            /^@noble\/hashes\/(sha2|utils)\.js$/.test(spec) ||
            spec === '@noble/curves/ed25519.js' ||
            /^\.\/[a-z0-9-]+$/.test(spec),
          `${file} imports ${spec}`,
        ).toBe(true);
      expect(text).not.toMatch(/Date\.now\(|Math\.random\(|new Date\(\)|process\.|require\(/);
    },
  );
});

describe('stable error codes', () => {
  it('every ASYNCJOB_ERR_ code used in src/core is in the one registry (codes.ts), each with its data', () => {
    const used = new Set(
      files.flatMap((f) => [...readFileSync(join(CORE, f), 'utf8').matchAll(/ASYNCJOB_ERR_[A-Z_]+/g)].map((m) => m[0])),
    );
    for (const code of used) expect(Object.keys(ERROR_CODES), code).toContain(code);
    for (const [code, { exit, retryable, meaning }] of Object.entries(ERROR_CODES)) {
      expect(Object.values(EXIT), code).toContain(exit);
      expect(typeof retryable, code).toBe('boolean');
      expect(meaning.length, code).toBeGreaterThan(10);
    }
  });
});

/**
 * What the worker does to a module its workflows share (@temporalio/worker's reusable V8 context): freeze every
 * object reachable from its exports, and every function without looking inside; an object that cannot be frozen is
 * left as it is.
 */
function freezeAsShared(value: unknown, visited = new WeakSet<object>()): void {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function') || visited.has(value)) return;
  visited.add(value);
  if (typeof value === 'object')
    for (const key of Reflect.ownKeys(value)) {
      const child = (value as Record<PropertyKey, unknown>)[key];
      try {
        freezeAsShared(child, visited);
      } catch {
        // As the worker does: some objects cannot be frozen.
      }
    }
  Object.freeze(value);
}

/** Objects whose use changes them even when frozen (Map, Set) or fails when frozen (a RegExp's lastIndex). */
function stateful(value: unknown, at: string, visited = new WeakSet<object>()): string[] {
  if (value === null || typeof value !== 'object' || visited.has(value)) return [];
  visited.add(value);
  if (value instanceof RegExp || value instanceof Map || value instanceof Set || value instanceof Date) return [at];
  return Reflect.ownKeys(value).flatMap((key) =>
    stateful((value as Record<PropertyKey, unknown>)[key], `${at}.${String(key)}`, visited),
  );
}

describe('src/core is shared by the workflows a worker runs (loaded once per worker thread, its exports frozen)', () => {
  it('every core module is preloaded by the workflow bundle', () => {
    for (const file of files) expect(WORKFLOW_BUNDLER_OPTIONS.preloadModules).toContain(join(CORE, file));
  });

  it('exports no state, and its schemas still parse once its exports are frozen as the worker freezes them', async () => {
    const modules = await Promise.all(files.map(async (f) => [f, (await import(join(CORE, f))) as object] as const));
    expect(modules.flatMap(([file, exports]) => stateful(exports, file))).toEqual([]);
    for (const [, exports] of modules) freezeAsShared(exports);
    expect(Object.isFrozen(idSchema)).toBe(false);
    for (const id of ['op-1', 'op-2']) expect(idSchema.parse(id)).toBe(id);
    expect(idSchema.safeParse('..').success).toBe(false);
    expect(startRequestSchema.safeParse({}).success).toBe(false);
  });
});
