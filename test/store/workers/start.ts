/**
 * A store-writing child process for the multi-process SQLite tests: it prints `ready` once its store is open,
 * waits for the go file, writes, and prints its result as the last line (JSON).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** A started child: `ready` when its store is open, `done` with its last line parsed. */
export interface StoreChild<Result> {
  ready: Promise<void>;
  done: Promise<Result>;
}

/** Runs `script` (a TypeScript file) with `args` through tsx from the repository root. */
export function startStoreChild<Result>(script: string, args: readonly string[], name: string): StoreChild<Result> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: join(__dirname, '..', '..', '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes('ready\n')) onReady();
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const done = new Promise<Result>((resolve, reject) => {
    child.on('exit', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{')) return reject(new Error(`${name} exited ${code}: ${out} ${err}`));
      resolve(JSON.parse(last) as Result);
    });
  });
  return { ready, done };
}
