/**
 * The asyncjob worker: the workflow worker on the main task queue (workflows, store activities, the provider
 * lookup) and one activity worker per provider task queue, each rate-limited so a fleet of workers cannot exceed
 * the provider's rate (`maxTaskQueueActivitiesPerSecond` is enforced by the server across all workers).
 */
import path from 'node:path';
import { type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { AsyncJobActivities } from './activities/types';

/** The task queue asyncjob's workflows run on unless told otherwise. */
export const DEFAULT_TASK_QUEUE = 'asyncjob';

/** Absolute path of the workflows entry, for bundling (`.ts` from source, `.js` from `dist/`). */
export const workflowsPath = path.join(__dirname, 'workflows', `index${path.extname(__filename)}`);

/** A provider's activity queue and its rate. */
export interface ProviderQueue {
  /** The provider's activity task queue (from `ProviderFacts.taskQueue`). */
  taskQueue: string;
  /** The most provider calls per second across every worker of the fleet; unlimited when absent. */
  maxRequestsPerSecond?: number;
}

/** Options for {@link createWorkers}. */
export interface AsyncJobWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  activities: AsyncJobActivities;
  providerQueues: ProviderQueue[];
  /** Pre-bundled workflow code (tests bundle once per file); bundled from source when absent. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Concurrent provider calls per worker and queue. */
  maxConcurrentProviderCalls?: number;
  /** Graceful shutdown time for in-flight activities. */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
}

/** Creates (does not run) the workflow worker and one activity worker per provider queue. */
export async function createWorkers(options: AsyncJobWorkerOptions): Promise<Worker[]> {
  const namespace = options.namespace ?? 'default';
  const common = { connection: options.connection, namespace, shutdownGraceTime: options.shutdownGraceTime ?? '10 seconds' };
  const main = await Worker.create({
    ...common,
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    activities: options.activities,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath }),
  });
  const seen = new Set<string>();
  const providerWorkers: Worker[] = [];
  for (const queue of options.providerQueues) {
    if (seen.has(queue.taskQueue)) continue;
    seen.add(queue.taskQueue);
    providerWorkers.push(
      await Worker.create({
        ...common,
        taskQueue: queue.taskQueue,
        activities: options.activities,
        maxConcurrentActivityTaskExecutions: options.maxConcurrentProviderCalls ?? 100,
        ...(queue.maxRequestsPerSecond !== undefined ? { maxTaskQueueActivitiesPerSecond: queue.maxRequestsPerSecond } : {}),
      }),
    );
  }
  return [main, ...providerWorkers];
}

/** Runs workers until they are shut down (the runtime stops them on SIGINT/SIGTERM). */
export async function runWorkers(workers: Worker[]): Promise<void> {
  await Promise.all(workers.map((w) => w.run()));
}

/** Asks every worker to shut down gracefully; safe to repeat. */
export function shutdownWorkers(workers: Worker[]): void {
  for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
}
