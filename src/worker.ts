/**
 * The asyncjob worker: registers the workflows (and, as they arrive, the activities) on a task queue.
 */
import path from 'node:path';
import { type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';

/** The task queue asyncjob's workflows run on unless told otherwise. */
export const DEFAULT_TASK_QUEUE = 'asyncjob';

/** Options for {@link createWorker}. */
export interface AsyncJobWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  /** Pre-bundled workflow code (tests bundle once per file); bundled from source when absent. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

/** Absolute path of the workflows entry, for bundling (`.ts` from source, `.js` from `dist/`). */
export const workflowsPath = path.join(__dirname, 'workflows', `index${path.extname(__filename)}`);

/** Creates (does not run) a worker for asyncjob's workflows. */
export async function createWorker(options: AsyncJobWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath }),
  });
}
