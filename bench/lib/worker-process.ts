/**
 * The benchmark's worker process (so its RSS is the worker's alone): asyncjob's workers exactly as the product
 * creates them (`createWorkers`), over a SQLite store, plus the bare baseline's worker with the same workflow
 * cache size, and when asked the webhook receiver beside them as `asyncjob worker` runs it (same process, same
 * store and provider contracts, signals over a client connection of its own). Configured by one JSON argument ({@link WorkerProcessConfig}); tells the parent `ready` over IPC
 * ({@link WorkerReady}), stops on SIGTERM or `stop`, and answers `{ memory: { gc } }` with its memory
 * ({@link WorkerMemory}), optionally after a forced GC.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import v8 from 'node:v8';
import workerThreads from 'node:worker_threads';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities';
import { FileArtifactStore } from '../../src/adapters/artifacts/artifact-store';
import { createProviderRegistry, type ProviderRegistry } from '../../src/adapters/providers/registry';
import type { OperationStore } from '../../src/adapters/store/operation-store';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { configSchema } from '../../src/config';
import { DEFAULT_PROVIDER_CALL_SLOTS } from '../../src/config/worker';
import { startWebhookReceiver } from '../../src/webhooks/receiver';
import type { PollLoopLimits } from '../../src/core/poll-loop';
import { createWorkers, pollLoopOf, runWorkers, shutdownWorkers, webhookSettingsOf } from '../../src/worker';
import { webhookSignal } from '../../src/workflows/messages';
import { createBareActivities } from '../bare/activities';

/** What the parent passes. */
export interface WorkerProcessConfig {
  address: string;
  taskQueue: string;
  dataDir: string;
  token: string;
  webhookSecret: string;
  asyncjobBundlePath: string;
  /** Providers (rest dialect), each with its simulator and optional rate limit. */
  providers: { name: string; url: string; maxRequestsPerSecond?: number }[];
  /** The bare baseline, when wanted: its task queue, bundle and simulator, and the namespaces it runs in. */
  bare?: { taskQueue: string; bundlePath: string; url: string; namespaces: string[] };
  /** Runs the webhook receiver beside the workers (127.0.0.1, a free port). */
  webhookReceiver?: boolean;
}

/** One V8 isolate's heap (the process's main thread or a workflow thread), MiB. */
export interface ThreadHeap {
  threadId: number;
  usedMiB: number;
  totalMiB: number;
  /** Memory V8 allocated with malloc outside the heap (e.g. compiled code metadata), MiB. */
  mallocedMiB: number;
  nativeContexts: number;
  detachedContexts: number;
}

/** What the worker process answers to `{ memory: { gc } }`. */
export interface WorkerMemory {
  /** Whether every isolate was garbage-collected just before reading (so heap figures are live data). */
  gc: boolean;
  /** `process.memoryUsage()`, MiB: `heap*` is the main thread's isolate only, not the workflow threads'. */
  rssMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
  mainHeap: ThreadHeap;
  /** The SDK's workflow threads (where the workflows' V8 contexts live); empty if none answered. */
  workflowThreads: ThreadHeap[];
  /** The main task queue's workflow worker as the SDK compiled its options, and its cache now. */
  workflowWorker: {
    maxCachedWorkflows: number;
    reuseV8Context: boolean;
    workflowThreadPoolSize: number;
    numCachedWorkflows: number;
  };
}

/** What the worker process tells its parent once its workers run. */
export interface WorkerReady {
  /** Each workflow worker's cache size as the SDK compiled its options: asyncjob's, and bare's when it runs. */
  maxCachedWorkflows: { asyncjob: number; bare?: number };
  /** The webhook receiver's URL (`<url>/webhooks/<provider>`), when it runs. */
  webhookUrl?: string;
  /** The status loop this worker offers its workflows (`pollLoopOf`, as `asyncjob worker`), or false. */
  pollLoop: PollLoopLimits | false;
}

const MEMORY_CHANNEL = 'asyncjob-bench-memory';
const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

function threadHeap(threadId: number, h: v8.HeapInfo): ThreadHeap {
  return {
    threadId,
    usedMiB: mib(h.used_heap_size),
    totalMiB: mib(h.total_heap_size),
    mallocedMiB: mib(h.malloced_memory),
    nativeContexts: h.number_of_native_contexts,
    detachedContexts: h.number_of_detached_contexts,
  };
}

