/**
 * Parent workflows of the child-workflow integration test: a user's workflows that run an operation through
 * `asyncjob/workflow` (from source here; test/package bundles it through the package's exports map).
 */
import { defineQuery, setHandler } from '@temporalio/workflow';
import {
  executeAsyncJob,
  startAsyncJob,
  type AsyncJobChildOptions,
  type ChildStartRequest,
  type OperationSummary,
  type ParentEscalation,
} from '../../../src/workflow-api';

/** The escalation the parent's handle holds now (`handle.escalation()`, N3). */
export const handleEscalationQuery = defineQuery<ParentEscalation | null>('handleEscalation');

/** Runs one operation as a child and returns its summary; shows its handle's escalation through a query. */
export async function runReportJob(
  request: ChildStartRequest,
  options: AsyncJobChildOptions,
): Promise<OperationSummary> {
  const handle = await startAsyncJob(request, options);
  setHandler(handleEscalationQuery, () => handle.escalation());
  return handle.result();
}

/** Passes whatever it is given to `executeAsyncJob`, as untyped code might (a run-time refusal is the test). */
export async function runUncheckedJob(request: unknown, options: unknown): Promise<OperationSummary> {
  return executeAsyncJob(request as ChildStartRequest, options as AsyncJobChildOptions);
}

/** Starts an operation, asks to cancel it with `reason`, and returns its summary (a refused reason is the test). */
export async function cancelWithReason(
  request: ChildStartRequest,
  options: AsyncJobChildOptions,
  reason: string,
): Promise<OperationSummary> {
  const handle = await startAsyncJob(request, options);
  await handle.cancel(reason);
  return handle.result();
}
