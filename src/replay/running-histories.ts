/**
 * The histories of the operations running now, read from Temporal for `asyncjob replay-check`: the visibility
 * store lists the running AsyncJobWorkflow executions of the task queue (newest first), and the current run of each
 * is read whole. No worker is needed. These are the histories a new worker will replay when it picks them up.
 */
import { connectFromEnvironment } from '../client/connection';
import { call, type ClientContext, WORKFLOW_TYPE } from '../client/context';
import { OperationNotFoundError } from '../client/errors';
import type { ReplayHistory } from './replay-check';

/** How many histories are read at once: a few, so a hundred are read in seconds without crowding the server. */
const READS_AT_ONCE = 8;

/** Options of {@link readRunningHistories}. */
export interface RunningHistoriesOptions {
  /** The visibility query ({@link runningQuery}). */
  query: string;
  /** At most this many, newest first. */
  limit: number;
}

/** What {@link readRunningHistories} found. */
export interface RunningHistories {
  histories: ReplayHistory[];
  /** More were running than the limit: only the newest `limit` were read. */
  truncated: boolean;
}

/** A connection to Temporal for reading histories (the client's environment conventions). */
export interface HistorySource {
  ctx: ClientContext;
  close(): Promise<void>;
}

/** A visibility-query string literal: single-quoted, its quotes and backslashes escaped. */
function literal(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The running AsyncJobWorkflow executions of `taskQueue`, and-ed with the operator's own filter when given. */
export function runningQuery(taskQueue: string, extra?: string): string {
  const running = `WorkflowType = ${literal(WORKFLOW_TYPE)} AND ExecutionStatus = 'Running' AND TaskQueue = ${literal(taskQueue)}`;
  return extra !== undefined ? `${running} AND (${extra})` : running;
}

/**
 * Connects as the CLI's client does (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS, API key) and names the task queue
 * (ASYNCJOB_TASK_QUEUE). Throws `ConfigError` or `TlsFileError` for a bad environment (exit 2) and
 * `AsyncJobConnectionError` when the server cannot be reached (exit 5).
 */
export async function connectHistorySource(env: NodeJS.ProcessEnv): Promise<HistorySource> {
  const { client, connection, config } = await connectFromEnvironment(env);
  return {
    ctx: { client, taskQueue: config.ASYNCJOB_TASK_QUEUE, namespace: client.options.namespace },
    close: () => connection.close(),
  };
}

/** The workflow and run IDs of up to `limit` executions the query lists, newest first. */
async function listExecutions(ctx: ClientContext, query: string, limit: number): Promise<[string, string][]> {
  return call(ctx, '(replay-check)', async () => {
    const found: [string, string][] = [];
    for await (const info of ctx.client.workflow.list({ query, pageSize: Math.min(limit, 1000) })) {
      found.push([info.workflowId, info.runId]);
      if (found.length >= limit) break;
    }
    return found;
  });
}

/** One run's whole history; null when it is gone since it was listed. */
async function readHistory(ctx: ClientContext, workflowId: string, runId: string): Promise<ReplayHistory | null> {
  try {
    const history = await call(ctx, workflowId, () => ctx.client.workflow.getHandle(workflowId, runId).fetchHistory());
    return { workflowId, runId, file: null, history };
  } catch (err) {
    if (err instanceof OperationNotFoundError) return null;
    throw err;
  }
}

/** `fn` over `items`, at most `lanes` at a time, results in the items' order. */
async function inLanes<T, R>(items: readonly T[], lanes: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
  return results;
}

/**
 * Reads the histories of up to `limit` executions the query lists, newest first. Errors are the client's typed
 * ones (`src/client/translate.ts`): a query the server refuses is `AsyncJobServerError` with gRPC code 3.
 */
export async function readRunningHistories(
  ctx: ClientContext,
  options: RunningHistoriesOptions,
): Promise<RunningHistories> {
  // One more than asked tells whether there were more.
  const listed = await listExecutions(ctx, options.query, options.limit + 1);
  const chosen = listed.slice(0, options.limit);
  const read = await inLanes(chosen, READS_AT_ONCE, ([workflowId, runId]) => readHistory(ctx, workflowId, runId));
  return { histories: read.filter((h): h is ReplayHistory => h !== null), truncated: listed.length > options.limit };
}