/**
 * The workflows run in the SDK's worker threads, whose heaps `process.memoryUsage()` does not see and Node 20
 * cannot read from outside. So every thread started here runs a small probe first (then the SDK's own file,
 * unchanged) that answers heap questions on a BroadcastChannel. Returns how many threads were started.
 */
function probeWorkerThreads(): () => number {
  const Original = workerThreads.Worker;
  let started = 0;
  class ProbedWorker extends Original {
    constructor(filename: string | URL, options?: workerThreads.WorkerOptions) {
      if (options?.eval || typeof filename !== 'string') {
        super(filename, options);
        return;
      }
      const probe = `
        const { BroadcastChannel, threadId } = require('node:worker_threads');
        const v8 = require('node:v8');
        const channel = new BroadcastChannel(${JSON.stringify(MEMORY_CHANNEL)});
        channel.unref();
        channel.onmessage = ({ data }) => {
          if (data.ask !== 'heap') return;
          if (data.gc && typeof gc === 'function') gc();
          channel.postMessage({ threadId, heap: v8.getHeapStatistics() });
        };
        require(${JSON.stringify(filename)});`;
      super(probe, { ...options, eval: true });
      started++;
    }
  }
  workerThreads.Worker = ProbedWorker;
  return () => started;
}

async function workflowThreadHeaps(threads: number, gc: boolean): Promise<ThreadHeap[]> {
  if (threads === 0) return [];
  const channel = new workerThreads.BroadcastChannel(MEMORY_CHANNEL);
  const heaps: ThreadHeap[] = [];
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 5_000);
      channel.onmessage = (event) => {
        const data = (event as { data: { threadId?: number; heap?: v8.HeapInfo } }).data;
        if (data.heap === undefined || data.threadId === undefined) return;
        heaps.push(threadHeap(data.threadId, data.heap));
        if (heaps.length === threads) {
          clearTimeout(timer);
          resolve();
        }
      };
      channel.postMessage({ ask: 'heap', gc });
    });
  } finally {
    channel.close();
  }
  return heaps;
}

async function readMemory(main: Worker, threads: number, gc: boolean): Promise<WorkerMemory> {
  const collect = (globalThis as { gc?: () => void }).gc;
  const forced = gc && collect !== undefined;
  const workflowThreads = await workflowThreadHeaps(threads, forced);
  if (forced) collect();
  const m = process.memoryUsage();
  const o = main.options;
  return {
    gc: forced,
    rssMiB: mib(m.rss),
    heapUsedMiB: mib(m.heapUsed),
    heapTotalMiB: mib(m.heapTotal),
    externalMiB: mib(m.external),
    arrayBuffersMiB: mib(m.arrayBuffers),
    mainHeap: threadHeap(workerThreads.threadId, v8.getHeapStatistics()),
    workflowThreads,
    workflowWorker: {
      maxCachedWorkflows: o.maxCachedWorkflows,
      reuseV8Context: o.reuseV8Context ?? true,
      workflowThreadPoolSize: o.workflowThreadPoolSize,
      numCachedWorkflows: main.getStatus().numCachedWorkflows,
    },
  };
}

/**
 * The webhook receiver as `asyncjob worker` starts it beside its workers (`startReceiverBeside`, src/worker.ts):
 * the worker's store and provider contracts, a client connection of its own for the signals.
 */
