/**
 * The fault-test harness: real worker PROCESSES (`runWorker` from the environment, spawned as children so they can
 * be SIGKILLed, restarted and doubled), provider contracts written for per-file names and the simulators' URLs, a
 * SQLite store shared by the workers and the test (read-only use by the test), and helpers that read the truth
 * from the simulator's accounting and from the store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { inject } from 'vitest';
import { openSqliteStore } from '../../../src/adapters/store/sqlite-store';
import type { OperationStore } from '../../../src/adapters/store/operation-store';
import { AsyncJobClient } from '../../../src/client';
import type { LocalState } from '../../../src/core/journal';
import type { StartRequest } from '../../../src/core/operation';
import { startSimulator, type Simulator } from '../../../src/simulator';
import type { RequestRecord } from '../../../src/simulator/accounting';
import type { ScenarioInput } from '../../../src/simulator/scenario';
import { DIALECTS, SIM_TOKEN, type Dialect } from '../../workflows/harness';
import { uniqueId } from '../../setup/temporal';
import { writeContract } from '../../../scripts/load/contracts';

export { DIALECTS, SIM_TOKEN, writeContract, type Dialect };

const ROOT = path.join(__dirname, '..', '..', '..');

/** A worker child process. */
export interface WorkerProcess {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Everything it wrote on stdout and stderr so far. */
  logs(): string;
  /** Resolves once the worker announced its task queue and the server sees it polling the provider queues. */
  ready: Promise<void>;
  /** Resolves with the exit code or signal when the process ends. */
  exited: Promise<string>;
  /** Resident set size in bytes from /proc (Linux), or undefined when unavailable. */
  rssBytes(): number | undefined;
  kill(signal: NodeJS.Signals): void;
}

/** A fault-test world: simulators, contracts, a store file, a client, and worker processes on demand. */
export interface FaultWorld {
  label: string;
  dataDir: string;
  storeFile: string;
  artifactsDir: string;
  taskQueue: string;
  sims: Record<Dialect, Simulator>;
  provider(dialect: Dialect): string;
  client: AsyncJobClient;
  temporal: Client;
  /** The store, opened by the test (the workers open the same file). */
  store: OperationStore;
  /** Starts a worker process with the world's environment (plus `extraEnv`). */
  spawnWorker(extraEnv?: Record<string, string>): WorkerProcess;
  /** A start request with millisecond deadlines and policy for a dialect and a simulator script. */
  request(dialect: Dialect, overrides?: Partial<StartRequest> & { script?: string }): StartRequest;
  /** Every request the simulator of `dialect` saw for a job (public ID or a path ending in it). */
  jobRequests(dialect: Dialect, jobId: string, action?: RequestRecord['action']): RequestRecord[];
  /** The local states the store's journal records for an operation, in order. */
  transitions(operationId: string): Promise<LocalState[]>;
  /** Polls the store until the operation reaches one of `states`; returns the state reached. */
  waitForState(operationId: string, states: readonly LocalState[], timeoutMs?: number): Promise<LocalState>;
  stop(): Promise<void>;
}

/** Options of {@link startFaultWorld}. */
export interface FaultWorldOptions {
  scenarios?: Partial<Record<Dialect, ScenarioInput>>;
  /** The Temporal address (default: the run's shared dev server). */
  temporalAddress?: string;
  /** Extra environment for every worker. */
  env?: Record<string, string>;
}

