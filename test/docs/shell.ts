/**
 * Runs documented command lines as a user runs them: through `bash -c`, from a working directory, with `asyncjob`
 * on PATH as the package's own `bin/asyncjob` (what `npm install` links), so `asyncjob ...`, `npx asyncjob ...`,
 * `bin/asyncjob ...` and `npm run ...` all take the documented entry. Every run is bounded by a timeout; servers are
 * started, waited for by a line they print, and stopped by a signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The repository's root. */
export const ROOT = path.resolve(__dirname, '..', '..');

/** The outcome of one bounded run. */
export interface ShellRun {
  /** Exit status, or null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the run was killed for passing its timeout. */
  timedOut: boolean;
  /** For a stopped server: true when a process of its group outlived it (a child it did not stop). */
  leftover?: boolean;
}

let shimDir: string | undefined;
/** A directory holding `asyncjob` as a link to this package's `bin/asyncjob`, as a global install or npx gives it. */
function asyncjobOnPath(): string {
  if (shimDir) return shimDir;
  const dir = path.join(os.tmpdir(), `asyncjob-doc-bin-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const link = path.join(dir, 'asyncjob');
  if (!existsSync(link)) symlinkSync(path.join(ROOT, 'bin', 'asyncjob'), link);
  shimDir = dir;
  return dir;
}

/**
 * Makes `dir` a project that depends on this package as `npm install /path/to/asyncjob` leaves it (a link to the
 * directory, and its bin in node_modules/.bin), so `npx asyncjob` there runs this checkout, never the registry.
 */
export function dependOnThisPackage(dir: string): void {
  mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'service', private: true, dependencies: { asyncjob: `file:${ROOT}` } }),
  );
  symlinkSync(ROOT, path.join(dir, 'node_modules', 'asyncjob'), 'dir');
  symlinkSync(path.join('..', 'asyncjob', 'bin', 'asyncjob'), path.join(dir, 'node_modules', '.bin', 'asyncjob'));
}

const SHELL_VARIABLES = ['HOME', 'TMPDIR', 'LANG', 'TERM', 'USER', 'npm_config_cache'];
/** The machine's proxy and TLS trust: a user's shell has them, and npm needs them behind a proxy with its own CA. */
const NETWORK_VARIABLES = [
  ...['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'],
  ...['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'npm_config_cafile'],
];

/** The environment a documented command runs in: the test's PATH with `asyncjob` on it, and `extra` over it. */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  // Only what a user's shell has: none of the test runner's own variables (VITEST, NODE_OPTIONS) leaks into the command.
  for (const name of [...SHELL_VARIABLES, ...NETWORK_VARIABLES]) {
    if (process.env[name] !== undefined) base[name] = process.env[name];
  }
  const nodeDir = path.dirname(process.execPath);
  base.PATH = [asyncjobOnPath(), nodeDir, process.env.PATH ?? ''].join(path.delimiter);
  return { ...base, ...extra };
}

/** Options of {@link runShell} and {@link startShell}. */
export interface ShellOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** The run is killed (SIGKILL) and reported `timedOut` after this long. */
  timeoutMs?: number;
}

function spawnShell(script: string, options: ShellOptions): ChildProcess {
  return spawn('bash', ['-c', script], {
    cwd: options.cwd ?? ROOT,
    env: userEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so a stop reaches the command's children (npm, tsx, node) too.
    detached: true,
  });
}

/** Runs a script to its end (or its timeout) and returns what it printed and how it exited. */
export function runShell(script: string, options: ShellOptions = {}): Promise<ShellRun> {
  const child = spawnShell(script, options);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    signalGroup(child, 'SIGKILL');
  }, options.timeoutMs ?? 60_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}

function groupAlive(child: ChildProcess): boolean {
  try {
    process.kill(-child.pid!, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a stopped server ended cleanly as a terminal's Ctrl-C ends it: within the bound, nothing of it left
 * running, and exit 0, or (for `npm run`, which re-raises the signal it was stopped by) ended by that signal.
 */
export function stoppedCleanly(run: ShellRun, signal: NodeJS.Signals): boolean {
  return !run.timedOut && run.leftover === false && (run.code === 0 || (run.code === null && run.signal === signal));
}

/** A long-running command started in the background. */
export interface ShellServer {
  /** stdout and stderr so far, interleaved as they arrived. */
  output(): string;
  /** Resolves when the output matches `pattern` (and returns the match); rejects at the timeout or the exit. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** Sends `signal` to the command's process group and waits for the exit; SIGKILL after `timeoutMs`. */
  stop(signal: NodeJS.Signals, timeoutMs?: number): Promise<ShellRun>;
}

/** Starts a script that keeps running (a server) and returns a handle to wait on its output and stop it. */
export function startShell(script: string, options: ShellOptions = {}): ShellServer {
  const child = spawnShell(script, options);
  let all = '';
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => ((stdout += d.toString()), (all += d.toString())));
  child.stderr!.on('data', (d: Buffer) => ((stderr += d.toString()), (all += d.toString())));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    output: () => all,
    async waitFor(pattern, timeoutMs) {
      const end = Date.now() + timeoutMs;
      let exited = false;
      void closed.then(() => (exited = true));
      for (;;) {
        const match = pattern.exec(all);
        if (match) return match;
        if (exited || Date.now() > end) {
          throw new Error(
            `${exited ? 'exited' : 'timed out'} before printing ${pattern}; output:\n${all.slice(-4000)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop(signal, timeoutMs = 30_000) {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        signalGroup(child, 'SIGKILL');
      }, timeoutMs);
      // The signal goes to bash's child as a terminal's Ctrl-C would reach the foreground job.
      signalGroup(child, signal);
      const { code, signal: by } = await closed;
      // The command's children (the dev server under npm and tsx) must be gone too, within the same bound.
      let leftover = groupAlive(child);
      while (leftover && !timedOut) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        leftover = groupAlive(child);
      }
      clearTimeout(timer);
      return { code, signal: by, stdout, stderr, timedOut, leftover };
    },
  };
}