async function startReceiver(
  config: WorkerProcessConfig,
  store: OperationStore,
  registry: ProviderRegistry,
  env: NodeJS.ProcessEnv,
): Promise<{ url: string; stop(): Promise<void> }> {
  const connection = await Connection.connect({ address: config.address });
  const client = new Client({ connection });
  const receiver = await startWebhookReceiver({
    store,
    webhookSettings: webhookSettingsOf(registry),
    signal: (operationId, hint) => client.workflow.getHandle(operationId).signal(webhookSignal, hint),
    env,
  });
  return {
    url: receiver.url,
    async stop() {
      await receiver.stop();
      await connection.close();
    },
  };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerProcessConfig;
  const workflowThreads = probeWorkerThreads();
  const maxCachedWorkflows = configSchema.shape.ASYNCJOB_MAX_CACHED_WORKFLOWS.parse(
    process.env.ASYNCJOB_MAX_CACHED_WORKFLOWS,
  );
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const env = { ASYNCJOB_SIMULATOR_TOKEN: config.token, ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: config.webhookSecret };
  const connection = await NativeConnection.connect({ address: config.address });
  // The production configuration: the journal chained with an HMAC key kept outside the database (README, Audit).
  const store = await openSqliteStore({
    path: path.join(config.dataDir, 'asyncjob.db'),
    hmacKey: randomBytes(32).toString('hex'),
    forbiddenValues: [config.token],
  });
  const registry = await createProviderRegistry({
    providers: config.providers.map((p) => ({ name: p.name, path: 'rest' })),
    baseUrls: Object.fromEntries(config.providers.map((p) => [p.name, p.url])),
    env,
    taskQueue: config.taskQueue,
    // A rate-limited provider's calls on its own queue, as `asyncjob worker` puts them (F9); the others' eager.
    ownQueues: config.providers.filter((p) => p.maxRequestsPerSecond !== undefined).map((p) => p.name),
  });
  // The status loop as `asyncjob worker` sets it from its environment (a rate limit included).
  const rate = config.providers.find((p) => p.maxRequestsPerSecond !== undefined)?.maxRequestsPerSecond;
  const pollLoop = pollLoopOf(
    configSchema.parse({
      ...process.env,
      ...(rate !== undefined ? { ASYNCJOB_PROVIDER_RATE_LIMIT: String(rate) } : {}),
    }),
  );
  const workers = await createWorkers({
    connection,
    taskQueue: config.taskQueue,
    activities: createActivities({
      store,
      providers: registry,
      artifacts: new FileArtifactStore(path.join(config.dataDir, 'artifacts')),
      pollLoop,
    }),
    providerQueues: config.providers.map((p) => ({
      taskQueue: registry.get(p.name).taskQueue,
      ...(p.maxRequestsPerSecond !== undefined ? { maxRequestsPerSecond: p.maxRequestsPerSecond } : {}),
    })),
    workflowBundle: { codePath: config.asyncjobBundlePath },
    // The product's own variable, read as `asyncjob worker` reads it: lets a run compare cache sizes (the
    // product's default otherwise). The cache, not the number of waiting operations, sets the worker's RSS.
    ...(maxCachedWorkflows !== undefined ? { maxCachedWorkflows } : {}),
    shutdownGraceTime: '1 second',
  });
  const asyncjobCache = workers[0]!.options.maxCachedWorkflows;
  const bare = config.bare ? createBareActivities({ baseUrl: config.bare.url, token: config.token }) : undefined;
  const bareWorkers: Worker[] = [];
  if (config.bare && bare) {
    const { taskQueue, bundlePath, namespaces } = config.bare;
    for (const namespace of namespaces) {
      bareWorkers.push(
        await Worker.create({
          connection,
          namespace,
          taskQueue,
          workflowBundle: { codePath: bundlePath },
          activities: bare.activities,
          // asyncjob's provider slots (ASYNCJOB_PROVIDER_CALL_SLOTS' default), so neither waits for a slot the other has.
          maxConcurrentActivityTaskExecutions: DEFAULT_PROVIDER_CALL_SLOTS,
          // asyncjob's cache size, not the SDK's default (sized from memory): past it both replay evicted workflows.
          maxCachedWorkflows: asyncjobCache,
          shutdownGraceTime: '1 second',
        }),
      );
    }
  }
  workers.push(...bareWorkers);
  const receiver = config.webhookReceiver ? await startReceiver(config, store, registry, env) : undefined;
  const stop = (): void => shutdownWorkers(workers);
  process.on('SIGTERM', stop);
  process.on('message', (m: unknown) => {
    if (m === 'stop') stop();
    if (typeof m === 'object' && m !== null && 'memory' in m) {
      const gc = (m as { memory: { gc?: boolean } }).memory.gc === true;
      void readMemory(workers[0]!, workflowThreads(), gc).then((memory) => process.send?.({ memory }));
    }
  });
  const running = runWorkers(workers);
  const ready: WorkerReady = {
    maxCachedWorkflows: {
      asyncjob: asyncjobCache,
      ...(bareWorkers[0] ? { bare: bareWorkers[0].options.maxCachedWorkflows } : {}),
    },
    ...(receiver ? { webhookUrl: receiver.url } : {}),
    pollLoop,
  };
  process.send?.({ ready });
  await running;
  await receiver?.stop();
  await bare?.close();
  await registry.close();
  await store.close();
  await connection.close();
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error('bench worker process failed:', err);
  process.exit(1);
});
