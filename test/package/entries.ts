/**
 * The package's entry points as package.json `exports` declares them, and the source file `npm run build` compiles
 * into each (`dist/<name>.js` from `src/<name>.ts`), so the tests read the map instead of repeating it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The repository's root. */
export const ROOT = path.resolve(__dirname, '..', '..');

/** One `exports` condition object: its types and its code. */
export interface ExportTarget {
  types: string;
  default: string;
}

/** package.json, the fields these tests read. */
export interface PackageJson {
  main: string;
  types: string;
  scripts: Record<string, string>;
  engines: { node: string };
  exports: Record<string, ExportTarget | string>;
}

/** package.json as it is on disk. */
export function packageJson(): PackageJson {
  return JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as PackageJson;
}

/** The import specifier of an `exports` key: `.` is `asyncjob`, `./client` is `asyncjob/client`. */
function specifierOf(key: string): string {
  return key === '.' ? 'asyncjob' : `asyncjob/${key.slice(2)}`;
}

/** The code entries of `exports` (all but `./package.json`), by import specifier. */
export function codeEntries(): { specifier: string; key: string; target: ExportTarget }[] {
  return Object.entries(packageJson().exports)
    .filter((entry): entry is [string, ExportTarget] => typeof entry[1] !== 'string')
    .map(([key, target]) => ({ specifier: specifierOf(key), key, target }));
}

/** The source of a built file: `./dist/client-api.js` is `<root>/src/client-api.ts`. */
export function sourceOf(builtFile: string): string {
  const match = /^\.\/dist\/(.+)\.js$/.exec(builtFile);
  if (!match) throw new Error(`${builtFile} is not a file under ./dist`);
  return path.join(ROOT, 'src', `${match[1]}.ts`);
}

/** The source file of an entry by its import specifier. */
export function sourceOfSpecifier(specifier: string): string {
  const entry = codeEntries().find((candidate) => candidate.specifier === specifier);
  if (!entry) throw new Error(`package.json exports no ${specifier}`);
  return sourceOf(entry.target.default);
}
