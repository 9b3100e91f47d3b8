import { describe, expect, it } from 'vitest';
import { codeVersion, sameMeasuredCode, type CodeVersion } from '../../bench/lib/code-version';

const run = (measured: string | undefined, commit: string, changed = false): CodeVersion => ({
  commit,
  measured,
  changed,
});

describe('bench code identity (two runs are a repeatability pair only on the same code)', () => {
  it('counts runs on different commits with the same measured files as the same code', () => {
    expect(sameMeasuredCode(run('tree-1', 'commit-a'), run('tree-1', 'commit-b'))).toBe(true);
  });

  it('counts different measured files, local changes or an unrecorded run as not the same code', () => {
    expect(sameMeasuredCode(run('tree-1', 'commit-a'), run('tree-2', 'commit-a'))).toBe(false);
    expect(sameMeasuredCode(run('tree-1', 'commit-a', true), run('tree-1', 'commit-a'))).toBe(false);
    expect(sameMeasuredCode(run('tree-1', 'commit-a'), undefined)).toBe(false);
    expect(sameMeasuredCode(run(undefined, 'commit-a'), run('tree-1', 'commit-b'))).toBe(false);
  });

  it('falls back to the commit for runs recorded before the measured hash existed', () => {
    expect(sameMeasuredCode(run(undefined, 'commit-a'), run(undefined, 'commit-a'))).toBe(true);
    expect(sameMeasuredCode(run(undefined, 'commit-a'), run('tree-1', 'commit-a'))).toBe(true);
  });

  it('names this clone: a commit and a sha256 of the measured files', () => {
    const here = codeVersion();
    expect(here?.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(here?.measured).toMatch(/^[0-9a-f]{64}$/);
  });
});
