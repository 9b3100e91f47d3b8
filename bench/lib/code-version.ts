/**
 * Which code a run measured: the git commit and whether the work tree had changes beside it, so two runs can be
 * compared only as runs of the same code (bench/compare.ts says when they are not).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** The commit a run measured; `changed` when files differed from it (then the commit does not name the code). */
export interface CodeVersion {
  commit: string;
  changed: boolean;
}

const ROOT = path.join(__dirname, '..', '..');

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

/** The code version here, or undefined outside a git clone (an unpacked tarball). */
export function codeVersion(): CodeVersion | undefined {
  try {
    return {
      commit: git(['rev-parse', 'HEAD']),
      changed: git(['status', '--porcelain', '--untracked-files=no']) !== '',
    };
  } catch {
    return undefined;
  }
}
