/**
 * Waiting for an operation the way callers of long-running operations expect (Azure's `pollUntilDone` and
 * `onProgress`, AWS's waiters with `maxWaitTime`): {@link waitForOutcome} returns when the operation ends OR
 * escalates (something a caller can act on), {@link watchOperation} yields each change of its record. Both follow
 * the workflow's history by long poll (no worker needed to notice a change, and no busy polling): the workflow
 * publishes every state change as a search attribute, so a wait wakes within moments of an escalation.
 */
import { type Payload, WorkflowFailedError, type WorkflowExecutionDescription } from '@temporalio/client';
import type { OperationRecord } from '../core/operation';
import { operationSummary } from '../core/step';
import { FINAL_STATES } from '../core/transitions';
import { type OperationSummary, stateQuery } from '../workflows/messages';
import { withPendingAnswer } from './pending-read';
import { stateKey } from '../workflows/search-attributes';
import { type ClientContext, workflowHandle } from './context';
import { describeRaw, FAILED_EXECUTION_STATUSES, workflowFailure } from './describe';
import { OperationFailedError } from './errors';
import { decodePayloads, HistoryFollower, type HistoryBatch, type HistoryEvent, waitUntilClosed } from './history';
import { queryOperation } from './queries';
import { type WaitOptions, WaitScope } from './wait-scope';

export type { WaitOptions } from './wait-scope';

/** Options of {@link watchOperation}. */
export interface WatchOptions extends WaitOptions {
  /** Reads the record at least this often, changed or not (default 5 000 ms); a change is read at once anyway. */
  intervalMs?: number;
  /** Yields the record at every reading, not only when it changed (to redraw a countdown). */
  includeUnchanged?: boolean;
  /** How long a worker has to answer each reading (default 30 000 ms). */
  queryTimeoutMs?: number;
}

const DEFAULT_WATCH_INTERVAL_MS = 5_000;
const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/** The error of a workflow that closed without a summary (failed, terminated, timed out, cancelled). */
async function closedWithoutSummary(
  ctx: ClientContext,
  operationId: string,
  d: WorkflowExecutionDescription,
  cause?: unknown,
): Promise<OperationFailedError> {
  const failure = await workflowFailure(ctx, operationId, d.runId, d.status.name);
  const detail = failure ? failure.message : d.status.name;
  return new OperationFailedError(operationId, detail, {
    cause: cause ?? new Error(detail),
    ...(failure ? { failure } : {}),
  });
}

/**
 * The summary of a closed operation, or its workflow's failure as {@link OperationFailedError}. `close`: the run's
 * close event when the caller has it; without it the close is waited for.
 */
async function closedOutcome(ctx: ClientContext, scope: WaitScope, close?: HistoryEvent): Promise<OperationSummary> {
  const { operationId } = scope;
  const event = close ?? (await scope.run(() => waitUntilClosed(ctx, operationId, scope.signal)));
  // A completed run's summary is in its close event: decoded as the SDK's `result()` decodes it, with no read.
  const completed = event.workflowExecutionCompletedEventAttributes;
  if (completed) {
    const [summary] = await scope.run(() => decodePayloads(ctx, (completed.result?.payloads ?? []) as Payload[]));
    return summary as OperationSummary;
  }
  // The run's failure is an answer to explain (with its execution status), read before the call's errors are typed.
  const outcome = await scope.run(async () => {
    try {
      return { kind: 'summary' as const, summary: await workflowHandle(ctx, operationId).result() };
    } catch (err) {
      if (!(err instanceof WorkflowFailedError)) throw err;
      return { kind: 'failed' as const, failure: err };
    }
  });
  if (outcome.kind === 'summary') return outcome.summary;
  throw await closedWithoutSummary(ctx, operationId, await describeRaw(ctx, operationId), outcome.failure);
}

/** The summary of the operation when it is escalated right now (its record, read by query), else null. */
async function escalatedNow(
  ctx: ClientContext,
  scope: WaitScope,
  signal: AbortSignal,
): Promise<OperationSummary | null> {
  const d = await scope.run(() => describeRaw(ctx, scope.operationId), signal);
  if (d.status.name !== 'RUNNING' || d.typedSearchAttributes.get(stateKey) !== 'escalated') return null;
  // The search attribute says so; the record (the workflow's own truth, after every message it answered) confirms.
  const record = await scope.run(
    () =>
      queryOperation(ctx, scope.operationId, DEFAULT_QUERY_TIMEOUT_MS, () =>
        workflowHandle(ctx, scope.operationId).query(stateQuery),
      ),
    signal,
  );
  return record.localState === 'escalated' ? operationSummary(record) : null;
}

/** Follows the run's history until the operation escalates (its summary) or closes (null). */
async function escalationSeen(
  ctx: ClientContext,
  scope: WaitScope,
  signal: AbortSignal,
): Promise<OperationSummary | null> {
  const follower = new HistoryFollower(ctx, scope.operationId);
  for (;;) {
    const batch = await follower.next(signal);
    if (batch.closed) return null;
    if (batch.mayHaveEscalated) {
      const escalated = await escalatedNow(ctx, scope, signal);
      if (escalated) return escalated;
    }
  }
}

