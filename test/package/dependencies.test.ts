/**
 * Every direct dependency says why it is there: README.md's stack table names each one of package.json, and names
 * nothing that is not one (a dropped dependency leaves no stale row).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './entries';

/** The package names in the first column of the stack table. */
function namedInStackTable(): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n### The stack, and why each dependency\n');
  expect(start, 'README.md has the stack table').toBeGreaterThan(0);
  const section = readme.slice(start + 1, readme.indexOf('\n## ', start + 1));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split(' | ')[0]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
}

describe('direct dependencies', () => {
  it('README.md gives the reason of each one, and of no other package', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const direct = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)].sort();
    expect([...new Set(namedInStackTable())].sort()).toEqual(direct);
  });
});
