/**
 * Parent workflows of the parent-close test: each starts an operation through `asyncjob/workflow` and closes
 * without waiting for its result, so Temporal applies the parent-close policy to the still-running child (N1).
 */
import { condition, defineSignal, setHandler } from '@temporalio/workflow';
import { startAsyncJob, type AsyncJobChildOptions, type ChildStartRequest } from '../../../src/workflow-api';

/** Tells {@link closeWhenSignalled} to return. */
export const closeSignal = defineSignal('close');

/** Starts the operation and returns its ID at once, never waiting for the job. */
export async function closeAfterStart(request: ChildStartRequest, options: AsyncJobChildOptions): Promise<string> {
  const handle = await startAsyncJob(request, options);
  return handle.operationId;
}

/**
 * Starts the operation and returns its ID when signalled, never waiting for the job: the test signals once the
 * provider's job exists, so the parent closes while it runs.
 */
export async function closeWhenSignalled(request: ChildStartRequest, options: AsyncJobChildOptions): Promise<string> {
  let closing = false;
  setHandler(closeSignal, () => {
    closing = true;
  });
  const handle = await startAsyncJob(request, options);
  await condition(() => closing);
  return handle.operationId;
}

/** Starts the operation and waits on it until an operator terminates this parent. */
export async function waitUntilTerminated(request: ChildStartRequest, options: AsyncJobChildOptions): Promise<void> {
  await startAsyncJob(request, options);
  await condition(() => false);
}

/** Passes whatever options it is given to `startAsyncJob`, as untyped code might (a run-time refusal is the test). */
export async function closeWithUncheckedOptions(request: ChildStartRequest, options: unknown): Promise<string> {
  const handle = await startAsyncJob(request, options as AsyncJobChildOptions);
  return handle.operationId;
}
