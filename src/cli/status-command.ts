/**
 * `asyncjob status` and `asyncjob watch`: the operation's record (a query), Temporal's own description when no
 * worker answers, and a closed workflow's failure with its reason. `watch` follows the record through the
 * client's watch (woken by the workflow's history, not by busy polling) until the operation ends or needs a
 * decision (`--until-final`: until it ends).
 */
import { OperationFailedError } from '../client/errors';
import { hasCode } from '../core/errors';
import { type Cmd, type CommandContext, emit, say } from './command-context';
import type { CliClient } from './deps';
import { EXIT, exitForState, type ExitCode } from './exit-codes';
import {
  decideAdvice,
  failureText,
  operationView,
  providerErrorText,
  statusText,
  watchLine,
  type OperationView,
} from './view';

/** `status` answers from the search attributes rather than wait longer for a worker. */
const STATUS_QUERY_TIMEOUT_MS = 5_000;

const BAD_EXECUTION = ['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED'];

/** The record by query, or why it could not be read (a missing operation or an unreachable server is thrown). */
async function readView(
  client: CliClient,
  operationId: string,
): Promise<{ view: OperationView | null; recordError: string | null }> {
  try {
    return {
      view: operationView(await client.get(operationId, { timeoutMs: STATUS_QUERY_TIMEOUT_MS })),
      recordError: null,
    };
  } catch (err) {
    if (hasCode(err, 'ASYNCJOB_ERR_NOT_FOUND') || hasCode(err, 'ASYNCJOB_ERR_CONNECTION')) throw err;
    return { view: null, recordError: err instanceof Error ? err.message : String(err) };
  }
}

/** `status`: the record by query; when no worker answers, Temporal's own description (search attributes). */
export async function statusCommand(ctx: CommandContext, cmd: Cmd<'status'>): Promise<ExitCode> {
  const client = await ctx.client();
  const execution = await client.describeOperation(cmd.operationId);
  const { view, recordError } = await readView(client, cmd.operationId);
  const localState = view?.localState ?? execution.localState;
  const failed = BAD_EXECUTION.includes(execution.executionStatus) && !(view?.final ?? false);
  const code = failed ? EXIT.operationEndedBadly : exitForState(localState);
  const final = (view?.final ?? false) || execution.executionStatus !== 'RUNNING';
  if (cmd.json) {
    emit(ctx, { schema: 'asyncjob.status/v1', operation: view, execution, recordError, final });
    return code;
  }
  if (view) ctx.deps.stdout(statusText(view, ctx.deps.nowMs()));
  else {
    const why = execution.failure
      ? 'its workflow closed before a record could be read'
      : `the record is unavailable: ${recordError}`;
    say(
      ctx,
      `operation ${execution.operationId} (provider ${execution.provider ?? 'unknown'}${execution.jobId ? `, job ${execution.jobId}` : ''})`,
      `  state:     ${execution.localState ?? 'unknown'} (from search attributes; ${why})`,
    );
  }
  say(
    ctx,
    `  workflow:  ${execution.executionStatus}, run ${execution.runId}, started ${execution.startedAt}${execution.closedAt ? `, closed ${execution.closedAt}` : ''}`,
  );
  if (execution.failure) say(ctx, `  reason:    ${failureText(execution.failure)}`);
  return code;
}

const CLEAR_LINE = '\r\u001b[2K';

/** How a watch ended: the last view (null when none could be read), or the workflow's failure. */
interface WatchEnd {
  view: OperationView | null;
  failed: OperationFailedError | null;
}

/** Renders each record the client's watch yields; `drew` tells of an open TTY line. */
async function follow(
  ctx: CommandContext,
  client: CliClient,
  cmd: Cmd<'watch'>,
  drew: { open: boolean },
): Promise<WatchEnd> {
  const redraw = ctx.deps.isTTY && !cmd.json;
  let last = '';
  let view: OperationView | null = null;
  try {
    for await (const record of client.watch(cmd.operationId, {
      intervalMs: cmd.intervalMs,
      includeUnchanged: redraw,
      untilFinal: cmd.untilFinal,
    })) {
      view = operationView(record);
      const now = ctx.deps.nowMs();
      const key = cmd.json ? JSON.stringify(view) : watchLine(view, now, false);
      if (redraw) {
        ctx.deps.stdout(`${CLEAR_LINE}${watchLine(view, now, true)}`);
        drew.open = true;
      } else if (key !== last) {
        if (cmd.json)
          emit(ctx, { schema: 'asyncjob.watch/v1', event: 'update', at: new Date(now).toISOString(), operation: view });
        else say(ctx, key);
      }
      last = key;
    }
  } catch (err) {
    if (err instanceof OperationFailedError) return { view, failed: err };
    throw err;
  }
  return { view, failed: null };
}

function endText(operationId: string, end: WatchEnd): string[] {
  const { view, failed } = end;
  if (failed) {
    const status = failed.failure?.executionStatus ?? 'FAILED';
    const why = failed.failure ? `: ${failureText(failed.failure)}` : '';
    return [`operation ${operationId}: its workflow is ${status}${view ? ` while ${view.localState}` : ''}${why}`];
  }
  if (view?.localState === 'escalated' && view.escalation)
    return decideAdvice(operationId, view.escalation.reason, view.escalation.options);
  const error = view?.localState === 'failed' ? providerErrorText(view) : null;
  return [
    `operation ${operationId} ended: ${view?.localState ?? 'unknown'}${view?.result ? ` (result ${view.result.validation})` : ''}${error ? `: provider error ${error}` : ''}`,
  ];
}

/**
 * `watch`: follows the record until a final state or an escalation. On a terminal the line is redrawn in place
 * (with a countdown to the next poll); otherwise one line (or one JSON document) per change.
 */
export async function watchCommand(ctx: CommandContext, cmd: Cmd<'watch'>): Promise<ExitCode> {
  const client = await ctx.client();
  const drew = { open: false };
  let end: WatchEnd;
  try {
    end = await follow(ctx, client, cmd, drew);
  } finally {
    // The redrawn line has no newline of its own: end it, so the final line or an error starts on a fresh line.
    if (drew.open) ctx.deps.stdout('\n');
  }
  const code = end.failed ? EXIT.operationEndedBadly : exitForState(end.view?.localState);
  if (cmd.json) {
    const failure = end.failed?.failure
      ? { type: end.failed.failure.type, message: end.failed.failure.message }
      : end.failed
        ? { type: null, message: end.failed.message }
        : null;
    const workflowStatus = end.failed ? (end.failed.failure?.executionStatus ?? 'FAILED') : null;
    emit(ctx, {
      schema: 'asyncjob.watch/v1',
      event: 'end',
      at: new Date(ctx.deps.nowMs()).toISOString(),
      operation: end.view,
      workflowStatus,
      failure,
      exitCode: code,
    });
  } else {
    say(ctx, ...endText(cmd.operationId, end));
  }
  return code;
}
