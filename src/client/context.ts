/**
 * What every part of the client works with: the Temporal client, the workflows' task queue and namespace, and
 * the one way to call Temporal so that every failure reaches the caller as a typed error (`translate.ts`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection, type Client, type WorkflowHandle } from '@temporalio/client';
import type { AsyncJobWorkflow } from '../workflows/async-job-workflow';
import { AsyncJobConnectionError, AsyncJobQueryTimeout } from './errors';
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
 * No answer in time is `AsyncJobQueryTimeout` or `AsyncJobUpdateTimeout`; a query the server ends early is asked
 * again within the time ({@link askAgainAfterMs}). A failure that cannot tell an unreachable server from a silent
 * worker (a deadline before any address was named, a dropped connection) is settled with a trivial call: a server
 * that answers it was reached, and the worker is what is missing; otherwise it is {@link AsyncJobConnectionError}.
 */
export async function workerCall<T>(
  ctx: ClientContext,
  operationId: string,
  kind: 'query' | 'update',
  timeoutMs: number,
  fn: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await ctx.client.withDeadline(deadline, fn);
    } catch (err) {
      const callContext = { operationId, address: addressOf(ctx), kind, timeoutMs };
      let typed = translateError(err, callContext);
      if (typed instanceof AsyncJobConnectionError && reachabilityUnknown(err) && (await serverAnswers(ctx)))
        typed = noWorkerAnswer(err, callContext);
      const pauseMs = askAgainAfterMs(typed, attempt, deadline - Date.now());
      if (pauseMs === null) throw typed;
      await sleep(pauseMs);
    }
  }
}

/** The least time a query must have left to be asked again: less could not outlast the server's next early end. */
const QUERY_AGAIN_MIN_LEFT_MS = 250;
/** The pause before a query is asked again, doubled each time up to {@link QUERY_AGAIN_MAX_PAUSE_MS}. */
const QUERY_AGAIN_FIRST_PAUSE_MS = 50;
const QUERY_AGAIN_MAX_PAUSE_MS = 1_000;

/**
 * How long to pause before asking a query again, or null to give its error to the caller. A query is read-only, so
 * one that ended without an answer before the caller's time was up (the server's own internal deadline, a call the
 * server cancelled, a connection that dropped while the server stays up) is asked again until that time: the
 * caller gave the worker `timeoutMs` to answer, not the server's shortest timer. The server's plain word that no
 * worker polls the queue is final. An update is never sent again here: its acceptance is unknown.
 */
function askAgainAfterMs(err: unknown, attempt: number, leftMs: number): number | null {
  if (!(err instanceof AsyncJobQueryTimeout) || err.serverSays !== undefined) return null;
  const pauseMs = Math.min(QUERY_AGAIN_MAX_PAUSE_MS, QUERY_AGAIN_FIRST_PAUSE_MS * 2 ** Math.min(attempt, 10));
  const usable = leftMs - QUERY_AGAIN_MIN_LEFT_MS;
  return usable >= QUERY_AGAIN_FIRST_PAUSE_MS ? Math.min(pauseMs, usable) : null;
}

/** Runs one query with a time limit (see {@link workerCall}). */
export function query<T>(ctx: ClientContext, operationId: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  return workerCall(ctx, operationId, 'query', timeoutMs, fn);
}
