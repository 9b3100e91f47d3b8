import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, EXIT } from '../../src/core/codes';

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
