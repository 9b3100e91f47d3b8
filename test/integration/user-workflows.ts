/**
 * A worker of a user's own workflows (parent workflows, Nexus callers) on the run's dev server, and the start
 * request such a workflow gives (no starter: the calling workflow is the starter), for the composition tests.
 */
import type { NativeConnection } from '@temporalio/worker';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { StartRequest } from '../../src/core/operation';

const noop = (): void => {};
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error };

/** A running worker of user workflows: its bundle (for replays) and its stop. */
export interface UserWorkflowWorker {
  bundle: WorkflowBundleWithSourceMap;
  stop(): Promise<void>;
}

/** Bundles `workflowsPath` and runs a worker of it on `taskQueue` in `namespace`. */
export async function startUserWorkflowWorker(
  connection: NativeConnection,
  options: { namespace: string; taskQueue: string; workflowsPath: string },
): Promise<UserWorkflowWorker> {
  const bundle = await bundleWorkflowCode({ workflowsPath: options.workflowsPath, logger: quietLogger });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowBundle: bundle,
  });
  const running = worker.run();
  return {
    bundle,
    async stop() {
      worker.shutdown();
      await running.catch(() => undefined);
    },
  };
}

/** A start request as a calling workflow gives it: without `startedBy`. */
export function withoutStarter(request: StartRequest): Omit<StartRequest, 'startedBy'> {
  const { startedBy: _starter, ...rest } = request;
  return rest;
}
