/**
 * Which code a run measured, so two runs are compared only as runs of the same code (bench/compare.ts says when
 * they are not). The identity is the content of what runs (the product, the bench, the lockfile), not the commit:
 * committing one run's results or a docs change must not make the next run of the same code look different.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** The commit a run measured, the hash of the measured files in it, and whether any of them differed from it. */
export interface CodeVersion {
  commit: string;
  /** sha256 of `git ls-tree` over the measured files: equal exactly when the code that runs is equal. */
  measured?: string;
  changed: boolean;
}

const ROOT = path.join(__dirname, '..', '..');

/** What runs in a bench run; results and prose beside the bench code are not part of it. */
const MEASURED_PATHS = ['src', 'bench', 'package.json', 'package-lock.json', 'tsconfig.json'];
const notMeasured = (file: string): boolean => file.endsWith('.md') || /^bench\/results\./.test(file);

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

const fileOfLine = (line: string): string => line.slice(line.indexOf('\t') + 1);
const fileOfStatus = (line: string): string => line.slice(3);

/** The code version here, or undefined outside a git clone (an unpacked tarball). */
export function codeVersion(): CodeVersion | undefined {
  try {
    const tree = git(['ls-tree', '-r', 'HEAD', '--', ...MEASURED_PATHS])
      .split('\n')
      .filter((line) => !notMeasured(fileOfLine(line)));
    const changes = git(['status', '--porcelain', '--untracked-files=no', '--', ...MEASURED_PATHS])
      .split('\n')
      .filter((line) => line !== '' && !notMeasured(fileOfStatus(line)));
    return {
      commit: git(['rev-parse', 'HEAD']),
      measured: createHash('sha256').update(tree.join('\n')).digest('hex'),
      changed: changes.length > 0,
    };
  } catch {
    return undefined;
  }
}

/** Whether two runs measured the same code: the same measured files, neither with local changes. */
export function sameMeasuredCode(a: CodeVersion | undefined, b: CodeVersion | undefined): boolean {
  if (a === undefined || b === undefined || a.changed || b.changed) return false;
  // A run recorded before the hash existed is named by its commit alone, which fixes its measured files too.
  if (a.measured === undefined || b.measured === undefined) return a.commit === b.commit;
  return a.measured === b.measured;
}