type CloseOrEscalation = { close: HistoryEvent } | { escalated: OperationSummary };

/**
 * The run's close event or, if it comes first, the operation's escalation; the other's calls are stopped. The close
 * has its own long poll, answered the moment the run closes: the follower reads a busy history at most every
 * 250 ms, which would hold a short operation's result back by as much.
 */
async function closeOrEscalation(ctx: ClientContext, scope: WaitScope): Promise<CloseOrEscalation> {
  const settled = new AbortController();
  const signal = AbortSignal.any([scope.signal, settled.signal]);
  try {
    const close = waitUntilClosed(ctx, scope.operationId, signal).then((event): CloseOrEscalation => ({
      close: event,
    }));
    const escalation = escalationSeen(ctx, scope, signal).then(
      (escalated): CloseOrEscalation | Promise<CloseOrEscalation> => (escalated ? { escalated } : close),
    );
    return await Promise.race([close, escalation]);
  } catch (err) {
    throw scope.failure(err);
  } finally {
    settled.abort();
  }
}

/**
 * Waits until the operation ends, or escalates (unless `untilFinal`), and returns its summary: for an escalation,
 * `localState: 'escalated'` and `escalation` with its reason and text. Throws {@link OperationFailedError} when
 * the workflow closed without a summary, `AsyncJobAborted` / `AsyncJobWaitTimeout` when the wait is stopped.
 */
export async function waitForOutcome(
  ctx: ClientContext,
  operationId: string,
  options: WaitOptions = {},
): Promise<OperationSummary> {
  const scope = new WaitScope(ctx, operationId, options);
  try {
    // Only the end matters: Temporal's own wait for the close event, no other event read.
    if (options.untilFinal) return await closedOutcome(ctx, scope);
    const first = await closeOrEscalation(ctx, scope);
    return 'escalated' in first ? first.escalated : await closedOutcome(ctx, scope, first.close);
  } finally {
    scope.dispose();
  }
}

/** The next history batch, or null when `intervalMs` passed first (the long poll is abandoned and asked again later). */
async function nextOrTick(
  follower: HistoryFollower,
  scope: WaitScope,
  intervalMs: number,
): Promise<HistoryBatch | null> {
  const tick = new AbortController();
  const timer = setTimeout(() => tick.abort(), intervalMs);
  const onStop = (): void => tick.abort();
  scope.signal.addEventListener('abort', onStop, { once: true });
  try {
    return await follower.next(tick.signal);
  } catch (err) {
    if (tick.signal.aborted && !scope.signal.aborted) return null;
    throw scope.failure(err);
  } finally {
    clearTimeout(timer);
    scope.signal.removeEventListener('abort', onStop);
  }
}

/** True when a watch stops at this record. */
function watchEndsAt(record: OperationRecord, untilFinal: boolean): boolean {
  return FINAL_STATES.includes(record.localState) || (!untilFinal && record.localState === 'escalated');
}

/**
 * Yields the operation's record each time it changes (and at least every `intervalMs` with `includeUnchanged`),
 * ending after a final record, or an escalated one unless `untilFinal`. Throws {@link OperationFailedError}
 * when the workflow closed without a final state, `AsyncJobAborted` / `AsyncJobWaitTimeout` when stopped, and
 * `AsyncJobQueryTimeout` when no worker answers a reading.
 */
export async function* watchOperation(
  ctx: ClientContext,
  operationId: string,
  options: WatchOptions = {},
): AsyncGenerator<OperationRecord, void, undefined> {
  const scope = new WaitScope(ctx, operationId, options);
  const intervalMs = options.intervalMs ?? DEFAULT_WATCH_INTERVAL_MS;
  const queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  try {
    const d = await scope.run(() => describeRaw(ctx, operationId));
    if (FAILED_EXECUTION_STATUSES.includes(d.status.name)) throw await closedWithoutSummary(ctx, operationId, d);
    const follower = new HistoryFollower(ctx, operationId, d.runId);
    let closed = d.status.name !== 'RUNNING';
    let last = '';
    for (;;) {
      const record = await scope.run(() =>
        withPendingAnswer(
          ctx,
          operationId,
          queryOperation(ctx, operationId, queryTimeoutMs, () => workflowHandle(ctx, operationId).query(stateQuery)),
        ),
      );
      const key = JSON.stringify(record);
      if (key !== last || options.includeUnchanged) yield record;
      last = key;
      if (watchEndsAt(record, options.untilFinal === true)) return;
      if (closed) {
        const now = await scope.run(() => describeRaw(ctx, operationId));
        if (FAILED_EXECUTION_STATUSES.includes(now.status.name))
          throw await closedWithoutSummary(ctx, operationId, now);
        return;
      }
      const batch = await nextOrTick(follower, scope, intervalMs);
      if (batch?.closed) closed = true;
    }
  } finally {
    scope.dispose();
  }
}
