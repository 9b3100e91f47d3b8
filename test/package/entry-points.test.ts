/**
 * The package's five entry points: package.json `exports` maps each to a file `npm run build` emits (with its
 * types), and each exports what README.md's "Installation and entry points" table says it holds; `asyncjob` holds
 * all of them but `asyncjob/workflow`, which is workflow code (it runs inside a workflow bundle, not beside a client).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeEntries, packageJson, ROOT, sourceOf, sourceOfSpecifier } from './entries';

const DOCUMENTED = ['asyncjob', 'asyncjob/client', 'asyncjob/worker', 'asyncjob/testing', 'asyncjob/workflow'];
/** Entries for workflow code only: `asyncjob` does not re-export them. */
const WORKFLOW_CODE = ['asyncjob/workflow'];

/** The README table's rows: each entry and the names (backticked identifiers) it says the entry exports. */
function documentedExports(): Map<string, string[]> {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Installation and entry points\n');
  expect(start, 'README.md has the section').toBeGreaterThan(0);
  const section = readme.slice(start + 1, readme.indexOf('\n## ', start + 1));
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const cells = /^\| `(asyncjob[^`]*)` \| (.*) \|$/.exec(line);
    if (!cells) continue;
    const names = [...cells[2]!.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((match) => match[1]!);
    rows.set(cells[1]!, names);
  }
  return rows;
}

/** The run-time exports of an entry, loaded from its source. */
async function runtimeExports(specifier: string): Promise<string[]> {
  return Object.keys((await import(sourceOfSpecifier(specifier))) as Record<string, unknown>).sort();
}

describe('package entry points', () => {
  it('exports maps exactly the documented entries, each to a built file and its declarations', () => {
    const pkg = packageJson();
    expect(codeEntries().map((entry) => entry.specifier)).toEqual(DOCUMENTED);
    expect(pkg.exports['./package.json']).toBe('./package.json');
    for (const { target } of codeEntries()) {
      expect(target.default).toMatch(/^\.\/dist\/[\w-]+\.js$/);
      expect(target.types).toBe(target.default.replace(/\.js$/, '.d.ts'));
      // Listed first, as TypeScript requires of the `types` condition.
      expect(Object.keys(target)[0]).toBe('types');
    }
    expect(`./${pkg.main}`).toBe(codeEntries()[0]!.target.default);
    expect(`./${pkg.types}`).toBe(codeEntries()[0]!.target.types);
  });

  it('npm run build emits every entry: its source is in src/, which tsconfig.build.json compiles into dist/', () => {
    const pkg = packageJson();
    expect(pkg.scripts.build).toBe('tsc -p tsconfig.build.json');
    const build = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
      compilerOptions: { rootDir: string; outDir: string };
      include: string[];
    };
    expect(build.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
    expect(build.include).toContain('src');
    for (const { target } of codeEntries()) expect(existsSync(sourceOf(target.default)), target.default).toBe(true);
  });

  it('README.md documents every entry', () => {
    expect([...documentedExports().keys()]).toEqual(DOCUMENTED);
  });

  it.each(DOCUMENTED.slice(1))(
    '%s exports every name README.md lists for it, and asyncjob does too (but workflow code)',
    async (entry) => {
      const documented = documentedExports().get(entry)!;
      expect(documented.length).toBeGreaterThan(3);
      const exported = await runtimeExports(entry);
      const whole = await runtimeExports('asyncjob');
      expect(documented.filter((name) => !exported.includes(name))).toEqual([]);
      // `asyncjob` is the whole public API: every run-time export of this entry, not just the documented ones.
      if (!WORKFLOW_CODE.includes(entry)) expect(exported.filter((name) => !whole.includes(name))).toEqual([]);
    },
  );
});
