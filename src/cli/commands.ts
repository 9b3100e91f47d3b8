/**
 * The commands of `asyncjob`: each turns a parsed command into client calls and output (text, or one stable
 * JSON document per `--json`), and returns its exit code. Errors are thrown and reported by `run-cli.ts`.
 */
import { AsyncJobRequestRefused } from '../client/errors';
import type { Decision } from '../core/escalation';
import { escalationReasonSchema, type EscalationReason } from '../core/journal';
import type { StartRequest } from '../core/operation';
import { type CliCommand, type JsonSource, UsageError } from './args';
import type { CliClient, CliDeps } from './deps';
import { formatDuration } from './duration';
import { EXIT, exitForState, type ExitCode } from './exit-codes';
import { operationView, optionText, statusText, watchEnds, watchLine, type OperationView } from './view';

/** What a command runs with: the seam, and the client (connected on first use). */
export interface CommandContext {
  deps: CliDeps;
  client(): Promise<CliClient>;
}

type Cmd<K extends CliCommand['command']> = Extract<CliCommand, { command: K }>;

function emit(ctx: CommandContext, json: unknown): void {
  ctx.deps.stdout(`${JSON.stringify(json)}\n`);
}

function readJson(ctx: CommandContext, source: JsonSource, option: string): unknown {
  let text: string;
  if (source.kind === 'file') {
    try {
      text = ctx.deps.readFile(source.path);
    } catch (err) {
      throw new UsageError(`${option}: cannot read ${source.path}: ${err instanceof Error ? err.message : String(err)}`);
    }
  } else {
    text = source.text;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`${option}: not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** `status` answers from the search attributes rather than wait longer for a worker. */
const STATUS_QUERY_TIMEOUT_MS = 5_000;

const BAD_EXECUTION = ['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED'];

/** `start`: builds the start request, starts or joins, and with `--wait` waits for the end. */
export async function startCommand(ctx: CommandContext, cmd: Cmd<'start'>): Promise<ExitCode> {
  const request = {
    operationId: cmd.operationId,
    provider: cmd.provider,
    payload: readJson(ctx, cmd.payload, '--payload'),
    startedBy: cmd.startedBy,
    authorisedBy: cmd.authorisedBy,
    createDeadline: cmd.createDeadline,
    resultDeadline: cmd.resultDeadline,
    ...(cmd.clientReference !== undefined ? { clientReference: cmd.clientReference } : {}),
    ...(cmd.policy !== undefined ? { policy: readJson(ctx, cmd.policy, '--policy') } : {}),
  } as StartRequest; // validated by the client, which names every bad field
  const client = await ctx.client();
  const started = await client.start(request);
  const base = {
    schema: 'asyncjob.start/v1',
    operationId: started.operationId,
    runId: started.runId,
    joined: started.joined,
    requestFingerprint: started.requestFingerprint,
    traceId: started.traceId,
  };
  if (!cmd.json) {
    ctx.deps.stdout(
      started.joined
        ? `joined operation ${started.operationId}: it already exists with the same request (trace ${started.traceId})\n`
        : `started operation ${started.operationId} (trace ${started.traceId})\n`,
    );
  }
  if (!cmd.wait) {
    if (cmd.json) emit(ctx, { ...base, summary: null });
    return EXIT.ok;
  }
  const summary = await client.result(started.operationId);
  if (cmd.json) emit(ctx, { ...base, summary });
  else {
    ctx.deps.stdout(`operation ${summary.operationId} ended: ${summary.localState}${summary.remoteState ? ` (provider: ${summary.remoteState})` : ''}\n`);
    if (summary.escalation) ctx.deps.stdout(`${summary.escalation.text}\n`);
  }
  return exitForState(summary.localState);
}

/** `status`: the record by query; when no worker answers, Temporal's own description (search attributes). */
export async function statusCommand(ctx: CommandContext, cmd: Cmd<'status'>): Promise<ExitCode> {
  const client = await ctx.client();
  const execution = await client.describeOperation(cmd.operationId);
  let view: OperationView | null = null;
  let recordError: string | null = null;
  try {
    view = operationView(await client.get(cmd.operationId, { timeoutMs: STATUS_QUERY_TIMEOUT_MS }));
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ASYNCJOB_ERR_NOT_FOUND' || code === 'ASYNCJOB_ERR_CONNECTION') throw err;
    recordError = err instanceof Error ? err.message : String(err);
  }
  const localState = view?.localState ?? execution.localState;
  const code = BAD_EXECUTION.includes(execution.executionStatus) && !(view?.final ?? false) ? EXIT.operationEndedBadly : exitForState(localState);
  if (cmd.json) {
    emit(ctx, { schema: 'asyncjob.status/v1', operation: view, execution, recordError });
    return code;
  }
  if (view) ctx.deps.stdout(statusText(view, ctx.deps.nowMs()));
  else {
    ctx.deps.stdout(
      `operation ${execution.operationId} (provider ${execution.provider ?? 'unknown'}${execution.jobId ? `, job ${execution.jobId}` : ''})\n` +
        `  state:     ${execution.localState ?? 'unknown'} (from search attributes; the record is unavailable: ${recordError})\n`,
    );
  }
  ctx.deps.stdout(`  workflow:  ${execution.executionStatus}, run ${execution.runId}, started ${execution.startedAt}${execution.closedAt ? `, closed ${execution.closedAt}` : ''}\n`);
  return code;
}

const CLEAR_LINE = '\r\u001b[2K';
/** How many polls between checks that the workflow is still running. */
const EXECUTION_CHECK_EVERY = 5;

/** How a watch ended: the last view, and Temporal's status if the workflow stopped before a final state. */
interface WatchEnd {
  view: OperationView;
  stoppedWorkflow: string | null;
}

/** Polls and renders until the operation ends, escalates, or its workflow stops; `drew` tells of an open TTY line. */
async function follow(ctx: CommandContext, client: CliClient, cmd: Cmd<'watch'>, drew: { open: boolean }): Promise<WatchEnd> {
  const redraw = ctx.deps.isTTY && !cmd.json;
  let last = '';
  for (let round = 0; ; round++) {
    const view = operationView(await client.get(cmd.operationId));
    const now = ctx.deps.nowMs();
    if (cmd.json) {
      const key = JSON.stringify(view);
      if (key !== last) emit(ctx, { schema: 'asyncjob.watch/v1', event: 'update', at: new Date(now).toISOString(), operation: view });
      last = key;
    } else if (redraw) {
      ctx.deps.stdout(`${CLEAR_LINE}${watchLine(view, now, true)}`);
      drew.open = true;
    } else {
      const line = watchLine(view, now, false);
      if (line !== last) ctx.deps.stdout(`${line}\n`);
      last = line;
    }
    if (watchEnds(view)) return { view, stoppedWorkflow: null };
    // A workflow that stopped without reaching a final state (terminated, failed) never changes again.
    if (round % EXECUTION_CHECK_EVERY === EXECUTION_CHECK_EVERY - 1) {
      const execution = await client.describeOperation(cmd.operationId);
      if (BAD_EXECUTION.includes(execution.executionStatus)) return { view, stoppedWorkflow: execution.executionStatus };
    }
    await ctx.deps.sleep(cmd.intervalMs);
  }
}

/**
 * `watch`: polls the record until a final state or an escalation. On a terminal the line is redrawn in place
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
  const { view, stoppedWorkflow } = end;
  const code = stoppedWorkflow ? EXIT.operationEndedBadly : exitForState(view.localState);
  if (cmd.json) {
    emit(ctx, { schema: 'asyncjob.watch/v1', event: 'end', at: new Date(ctx.deps.nowMs()).toISOString(), operation: view, workflowStatus: stoppedWorkflow, exitCode: code });
  } else if (stoppedWorkflow) {
    ctx.deps.stdout(`operation ${view.operationId}: its workflow is ${stoppedWorkflow} while ${view.localState}\n`);
  } else if (view.localState === 'escalated' && view.escalation) {
    ctx.deps.stdout(`operation ${view.operationId} escalated (${view.escalation.reason}): asyncjob decide ${view.operationId}\n`);
  } else {
    ctx.deps.stdout(`operation ${view.operationId} ended: ${view.localState}${view.result ? ` (result ${view.result.validation})` : ''}\n`);
  }
  return code;
}

/** `cancel`: the `cancelOperation` update; accepted means the intent is recorded (X1). */
export async function cancelCommand(ctx: CommandContext, cmd: Cmd<'cancel'>): Promise<ExitCode> {
  const client = await ctx.client();
  const answer = await client.cancel(cmd.operationId, {
    requestedBy: cmd.by,
    reason: cmd.reason,
    ...(cmd.expectedEffect !== undefined ? { expectedEffect: cmd.expectedEffect } : {}),
  });
  if (cmd.json) emit(ctx, { schema: 'asyncjob.cancel/v1', operationId: cmd.operationId, accepted: true, localState: answer.localState });
  else ctx.deps.stdout(`cancel recorded for ${cmd.operationId} (now ${answer.localState}); the provider's answer follows: asyncjob watch ${cmd.operationId}\n`);
  return EXIT.ok;
}

/** `decide`: shows the open escalation and its options, or answers it with one of them (A2). */
export async function decideCommand(ctx: CommandContext, cmd: Cmd<'decide'>): Promise<ExitCode> {
  const client = await ctx.client();
  const escalation = await client.escalation(cmd.operationId);
  if (!cmd.answer) {
    if (cmd.json) {
      emit(ctx, {
        schema: 'asyncjob.decide/v1',
        operationId: cmd.operationId,
        action: 'show',
        escalation: escalation
          ? { reason: escalation.reason, text: escalation.text, options: escalation.options, decisionDeadlineAt: new Date(escalation.decisionDeadlineMs).toISOString() }
          : null,
      });
    } else if (!escalation) {
      ctx.deps.stdout(`operation ${cmd.operationId} has no open escalation\n`);
    } else {
      ctx.deps.stdout(`${escalation.text}\n\noptions offered:\n${escalation.options.map(optionText).join('\n')}\n`);
    }
    return EXIT.ok;
  }

  // Checked here first for a clear message; the workflow's update validator checks again (A2).
  const a = cmd.answer;
  if (!escalation) throw new AsyncJobRequestRefused(cmd.operationId, 'ASYNCJOB_ERR_NO_OPEN_ESCALATION', `operation ${cmd.operationId} has no open escalation to decide`);
  const offered = escalation.options.find((o) => o.option === a.option);
  if (!offered) {
    throw new AsyncJobRequestRefused(
      cmd.operationId,
      'ASYNCJOB_ERR_OPTION_NOT_OFFERED',
      `"${a.option}" was not offered for ${escalation.reason}; offered: ${escalation.options.map((o) => o.option).join(', ')}`,
    );
  }
  if (a.option === 'extend') {
    if (a.extendMs === undefined || a.checks === undefined) {
      throw new UsageError(
        `--option extend names its bounds: --extend D --checks N (offered: at most ${formatDuration(offered.extendMs ?? 0)} and ${offered.extraStatusRequests ?? 0} checks)`,
        'decide',
      );
    }
    const over: string[] = [];
    if (a.extendMs > (offered.extendMs ?? 0)) over.push(`--extend ${formatDuration(a.extendMs)} exceeds the offered ${formatDuration(offered.extendMs ?? 0)}`);
    if (a.checks > (offered.extraStatusRequests ?? 0)) over.push(`--checks ${a.checks} exceeds the offered ${offered.extraStatusRequests ?? 0}`);
    if ((a.transportFailures ?? 0) > (offered.extraTransportFailures ?? 0)) over.push(`--transport-failures ${a.transportFailures} exceeds the offered ${offered.extraTransportFailures ?? 0}`);
    if ((a.rateLimited ?? 0) > (offered.extraRateLimited ?? 0)) over.push(`--rate-limited ${a.rateLimited} exceeds the offered ${offered.extraRateLimited ?? 0}`);
    if (over.length > 0) throw new AsyncJobRequestRefused(cmd.operationId, 'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS', over.join('; '));
  } else {
    const extension = [a.extendMs !== undefined && '--extend', a.checks !== undefined && '--checks', a.transportFailures !== undefined && '--transport-failures', a.rateLimited !== undefined && '--rate-limited'].filter(Boolean);
    if (extension.length > 0) throw new UsageError(`${extension.join(', ')}: only --option extend takes extension bounds`, 'decide');
  }
  if (a.option === 'adopt_job' && (a.jobId === undefined || !(offered.jobIds ?? []).includes(a.jobId))) {
    throw new UsageError(`--option adopt_job needs --job-id, one of: ${(offered.jobIds ?? []).join(', ')}`, 'decide');
  }
  if (a.option !== 'adopt_job' && a.jobId !== undefined) throw new UsageError('--job-id: only --option adopt_job names a job', 'decide');

  const decision = {
    option: a.option,
    approvedBy: a.by,
    reason: a.reason,
    ...(a.extendMs !== undefined ? { extendMs: a.extendMs } : {}),
    ...(a.checks !== undefined ? { extraStatusRequests: a.checks } : {}),
    ...(a.transportFailures !== undefined ? { extraTransportFailures: a.transportFailures } : {}),
    ...(a.rateLimited !== undefined ? { extraRateLimited: a.rateLimited } : {}),
    ...(a.jobId !== undefined ? { jobId: a.jobId } : {}),
  } as Decision; // the option was found among the offered ones, so it is a decision option
  const answer = await client.decide(cmd.operationId, decision);
  if (cmd.json) emit(ctx, { schema: 'asyncjob.decide/v1', operationId: cmd.operationId, action: 'decided', option: a.option, accepted: true, localState: answer.localState });
  else ctx.deps.stdout(`decision "${a.option}" recorded for ${cmd.operationId} (now ${answer.localState})\n`);
  return EXIT.ok;
}

/** `list --escalated`: from the visibility store (closed operations included). */
export async function listCommand(ctx: CommandContext, cmd: Cmd<'list'>): Promise<ExitCode> {
  let reason: EscalationReason | undefined;
  if (cmd.reason !== undefined) {
    const parsed = escalationReasonSchema.safeParse(cmd.reason);
    if (!parsed.success) throw new UsageError(`--reason: "${cmd.reason}" is not an escalation reason (${escalationReasonSchema.options.join(', ')})`, 'list');
    reason = parsed.data;
  }
  const client = await ctx.client();
  const escalated = await client.listEscalated({ ...(reason !== undefined ? { reason } : {}), limit: cmd.limit });
  if (cmd.json) {
    emit(ctx, { schema: 'asyncjob.list/v1', escalated });
    return EXIT.ok;
  }
  if (escalated.length === 0) {
    ctx.deps.stdout('no escalated operations\n');
    return EXIT.ok;
  }
  const rows = [['OPERATION', 'REASON', 'PROVIDER', 'PROVIDER JOB', 'WORKFLOW'], ...escalated.map((e) => [e.operationId, e.reason ?? '-', e.provider ?? '-', e.jobId ?? '-', e.executionStatus])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  ctx.deps.stdout(`${rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n')}\n`);
  return EXIT.ok;
}