/** Sleeps for `ms` (for polling loops only, never to wait out a delay under test). */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Spawns `runWorker()` in a child process with exactly `env` (plus PATH/HOME). */
export function spawnWorkerProcess(env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'worker-entry.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  let onReady: () => void = () => undefined;
  let onFailed: (e: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    onReady = resolve;
    onFailed = reject;
  });
  const take = (chunk: Buffer): void => {
    logs += chunk.toString();
    if (logs.includes('asyncjob worker: task queue')) onReady();
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => {
      const how = signal ?? `code ${code}`;
      onFailed(new Error(`worker process exited (${how}) before it was ready:\n${logs.slice(-4000)}`));
      resolve(how);
    });
  });
  return {
    pid: child.pid!,
    child,
    logs: () => logs,
    ready,
    exited,
    rssBytes() {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
        return kb === undefined ? undefined : Number(kb) * 1024;
      } catch {
        return undefined;
      }
    },
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/** Starts simulators, writes contracts, opens the store and a client; workers are spawned by the test. */
export async function startFaultWorld(label: string, options: FaultWorldOptions = {}): Promise<FaultWorld> {
  const id = uniqueId(label)
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-');
  const dataDir = await mkdtemp(path.join(tmpdir(), `asyncjob-faults-${label}-`));
  const storeFile = path.join(dataDir, 'asyncjob.db');
  const artifactsDir = path.join(dataDir, 'artifacts');
  const sims = {} as Record<Dialect, Simulator>;
  for (const dialect of DIALECTS) {
    const scenario = options.scenarios?.[dialect];
    sims[dialect] = await startSimulator({ dialect, token: SIM_TOKEN, seed: 11, ...(scenario ? { scenario } : {}) });
  }
  const provider = (dialect: Dialect): string => `${dialect}-${id}`.slice(0, 60);
  const contracts = DIALECTS.map((d) => writeContract(dataDir, d, provider(d), sims[d].url));
  const address = options.temporalAddress ?? inject('temporalAddress');
  const namespace = 'default';
  const taskQueue = `faults-${id}`;
  const store = await openSqliteStore({ path: storeFile, forbiddenValues: [SIM_TOKEN] });
  const connection = await Connection.connect({ address });
  const temporal = new Client({ connection, namespace });
  const client = new AsyncJobClient({ client: temporal, taskQueue });
  const workers: WorkerProcess[] = [];
  const workerEnv = (): Record<string, string> => ({
    TEMPORAL_ADDRESS: address,
    TEMPORAL_NAMESPACE: namespace,
    ASYNCJOB_TASK_QUEUE: taskQueue,
    ASYNCJOB_STORE: `sqlite:${storeFile}`,
    ASYNCJOB_PROVIDERS: contracts.join(','),
    ASYNCJOB_ARTIFACTS_DIR: artifactsDir,
    ASYNCJOB_SIMULATOR_TOKEN: SIM_TOKEN,
    ASYNCJOB_LOG_LEVEL: 'info',
    ...options.env,
  });

  const transitions = async (operationId: string): Promise<LocalState[]> =>
    (await store.entries(operationId)).flatMap((e) => (e.entry.body.kind === 'transition' ? [e.entry.body.to] : []));

  return {
    label,
    dataDir,
    storeFile,
    artifactsDir,
    taskQueue,
    sims,
    provider,
    client,
    temporal,
    store,
    spawnWorker(extraEnv = {}) {
      const worker = spawnWorkerProcess({ ...workerEnv(), ...extraEnv });
      // Ready once the server sees pollers on every provider queue too: a start refuses an unserved provider.
      worker.ready = worker.ready.then(() => client.waitForWorkers(DIALECTS.map(provider)));
      workers.push(worker);
      return worker;
    },
    request(dialect, overrides = {}) {
      const { script, ...rest } = overrides;
      return {
        operationId: uniqueId(`op-${label}-${dialect}`),
        provider: provider(dialect),
        payload: { report: 'monthly-sales', ...(script !== undefined ? { scenario: script } : {}) },
        startedBy: 'service:fault-suite',
        authorisedBy: 'policy:fault-tests',
        createDeadline: { afterMs: 30_000 },
        resultDeadline: { afterMs: 90_000 },
        policy: {
          baseDelayMs: 20,
          maxDelayMs: 200,
          notFoundWindowMs: 2_000,
          cancelDeadlineMs: 10_000,
          maxHintMs: 60_000,
        },
        ...rest,
      };
    },
    jobRequests(dialect, jobId, action) {
      return sims[dialect]
        .requests(action ? { action } : {})
        .filter(
          (r) =>
            r.jobId !== undefined &&
            (r.jobId === jobId || r.jobId.endsWith(`/${jobId}`) || jobId.endsWith(`/${r.jobId}`)),
        );
    },
    transitions,
    async waitForState(operationId, states, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const snapshot = await store.getOperation(operationId);
        if (snapshot && states.includes(snapshot.localState)) return snapshot.localState;
        if (Date.now() > deadline)
          throw new Error(
            `operation ${operationId} did not reach ${states.join('|')} within ${timeoutMs} ms (now ${snapshot?.localState ?? 'absent'})`,
          );
        await sleep(25);
      }
    },
    async stop() {
      for (const w of workers) w.kill('SIGTERM');
      await Promise.race([Promise.all(workers.map((w) => w.exited)), sleep(15_000)]);
      for (const w of workers) w.kill('SIGKILL');
      await connection.close();
      await store.close();
      await Promise.all(Object.values(sims).map((s) => s.stop()));
    },
  };
}

/** Worker processes sharing one PostgreSQL store, in a schema of their own that `stop` drops. */
export interface PostgresFleet {
  world: FaultWorld;
  workers: WorkerProcess[];
  /** A connection of the test's own to the database (outside the schema). */
  raw: PgClient;
  schema: string;
  stop(): Promise<void>;
}

/**
 * Starts a fault world whose `workers` processes open the PostgreSQL store at `url` as an operator would, by its
 * connection string, in a new schema (so runs and files never see each other's rows), and waits until they serve.
 */
export async function startPostgresFleet(
  label: string,
  url: string,
  options: FaultWorldOptions & { workers: number },
): Promise<PostgresFleet> {
  const schema = `asyncjob_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const raw = new PgClient({ connectionString: url });
  await raw.connect();
  await raw.query(`CREATE SCHEMA "${schema}"`);
  const store = `${url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const world = await startFaultWorld(label, { ...options, env: { ...options.env, ASYNCJOB_STORE: store } });
  const workers = Array.from({ length: options.workers }, () => world.spawnWorker());
  await Promise.all(workers.map((w) => w.ready));
  return {
    world,
    workers,
    raw,
    schema,
    async stop() {
      await world.stop();
      await raw.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await raw.end();
    },
  };
}
