/**
 * The benchmark's worker process (so its RSS is the worker's alone): asyncjob's workers exactly as the product
 * creates them (`createWorkers`), over a SQLite store, plus the bare baseline's worker. Configured by one JSON
 * argument ({@link WorkerProcessConfig}); tells the parent `ready` over IPC, stops on SIGTERM or `stop`.
 */
import path from 'node:path';
import { NativeConnection, Runtime, DefaultLogger, Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities';
import { FileArtifactStore } from '../../src/adapters/artifacts/artifact-store';
import { createProviderRegistry } from '../../src/adapters/providers/registry';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { createWorkers, runWorkers, shutdownWorkers } from '../../src/worker';
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
  /** The bare baseline, when wanted: its task queue, bundle and simulator. */
  bare?: { taskQueue: string; bundlePath: string; url: string };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerProcessConfig;
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const env = { ASYNCJOB_SIMULATOR_TOKEN: config.token, ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: config.webhookSecret };
  const connection = await NativeConnection.connect({ address: config.address });
  const store = await openSqliteStore({ path: path.join(config.dataDir, 'asyncjob.db'), forbiddenValues: [config.token] });
  const registry = await createProviderRegistry({
    providers: config.providers.map((p) => ({ name: p.name, path: 'rest' })),
    baseUrls: Object.fromEntries(config.providers.map((p) => [p.name, p.url])),
    env,
  });
  const workers = await createWorkers({
    connection,
    taskQueue: config.taskQueue,
    activities: createActivities({ store, providers: registry, artifacts: new FileArtifactStore(path.join(config.dataDir, 'artifacts')) }),
    providerQueues: config.providers.map((p) => ({
      taskQueue: registry.get(p.name).facts.taskQueue!,
      ...(p.maxRequestsPerSecond !== undefined ? { maxRequestsPerSecond: p.maxRequestsPerSecond } : {}),
    })),
    workflowBundle: { codePath: config.asyncjobBundlePath },
    shutdownGraceTime: '1 second',
  });
  const bare = config.bare ? createBareActivities({ baseUrl: config.bare.url, token: config.token }) : undefined;
  if (config.bare && bare) {
    workers.push(
      await Worker.create({
        connection,
        taskQueue: config.bare.taskQueue,
        workflowBundle: { codePath: config.bare.bundlePath },
        activities: bare.activities,
        maxConcurrentActivityTaskExecutions: 100,
        shutdownGraceTime: '1 second',
      }),
    );
  }
  const stop = (): void => shutdownWorkers(workers);
  process.on('SIGTERM', stop);
  process.on('message', (m) => {
    if (m === 'stop') stop();
  });
  const running = runWorkers(workers);
  process.send?.('ready');
  await running;
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
