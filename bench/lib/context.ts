/**
 * What every phase shares: the bench's own Temporal dev server (headless, a temp SQLite file, its pid known),
 * a client, the two workflow bundles written to files once, secrets made for this run, and helpers to run one
 * asyncjob worker process with its simulators per phase.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { AsyncJobClient } from '../../src/client';
import type { StartRequest } from '../../src/core/operation';
import { startDevServer, type DevServer } from '../../src/dev/temporal-server';
import type { ScenarioInput } from '../../src/simulator';
import { WORKFLOW_BUNDLER_OPTIONS, workflowsPath } from '../../src/worker';
import { startSimulatorProcess, startWorkerProcess, type SimProcess, type WorkerChild } from './processes';

/** The shared context of one bench run. */
export interface BenchContext {
  quick: boolean;
  root: string;
  server: DevServer;
  connection: Connection;
  temporal: Client;
  token: string;
  webhookSecret: string;
  asyncjobBundlePath: string;
  bareBundlePath: string;
  /** A unique name for this run and `label`. */
  name(label: string): string;
  /** A client of namespace `namespace` (one of {@link BASELINE_NAMESPACES} or the server's). */
  clientIn(namespace: string): Client;
}

/**
 * The namespaces figure 2's baselines run in when asked ({@link DeployOptions.baselineNamespaces}), each its own, so
 * the server's counts per namespace (`server-counts.ts`) are one system's; asyncjob runs in the server's namespace.
 */
export const BASELINE_NAMESPACES = {
  bare: 'bench-bare',
  'bare-heartbeat': 'bench-heartbeat',
  'bare-retry': 'bench-retry',
} as const;

const quietLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: console.error,
};

/** Starts the dev server and bundles the workflows. */
export async function createContext(root: string, quick: boolean): Promise<BenchContext> {
  mkdirSync(root, { recursive: true });
  const server = await startDevServer({
    dbFile: path.join(root, 'temporal.db'),
    logFile: path.join(root, 'temporal.log'),
    extraNamespaces: Object.values(BASELINE_NAMESPACES),
  });
  const connection = await Connection.connect({ address: server.address });
  const temporal = new Client({ connection, namespace: server.namespace });
  const asyncjobBundlePath = path.join(root, 'asyncjob-workflows.js');
  const bareBundlePath = path.join(root, 'bare-workflows.js');
  writeFileSync(
    asyncjobBundlePath,
    (await bundleWorkflowCode({ workflowsPath, ...WORKFLOW_BUNDLER_OPTIONS, logger: quietLogger })).code,
  );
  writeFileSync(
    bareBundlePath,
    (
      await bundleWorkflowCode({
        workflowsPath: path.join(__dirname, '..', 'bare', 'workflows.ts'),
        logger: quietLogger,
      })
    ).code,
  );
  const stamp = randomBytes(3).toString('hex');
  let counter = 0;
  const clients = new Map<string, Client>([[server.namespace, temporal]]);
  return {
    quick,
    root,
    server,
    connection,
    temporal,
    token: `bench-${randomBytes(16).toString('hex')}`,
    webhookSecret: `whsec-${randomBytes(16).toString('hex')}`,
    asyncjobBundlePath,
    bareBundlePath,
    name: (label) => `${label}-${stamp}-${++counter}`,
    clientIn(namespace) {
      if (!clients.has(namespace)) clients.set(namespace, new Client({ connection, namespace }));
      return clients.get(namespace)!;
    },
  };
}

/** A job that finishes after exactly `reads` status reads (the `reads`-th read sees `succeeded`). */
function pollsScript(reads: number): Record<string, unknown> {
  return {
    steps: [{ state: 'running', polls: reads - 1 }, { state: 'succeeded' }],
    result: { kind: 'json', body: { rows: 3, report: 'bench' } },
  };
}

/** The scenario every phase uses: scripts picked by the payload's `scenario` field. */
export const BENCH_SCENARIO: ScenarioInput = {
  seed: 11,
  maxRecordedRequests: 1_000_000,
  defaultScript: 'reads3',
  scripts: {
    reads2: pollsScript(2),
    reads3: pollsScript(3),
    reads6: pollsScript(6),
    reads4: pollsScript(4),
    // Figure 2's long operation at 1 s: the target's "amortised over a 20-poll operation".
    reads20: pollsScript(20),
    forever: { steps: [{ state: 'running' }] },
    timed: {
      steps: [{ state: 'running', durationMs: { min: 1_500, max: 3_500 } }, { state: 'succeeded' }],
      result: { kind: 'json', body: { rows: 3 } },
    },
    // Figure 5: a job that has finished by the time its webhook is posted (1.5 s after the create).
    finishes: {
      steps: [{ state: 'running', durationMs: 1_500 }, { state: 'succeeded' }],
      result: { kind: 'json', body: { rows: 3 } },
    },
  },
} as ScenarioInput;

