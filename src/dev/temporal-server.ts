/**
 * Starting and stopping a real Temporal dev server (`temporal server start-dev`) from our own code, so nothing
 * is subject to @temporalio/testing's 5 s start-up limit and the project's search attributes are registered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { AsyncJobError, hasCode } from '../core/errors';
import { SEARCH_ATTRIBUTES } from '../core/search-attribute-names';
import { ensureTemporalCli, type TemporalCli } from './temporal-cli';

/** Options for {@link startDevServer}. */
export interface DevServerOptions {
  /** gRPC port; a free one is chosen when absent. */
  port?: number;
  /** Web UI port; the UI is off (headless) when absent. */
  uiPort?: number;
  /** Port of the server's HTTP API (`--http-port`); a free one is chosen (and reported) when absent or 0. */
  httpPort?: number;
  /** Port of the server's Prometheus `/metrics` endpoint (`--metrics-port`); chosen like `httpPort`. */
  metricsPort?: number;
  /** The codec endpoint the Web UI decodes payloads through (`--ui-codec-endpoint`); none when absent. */
  codecEndpoint?: string;
  /** SQLite file for persistence; in memory when absent. */
  dbFile?: string;
  namespace?: string;
  /** More namespaces to create beside `namespace` (without asyncjob's search attributes). */
  extraNamespaces?: readonly string[];
  /** Where the server's own log goes (appended); when absent, only its last output is kept, for an early exit's error. */
  logFile?: string;
  /** Extra `--dynamic-config-value` entries, e.g. `limit.historyCount.suggestContinueAsNew=100`. */
  dynamicConfig?: string[];
  /** How long to wait for the server to answer, in ms. */
  startTimeoutMs?: number;
}

/** A running dev server. */
export interface DevServer {
  address: string;
  namespace: string;
  uiUrl?: string;
  /** The port of the server's HTTP API. */
  httpPort: number;
  /** The port of the server's `/metrics` endpoint (`http://127.0.0.1:PORT/metrics`). */
  metricsPort: number;
  serverVersion: string;
  cli: TemporalCli;
  pid: number;
  /** Stops the server (SIGTERM, then SIGKILL after a grace period). Safe to repeat. */
  stop(): Promise<void>;
}

/** Returns a TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The dev server process ended before it answered (a port taken, a bad flag); `output` is the end of its log. */
function devServerExited(exitCode: number, output: string): AsyncJobError {
  const said = output.trim() ? `; its last output:\n${output.trim()}` : '';
  return new AsyncJobError(
    'ASYNCJOB_ERR_DEV_SERVER_EXITED',
    `temporal dev server exited with code ${exitCode} before answering${said}`,
  );
}

/** How much of the server's output an early exit reports. */
const OUTPUT_TAIL_BYTES = 2048;

/**
 * The end of what the server wrote: kept from its pipes when there is no log file, else read back from the log file
 * past where this start began appending.
 */
function serverOutput(child: ChildProcess, log: { file: string; start: number } | undefined): () => string {
  if (log === undefined) {
    let tail = '';
    const keep = (chunk: Buffer): void => {
      tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    return () => tail;
  }
  return () => {
    const end = statSync(log.file).size;
    const from = Math.max(log.start, end - OUTPUT_TAIL_BYTES);
    const buffer = Buffer.alloc(Math.max(0, end - from));
    const fd = openSync(log.file, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, from);
    } finally {
      closeSync(fd);
    }
    return buffer.toString('utf8');
  };
}

async function waitForServer(
  address: string,
  namespace: string,
  child: ChildProcess,
  output: () => string,
  timeoutMs: number,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw devServerExited(child.exitCode, output());
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        const info = await connection.workflowService.getSystemInfo({});
        await connection.workflowService.describeNamespace({ namespace });
        return info.serverVersion ?? 'unknown';
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`temporal dev server at ${address} did not answer within ${timeoutMs} ms: ${String(lastError)}`);
}

/** How many ports a start tries when it chooses them itself. */
const START_ATTEMPTS = 3;

/** The listeners of one start: the options' ports, and free ones where the options leave the choice to us. */
interface DevServerPorts {
  port: number;
  httpPort: number;
  metricsPort: number;
}

async function choosePorts(options: DevServerOptions): Promise<DevServerPorts> {
  const given = [options.port, options.httpPort, options.metricsPort].map((p) => (p === 0 ? undefined : p));
  const [port, httpPort, metricsPort] = await Promise.all(given.map(async (p) => p ?? (await freePort())));
  return { port: port!, httpPort: httpPort!, metricsPort: metricsPort! };
}

/**
 * Starts `temporal server start-dev` with our search attributes and waits until it answers. Every listener it
 * opens on a port we can set is set (gRPC, HTTP API, metrics, and the Web UI when asked for); its internal
 * services' ports are the CLI's own choice, on 127.0.0.1. A port found free, ours or the CLI's, can be taken by
 * another process before the server binds it (a CI run's dev server exited with code 2 beside other servers
 * starting), so an early exit is retried: on other ports where the choice is ours, on the same ones where the
 * options set them (the CLI chooses its internal ports anew). A port that stays taken fails every attempt, and the
 * error carries the server's last output.
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    const ports = await choosePorts(options);
    try {
      return await startDevServerOn(ports, options);
    } catch (err) {
      if (attempt >= START_ATTEMPTS || !hasCode(err, 'ASYNCJOB_ERR_DEV_SERVER_EXITED')) throw err;
    }
  }
}

async function startDevServerOn(ports: DevServerPorts, options: DevServerOptions): Promise<DevServer> {
  const cli = ensureTemporalCli();
  const namespace = options.namespace ?? 'default';
  const { port, httpPort, metricsPort } = ports;
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--namespace', namespace];
  args.push('--http-port', String(httpPort), '--metrics-port', String(metricsPort), '--log-level', 'warn');
  for (const extra of options.extraNamespaces ?? []) args.push('--namespace', extra);
  if (options.uiPort !== undefined) args.push('--ui-port', String(options.uiPort));
  else args.push('--headless');
  if (options.codecEndpoint !== undefined) args.push('--ui-codec-endpoint', options.codecEndpoint);
  if (options.dbFile) {
    mkdirSync(path.dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  const dynamicConfig = [
    'frontend.enableUpdateWorkflowExecution=true',
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
    // The timer queue may otherwise fire a timer up to a second late: millisecond policies (tests, benchmarks) need it exact.
    'history.timerProcessorMaxTimeShift="10ms"',
    ...(options.dynamicConfig ?? []),
  ];
  for (const value of dynamicConfig) args.push('--dynamic-config-value', value);

  const out = options.logFile ? openSync(options.logFile, 'a') : 'pipe';
  const log = typeof out === 'number' ? { file: options.logFile!, start: fstatSync(out).size } : undefined;
  const child = spawn(cli.path, args, { stdio: ['ignore', out, out], detached: false });
  if (typeof out === 'number') closeSync(out);
  const output = serverOutput(child, log);
  const address = `127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
    return stopped;
  };
  try {
    const serverVersion = await waitForServer(address, namespace, child, output, options.startTimeoutMs ?? 60_000);
    return {
      address,
      namespace,
      uiUrl: options.uiPort !== undefined ? `http://localhost:${options.uiPort}` : undefined,
      httpPort,
      metricsPort,
      serverVersion,
      cli,
      pid: child.pid ?? -1,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
