/**
 * One reference of the error codes: the table in docs/errors.md is the one rendered from the registry
 * (src/core/codes.ts), code by code with its exit status, whether a retry can help, and its meaning; and every
 * `ASYNCJOB_ERR_` code src/ names is in the registry.
 * After an intended change of the registry: `ASYNCJOB_WRITE_DOCS=1 npx vitest run test/docs/errors.test.ts`.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, EXIT, type ExitCode } from '../../src/core/codes';

const ROOT = path.join(__dirname, '..', '..');
const DOC = path.join(ROOT, 'docs', 'errors.md');
const START = /<!-- error-codes:start[^>]*-->\n/;
const END = '<!-- error-codes:end -->';

/** The name of each exit status, as docs/cli.md's exit-code table tells it. */
const EXIT_NAMES = Object.fromEntries(Object.entries(EXIT).map(([name, status]) => [status, name])) as Record<
  ExitCode,
  string
>;

/** The table docs/errors.md holds: one row per code, in the registry's order. */
function renderErrorTable(): string {
  const rows = Object.entries(ERROR_CODES).map(
    ([code, { exit, retryable, meaning }]) =>
      `| \`${code}\` | ${exit} (${EXIT_NAMES[exit]}) | ${retryable ? 'yes' : 'no'} | ${meaning.replace(/\|/g, '\\|')} |`,
  );
  return ['| code | exit | retryable | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full) : /\.(ts|cjs)$/.test(name) ? [full] : [];
  });
}

describe('the error codes reference', () => {
  it('docs/errors.md holds exactly the table rendered from the registry (src/core/codes.ts)', () => {
    const doc = readFileSync(DOC, 'utf8');
    const start = START.exec(doc);
    expect(start, 'docs/errors.md has the error-codes markers').not.toBeNull();
    const from = start!.index + start![0].length;
    const to = doc.indexOf(END, from);
    expect(to).toBeGreaterThan(-1);
    const table = `${renderErrorTable()}\n`;
    if (process.env.ASYNCJOB_WRITE_DOCS === '1') writeFileSync(DOC, doc.slice(0, from) + table + doc.slice(to));
    else
      expect(doc.slice(from, to), 'regenerate: ASYNCJOB_WRITE_DOCS=1 npx vitest run test/docs/errors.test.ts').toBe(
        table,
      );
  });

  it('every ASYNCJOB_ERR_ code named in src/ is in the registry', () => {
    const named = new Set(
      files(path.join(ROOT, 'src')).flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/ASYNCJOB_ERR_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_*])/g)].map((m) => m[0]),
      ),
    );
    const unregistered = [...named].filter((code) => !(code in ERROR_CODES)).sort();
    expect(unregistered, 'codes src/ names that src/core/codes.ts does not hold').toEqual([]);
  });
});
