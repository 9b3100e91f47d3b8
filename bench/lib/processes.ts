/**
 * Child processes of the benchmark: the worker process and simulator processes (see their files), started with
 * tsx so they run from source like the rest of the bench.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { request } from 'undici';
import type { JobSummary, RequestRecord, SimulatorOptions } from '../../src/simulator';
import type { WorkerMemory, WorkerProcessConfig, WorkerReady } from './worker-process';

/** A started child. */
interface Child {
  pid: number;
  stop(): Promise<void>;
}

function forkTs(file: string, arg: unknown, execArgv: string[] = []): ChildProcess {
  return fork(path.join(__dirname, file), [JSON.stringify(arg)], {
    execArgv: ['--import', 'tsx', ...execArgv],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function firstMessage<T>(child: ChildProcess, what: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start within ${timeoutMs} ms`)), timeoutMs);
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve(m as T);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with code ${code} before it was ready`));
    });
  });
}

/** The worker process, which can also report its memory. */
export interface WorkerChild extends Child {
  /** Its workflow workers' cache sizes, as it reported them when ready. */
  maxCachedWorkflows: WorkerReady['maxCachedWorkflows'];
  /** The webhook receiver beside the workers (`<url>/webhooks/<provider>`), when it runs. */
  webhookUrl?: string;
  /** The status loop its workflows were offered, or false. */
  pollLoop: WorkerReady['pollLoop'];
  /** Its memory as it reads it; with `gc`, after a forced garbage collection of every isolate. */
  memory(options?: { gc?: boolean }): Promise<WorkerMemory>;
}

function askMemory(child: ChildProcess, gc: boolean): Promise<WorkerMemory> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error('the worker process did not report its memory within 30 s'));
    }, 30_000);
    const onMessage = (m: unknown): void => {
      if (typeof m !== 'object' || m === null || !('memory' in m)) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve((m as { memory: WorkerMemory }).memory);
    };
    child.on('message', onMessage);
    // A worker process that died must fail this call, not crash the run with an unhandled 'error' event.
    const fail = (err: Error): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      reject(new Error(`the worker process cannot report its memory: ${err.message}`));
    };
    if (!child.connected) return fail(new Error('it has exited'));
    child.send({ memory: { gc } }, (err) => {
      if (err) fail(err);
    });
  });
}

/** Starts the worker process and waits until its workers run. */
export async function startWorkerProcess(config: WorkerProcessConfig): Promise<WorkerChild> {
  // --expose-gc: only so `memory({ gc: true })` can tell live data from garbage; nothing else calls gc().
  // BENCH_WORKER_NODE_FLAGS (space-separated) adds Node/V8 flags to the worker process alone, for experiments.
  const extra = process.env.BENCH_WORKER_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? [];
  const child = forkTs('worker-process.ts', config, ['--expose-gc', ...extra]);
  const { ready } = await firstMessage<{ ready: WorkerReady }>(child, 'the worker process', 120_000);
  return {
    pid: child.pid!,
    maxCachedWorkflows: ready.maxCachedWorkflows,
    ...(ready.webhookUrl !== undefined ? { webhookUrl: ready.webhookUrl } : {}),
    pollLoop: ready.pollLoop,
    stop: () => stopChild(child),
    memory: (options) => askMemory(child, options?.gc ?? false),
  };
}

/** A simulator in its own process, with its accounting read over HTTP. */
export interface SimProcess extends Child {
  url: string;
  requests(action?: string): Promise<RequestRecord[]>;
  jobs(): Promise<JobSummary[]>;
}

/** Starts a simulator process. */
export async function startSimulatorProcess(options: SimulatorOptions): Promise<SimProcess> {
  const child = forkTs('simulator-process.ts', options);
  const { url } = await firstMessage<{ url: string }>(child, 'the simulator process', 60_000);
  const get = async <T>(p: string): Promise<T> => {
    const res = await request(`${url}${p}`);
    if (res.statusCode !== 200) throw new Error(`GET ${p} answered ${res.statusCode}`);
    return (await res.body.json()) as T;
  };
  return {
    pid: child.pid!,
    url,
    stop: () => stopChild(child),
    async requests(action) {
      const all = (await get<{ requests: RequestRecord[] }>(`/_sim/requests${action ? `?action=${action}` : ''}`))
        .requests;
      return all.filter((r) => r.action !== 'sim');
    },
    async jobs() {
      return (await get<{ jobs: JobSummary[] }>('/_sim/jobs')).jobs;
    },
  };
}