/** One phase's asyncjob deployment: simulators, a worker process (with the bare worker if asked) and a client. */
export interface Deployment {
  worker: WorkerChild;
  sims: Record<string, SimProcess>;
  client: AsyncJobClient;
  taskQueue: string;
  bareTaskQueue: string;
  /** The namespace each bare workflow type runs in. */
  bareNamespace(system: keyof typeof BASELINE_NAMESPACES): string;
  dataDir: string;
  provider(label: string): string;
  /** A start request for provider `label`, job script `script`, and a poll policy. */
  request(label: string, script: string, policy: StartRequest['policy']): StartRequest;
  stop(): Promise<void>;
}

/** Options of {@link deploy}. */
export interface DeployOptions {
  /** Providers by label: their rate limit and whether their simulator sends webhooks to `webhookUrl(name)`. */
  providers: Record<string, { maxRequestsPerSecond?: number; webhookUrl?: (providerName: string) => string }>;
  /** Also run the bare baseline against this provider label's simulator. */
  bareOn?: string;
  /** Run each baseline in its namespace of {@link BASELINE_NAMESPACES}, not the server's. */
  baselineNamespaces?: boolean;
  /** Run the webhook receiver beside the workers, in the worker process (`Deployment.worker.webhookUrl`). */
  webhookReceiver?: boolean;
}

/** Starts one simulator per provider and a worker process over a fresh SQLite store. */
export async function deploy(ctx: BenchContext, label: string, options: DeployOptions): Promise<Deployment> {
  const id = ctx.name(label);
  const dataDir = path.join(ctx.root, id);
  mkdirSync(dataDir, { recursive: true });
  const names: Record<string, string> = {};
  const sims: Record<string, SimProcess> = {};
  for (const [p, settings] of Object.entries(options.providers)) {
    names[p] = `${p}-${id}`.slice(0, 64);
    sims[p] = await startSimulatorProcess({
      dialect: 'rest',
      token: ctx.token,
      scenario: BENCH_SCENARIO,
      ...(settings.webhookUrl ? { webhook: { url: settings.webhookUrl(names[p]), secret: ctx.webhookSecret } } : {}),
    });
  }
  const taskQueue = `bench-${id}`;
  const bareTaskQueue = `bare-${id}`;
  const worker = await startWorkerProcess({
    address: ctx.server.address,
    taskQueue,
    dataDir,
    token: ctx.token,
    webhookSecret: ctx.webhookSecret,
    asyncjobBundlePath: ctx.asyncjobBundlePath,
    providers: Object.entries(options.providers).map(([p, s]) => ({
      name: names[p]!,
      url: sims[p]!.url,
      ...(s.maxRequestsPerSecond !== undefined ? { maxRequestsPerSecond: s.maxRequestsPerSecond } : {}),
    })),
    ...(options.bareOn
      ? {
          bare: {
            taskQueue: bareTaskQueue,
            bundlePath: ctx.bareBundlePath,
            url: sims[options.bareOn]!.url,
            namespaces: options.baselineNamespaces ? Object.values(BASELINE_NAMESPACES) : [ctx.server.namespace],
          },
        }
      : {}),
    ...(options.webhookReceiver ? { webhookReceiver: true } : {}),
  });
  let seq = 0;
  return {
    worker,
    sims,
    client: new AsyncJobClient({ client: ctx.temporal, taskQueue }),
    taskQueue,
    bareTaskQueue,
    bareNamespace: (system) => (options.baselineNamespaces ? BASELINE_NAMESPACES[system] : ctx.server.namespace),
    dataDir,
    provider: (p) => names[p]!,
    request: (p, script, policy) => ({
      operationId: `op-${id}-${++seq}`,
      provider: names[p]!,
      payload: { report: 'bench', scenario: script },
      startedBy: 'service:bench',
      authorisedBy: 'policy:bench',
      createDeadline: { afterMs: 300_000 },
      resultDeadline: { afterMs: 3_600_000 },
      policy: { notFoundWindowMs: 10_000, maxStatusRequests: 1_000, ...policy },
    }),
    async stop() {
      await worker.stop();
      await Promise.all(Object.values(sims).map((s) => s.stop()));
    },
  };
}
