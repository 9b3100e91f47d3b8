/**
 * A worker on the run's dev server that serves provider documents of a test's own (a preset varied, a document
 * written by the test), with a SQLite store, its artifacts, a client on its task queue, and one call to end it all.
 * The harness (three simulator dialects) runs on it too.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createActivities } from '../../src/activities';
import type { AsyncJobActivities } from '../../src/activities/types';
import { FileArtifactStore } from '../../src/adapters/artifacts/artifact-store';
import {
  createProviderRegistry,
  type CreateProviderRegistryOptions,
  type ProviderRegistry,
} from '../../src/adapters/providers/registry';
import type { OperationStore } from '../../src/adapters/store/operation-store';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { AsyncJobClient } from '../../src/client';
import type { DeciderPolicyInForce } from '../../src/core/decider-policy';
import type { PollLoopLimits } from '../../src/core/poll-loop';
import { asyncJobServiceHandler } from '../../src/nexus/handler';
import { type AsyncJobWorkerOptions, createWorkers, runWorkers, shutdownWorkers } from '../../src/worker';
import { connectTestEnvironment, workflowBundle } from '../setup/temporal';

/** What {@link startDocumentWorker} started. */
export interface DocumentWorker {
  env: TestWorkflowEnvironment;
  store: OperationStore;
  registry: ProviderRegistry;
  client: AsyncJobClient;
  taskQueue: string;
  /** Stops the workers, then closes the registry, the store and the connection. Safe to call once. */
  stop(): Promise<void>;
}

/**
 * Starts a worker on task queue `taskQueue` for `providers` (as `createProviderRegistry` takes them), its store and
 * artifacts under `dataDir`; resolves once the server sees it polling every provider's queue.
 */
export async function startDocumentWorker(options: {
  taskQueue: string;
  dataDir: string;
  providers: CreateProviderRegistryOptions['providers'];
  env: Record<string, string>;
  baseUrls?: Record<string, string>;
  /** Values the store refuses to hold (the test's provider token). */
  forbiddenValues: string[];
  /** The worker's status loop (`core/poll-loop.ts`); `false`: one activity per status read. Default: on. */
  pollLoop?: PollLoopLimits | false;
  /** Rate limit per provider queue (requests per second). */
  maxRequestsPerSecond?: number;
  /** The fleet's send slots of rate-limited queues (a PostgreSQL store's `reserveProviderSend`). Default: none. */
  reserveProviderSend?: AsyncJobWorkerOptions['reserveProviderSend'];
  /** The decider policy the worker holds (D2): each operation started keeps it. Default: none. */
  deciders?: DeciderPolicyInForce;
  /** Serve the `asyncjob` Nexus service on the task queue, as `asyncjob worker` with ASYNCJOB_NEXUS_ENDPOINT. */
  nexus?: boolean;
  /** Changes the activities the worker registers (a worker of an earlier version, say). Default: as made. */
  activities?: (made: AsyncJobActivities) => AsyncJobActivities;
}): Promise<DocumentWorker> {
  const { taskQueue, dataDir } = options;
  const env = await connectTestEnvironment();
  const store = await openSqliteStore({
    path: path.join(dataDir, 'asyncjob.db'),
    forbiddenValues: options.forbiddenValues,
  });
  const registry = await createProviderRegistry({
    taskQueue,
    providers: options.providers,
    env: options.env,
    ...(options.baseUrls !== undefined ? { baseUrls: options.baseUrls } : {}),
    http: { headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000, connectTimeoutMs: 1_000 },
    // A rate is kept on the providers' own queues, as `asyncjob worker` does under ASYNCJOB_PROVIDER_RATE_LIMIT.
    ...(options.maxRequestsPerSecond !== undefined ? { ownQueues: 'all' as const } : {}),
  });
  const workers = await createWorkers({
    connection: env.nativeConnection,
    taskQueue,
    activities: (options.activities ?? ((made) => made))(
      createActivities({
        store,
        providers: registry,
        artifacts: new FileArtifactStore(path.join(dataDir, 'artifacts')),
        ...(options.pollLoop !== undefined ? { pollLoop: options.pollLoop } : {}),
        ...(options.deciders !== undefined ? { deciders: options.deciders } : {}),
      }),
    ),
    providerQueues: registry.names().map((name) => ({
      taskQueue: registry.get(name).taskQueue,
      ...(options.maxRequestsPerSecond !== undefined ? { maxRequestsPerSecond: options.maxRequestsPerSecond } : {}),
    })),
    ...(options.reserveProviderSend !== undefined ? { reserveProviderSend: options.reserveProviderSend } : {}),
    workflowBundle: await workflowBundle(),
    ...(options.nexus === true ? { nexusServices: [asyncJobServiceHandler({ providers: registry })] } : {}),
    shutdownGraceTime: '1 second',
  });
  const running = runWorkers(workers);
  const client = new AsyncJobClient({ client: env.client, taskQueue });
  await client.waitForWorkers(registry.names());
  return {
    env,
    store,
    registry,
    client,
    taskQueue,
    async stop() {
      shutdownWorkers(workers);
      await running.catch(() => undefined);
      await registry.close();
      await store.close();
      await env.teardown();
    },
  };
}

/** The rest preset as JSON, for a test to vary. */
type RestPreset = Record<string, unknown> & { create: Record<string, unknown> };

/**
 * Writes the rest preset, without its webhook and changed by `vary`, as provider `name` to `<dir>/<name>.json`;
 * returns the file, for {@link startDocumentWorker}'s `providers`.
 */
export async function writeRestVariant(
  dir: string,
  name: string,
  vary: (preset: RestPreset) => Record<string, unknown>,
): Promise<string> {
  const preset = JSON.parse(
    await readFile(path.join(__dirname, '../../src/adapters/providers/presets/rest.json'), 'utf8'),
  ) as RestPreset;
  delete preset.webhook;
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify({ ...vary(preset), name }, null, 2));
  return file;
}
