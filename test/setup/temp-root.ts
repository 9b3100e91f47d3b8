/**
 * Gives the whole test run one temporary directory and removes it afterwards: every test, worker process and
 * child it starts makes its files under `os.tmpdir()`, which reads TMPDIR, so none of them is left in /tmp
 * (they were: thousands of directories after a few hundred runs). Listed in both projects; the first setup
 * creates the directory, a later one finds it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const OWNER = 'ASYNCJOB_TEST_RUN_TMPDIR';

export default function setup(): () => void {
  if (process.env[OWNER] !== undefined) return () => {};
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'asyncjob-test-run-'));
  const previous = process.env.TMPDIR;
  // Set before the test workers are created: they, and the processes they start, inherit it.
  process.env.TMPDIR = runDir;
  process.env[OWNER] = runDir;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    delete process.env[OWNER];
    rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });
  };
}
