/**
 * A conformance server run as a child process (Azure's test server, moto): started on a free loopback port with its
 * output appended to a log file, and stopped with SIGTERM, then SIGKILL after a grace period.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { freePort } from '../../src/dev/temporal-server';

/** A started server process. */
export interface ServerProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Stops it (SIGTERM, then SIGKILL after 5 s) and waits for its exit. Safe to repeat. */
  stop(): Promise<void>;
}

/** Spawns `command` with the arguments `argsFor(port)` for a free loopback port; its output goes to `logFile`. */
export async function spawnServer(options: {
  command: string;
  argsFor: (port: number) => string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}): Promise<ServerProcess> {
  const port = await freePort();
  const out = openSync(options.logFile, 'a');
  const child = spawn(options.command, options.argsFor(port), {
    env: options.env,
    cwd: options.cwd,
    stdio: ['ignore', out, out],
  });
  let stopped = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };
  return { child, url: `http://127.0.0.1:${port}`, stop };
}
