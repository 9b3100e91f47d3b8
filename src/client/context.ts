/**
 * What every part of the client works with: the Temporal client, the workflows' task queue and namespace, and
 * the one way to call Temporal so that every failure reaches the caller as a typed error (`translate.ts`).
 */
import { Connection, type Client, type WorkflowHandle } from '@temporalio/client';
import type { AsyncJobWorkflow } from '../workflows/async-job-workflow';
import { AsyncJobConnectionError } from './errors';
import { noWorkerAnswer, reachabilityUnknown, translateError } from './translate';

/** The workflow type name the worker registers. */
export const WORKFLOW_TYPE = 'AsyncJobWorkflow';

export { DEFAULT_TASK_QUEUE, providerTaskQueue } from '../core/task-queues';

/** The client's view of one Temporal namespace. */
export interface ClientContext {
  readonly client: Client;
  /** The workflows' task queue. */
  readonly taskQueue: string;
  readonly namespace: string;
}

/** The server's address as configured, for messages. */
export function addressOf(ctx: ClientContext): string {
  const connection = ctx.client.connection;
  return connection instanceof Connection ? connection.options.address : 'the configured address';
}

/** The handle of the operation's workflow (its latest run). */
export function workflowHandle(
  ctx: ClientContext,
  operationId: string,
  runId?: string,
): WorkflowHandle<typeof AsyncJobWorkflow> {
  return ctx.client.workflow.getHandle<typeof AsyncJobWorkflow>(operationId, runId);
}

/** Runs one call to Temporal; any failure comes back as a typed error (`translate.ts`). */
export async function call<T>(ctx: ClientContext, operationId: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw translateError(err, { operationId, address: addressOf(ctx), kind: 'call' });
  }
}

/** How long the server has to answer the trivial call that tells "unreachable" from "no worker". */
const REACHABILITY_CHECK_MS = 3_000;

/** Whether the server answers a trivial call within a few seconds. */
async function serverAnswers(ctx: ClientContext): Promise<boolean> {
  try {
    await ctx.client.withDeadline(Date.now() + REACHABILITY_CHECK_MS, () =>
      ctx.client.workflowService.getSystemInfo({}),
    );
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs one call a worker must answer (a query; an update until a worker accepts or refuses it) with a time limit.
 * No answer in time is `AsyncJobQueryTimeout` or `AsyncJobUpdateTimeout`, whoever gave up first. A
 * failure that cannot tell an unreachable server from a silent worker (a deadline before any address was named, a
 * dropped connection) is settled with a trivial call: a server that answers it was reached, and the worker is
 * what is missing; otherwise it is {@link AsyncJobConnectionError}.
 */
export async function workerCall<T>(
  ctx: ClientContext,
  operationId: string,
  kind: 'query' | 'update',
  timeoutMs: number,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await ctx.client.withDeadline(Date.now() + timeoutMs, fn);
  } catch (err) {
    const callContext = { operationId, address: addressOf(ctx), kind, timeoutMs };
    const typed = translateError(err, callContext);
    if (typed instanceof AsyncJobConnectionError && reachabilityUnknown(err) && (await serverAnswers(ctx)))
      throw noWorkerAnswer(err, callContext);
    throw typed;
  }
}

/** Runs one query with a time limit (see {@link workerCall}). */
export function query<T>(ctx: ClientContext, operationId: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  return workerCall(ctx, operationId, 'query', timeoutMs, fn);
}
