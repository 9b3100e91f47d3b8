/**
 * A folder's README describes the folder as it is: every file it names exists, and every module (`.ts` file)
 * directly in the folder is named in it. The top README's layout table names every folder directly under `src/`
 * and every top-level folder git tracks, and every place it names exists. A README names a file in a code span
 * that is a whole path (`` `poll-status.ts` ``, `` `src/core/step-outcome.ts` ``) or in a relative link; a path is
 * read from the README's folder, then from each folder above it up to the repository's root, as a reader would.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './shell';

/**
 * What a README may still get wrong while its owner is mid-edit: modules it does not name yet, names of files that
 * are gone. Its case fails on any other gap; remove the entry once the README is right.
 */
const KNOWN_GAPS: Record<string, { unnamed: string[]; missing: string[] }> = {};

/** Folders never searched for READMEs: installed, generated or local state. */
const SKIPPED = new Set(['node_modules', 'dist', 'coverage', 'test-artifacts']);

/** Every README.md below the root (not the root's own), relative to the root. */
function folderReadmes(dir = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    if (entry.name.startsWith('.') || SKIPPED.has(entry.name)) continue;
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...folderReadmes(relative));
    else if (entry.name === 'README.md' && dir !== '') out.push(relative);
  }
  return out.sort();
}

/** The markdown without its fenced code blocks (their contents are commands and output, not names). */
function withoutFences(markdown: string): string {
  return markdown.replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '');
}

const FILE_NAME = /^[\w@.\-/*]+\.(ts|cts|mts|js|cjs|mjs|json|ya?ml|md|sh|sql)$/;

/** The file names a README gives: code spans that are a whole path, and relative link targets. */
function namedFiles(markdown: string): string[] {
  const prose = withoutFences(markdown);
  const spans = [...prose.matchAll(/(`+)([^`]+?)\1(?!`)/g)].map((m) => m[2]!.trim());
  const links = [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!.split('#')[0]!)
    .filter((target) => target !== '' && !/^[a-z]+:/i.test(target));
  return [...new Set([...spans.filter((span) => FILE_NAME.test(span)), ...links])];
}

/** Files of the repository matching `name` (a path that may hold `*` in its last part) under `base`. */
function matches(base: string, name: string): string[] {
  const full = path.join(base, name);
  if (!name.includes('*')) return existsSync(full) ? [full] : [];
  const dir = path.dirname(full);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  const pattern = new RegExp(
    `^${path
      .basename(full)
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return readdirSync(dir)
    .filter((file) => pattern.test(file))
    .map((file) => path.join(dir, file));
}

/** Where a name given in the README of `folder` points: from the folder, then from each folder above it. */
function resolveName(folder: string, name: string): string[] {
  for (let base = path.join(ROOT, folder); ; base = path.dirname(base)) {
    const found = matches(base, name);
    if (found.length > 0) return found;
    if (path.relative(ROOT, base) === '') return [];
  }
}

/** The modules directly in a folder: its `.ts` files. */
function modulesOf(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => entry.name)
    .sort();
}

/** What a folder README gets wrong: names that point nowhere, and modules it does not name. */
function readmeGaps(readme: string): { unnamed: string[]; missing: string[] } {
  const folder = path.dirname(readme);
  const named = namedFiles(readFileSync(path.join(ROOT, readme), 'utf8'));
  const resolved = new Map(named.map((name) => [name, resolveName(folder, name)]));
  const reached = new Set([...resolved.values()].flat().map((file) => path.resolve(file)));
  return {
    unnamed: modulesOf(folder).filter((module) => !reached.has(path.resolve(ROOT, folder, module))),
    missing: named.filter((name) => resolved.get(name)!.length === 0),
  };
}

/** The rows of the table under the top README's `## Layout`: each row's first cell. */
function layoutPlaces(): string[] {
  const lines = readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n');
  const heading = lines.indexOf('## Layout');
  expect(heading, 'README.md has a "## Layout" section').toBeGreaterThan(-1);
  const rows: string[] = [];
  for (const line of lines.slice(heading + 1)) {
    if (line.startsWith('## ')) break;
    if (line.startsWith('|')) rows.push(line.split('|')[1]!.trim());
  }
  return rows.slice(2);
}

/** The code spans of the layout table's first column: the places it names (`src/core/`, `docker-compose.yml`). */
function layoutNames(): string[] {
  return layoutPlaces().flatMap((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
}

describe('folder READMEs match their folders', () => {
  it('reads the names a README gives: whole-path code spans and relative links, not code blocks', () => {
    const markdown = [
      '`a.ts` and `src/b.ts` (`c.ts`, `not a file.ts`, `x.begin(id)`), [guide](../docs/d.md#part), [web](https://e.md)',
      '```',
      'npx tsx bench/run.ts',
      '```',
      '`test/histories/v1-*.json` · ``e.yaml``',
    ].join('\n');
    expect(namedFiles(markdown)).toEqual([
      'a.ts',
      'src/b.ts',
      'c.ts',
      'test/histories/v1-*.json',
      'e.yaml',
      '../docs/d.md',
    ]);
  });

  const readmes = folderReadmes();

  it('finds the folder READMEs', () => {
    expect(readmes).toEqual(expect.arrayContaining(['src/activities/README.md', 'src/simulator/README.md']));
  });

  it.each(readmes)('%s names only files that exist, and every module of its folder', (readme) => {
    const gaps = readmeGaps(readme);
    const known = KNOWN_GAPS[readme] ?? { unnamed: [], missing: [] };
    expect(
      gaps.unnamed.filter((module) => !known.unnamed.includes(module)),
      'modules not named',
    ).toEqual([]);
    expect(
      gaps.missing.filter((name) => !known.missing.includes(name)),
      'names of no file',
    ).toEqual([]);
  });
});

describe("the top README's layout table matches the repository", () => {
  const names = layoutNames();
  const namesFolder = (folder: string): boolean => names.some((name) => `${name}/`.startsWith(`${folder}/`));

  it('names every folder directly under src/', () => {
    const folders = readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/${entry.name}`);
    expect(folders.filter((folder) => !namesFolder(folder))).toEqual([]);
  });

  it('names every top-level folder git tracks', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file.includes('/'))
      .map((file) => file.slice(0, file.indexOf('/')));
    const folders = [...new Set(tracked)].sort();
    expect(folders).toContain('src');
    expect(folders.filter((folder) => !namesFolder(folder))).toEqual([]);
  });

  it('names only places that exist', () => {
    expect(names.filter((name) => !existsSync(path.join(ROOT, name)))).toEqual([]);
  });
});
