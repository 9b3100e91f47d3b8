/**
 * `asyncjob replay-check`: the check before an upgrade. Replays the histories of the operations running now (or
 * history files) against this install's workflow code (or the bundle `asyncjob bundle` wrote for it); a history
 * that does not replay is an operation the new workers would break mid-flight. Exit 0 every history replays (or
 * none is running), 1 one does not, 2 bad command line, environment, file or bundle, 5 Temporal unreachable.
 */
import type { Logger } from '@temporalio/common';
import { AsyncJobServerError } from '../client/errors';
import { loadPayloadCodecs } from '../codec/payload-keys';
import { historyFromFile } from '../replay/history-file';
import { installReplayRuntime, type ReplayHistory, replayHistories, type ReplayOutcome } from '../replay/replay-check';
import { connectHistorySource, readRunningHistories, runningQuery } from '../replay/running-histories';
import { bundledWorkflowCode, installedWorkflowCode, type WorkflowCode } from '../replay/workflow-code';
import { UsageError } from './args';
import { type Cmd, type CommandContext, emit, say } from './command-context';
import { EXIT, type ExitCode } from './exit-codes';

type ReplayCheck = Cmd<'replay-check'>;

/** gRPC INVALID_ARGUMENT: the server refused the visibility query. */
const INVALID_ARGUMENT = 3;

/** Where the histories came from, for the report. */
interface Found {
  histories: ReplayHistory[];
  truncated: boolean;
  /** The task queue and query, for histories read from Temporal; null for files. */
  taskQueue: string | null;
  query: string | null;
}

/** The history files, each read and checked before anything is replayed: a bad one is a usage error naming it. */
function readHistoryFiles(ctx: CommandContext, files: readonly string[]): Found {
  const histories = files.map((file) => {
    let text: string;
    try {
      text = ctx.deps.readFile(file);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
      throw new UsageError(`--history: cannot read ${file} (${why})`, 'replay-check');
    }
    const read = historyFromFile(file, text);
    if ('problem' in read) throw new UsageError(`--history: ${read.problem}`, 'replay-check');
    return read;
  });
  return { histories, truncated: false, taskQueue: null, query: null };
}

/** The histories of the running operations, from Temporal (a query it refuses is the operator's: exit 2). */
async function readRunning(ctx: CommandContext, cmd: ReplayCheck): Promise<Found> {
  const source = await connectHistorySource(ctx.deps.env ?? process.env);
  try {
    const query = runningQuery(source.ctx.taskQueue, cmd.query);
    const read = await readRunningHistories(source.ctx, { query, limit: cmd.limit }).catch((err: unknown) => {
      if (cmd.query !== undefined && err instanceof AsyncJobServerError && err.grpcCode === INVALID_ARGUMENT)
        throw new UsageError(`--query: Temporal refused the visibility query ${query}: ${err.message}`, 'replay-check');
      throw err;
    });
    return { ...read, taskQueue: source.ctx.taskQueue, query };
  } finally {
    await source.close().catch(() => undefined);
  }
}

/** The bundler's report is noise here; its warnings and errors go to stderr. */
function bundlerLogger(ctx: CommandContext): Logger {
  const quiet = (): void => undefined;
  const show = (message: string): void => ctx.deps.stderr(`${message}\n`);
  return { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: show, error: show };
}

/** One line of a history that did not replay: where it is from, and why. */
function failureLine(o: ReplayOutcome): string {
  const from = o.file !== null ? `${o.file}: ` : '';
  return `${from}${o.workflowId} run ${o.runId ?? '-'}: ${o.failure!.kind}: ${o.failure!.message}`;
}

/** The report: failing histories, then the summary line; or the versioned JSON document. */
function report(
  ctx: CommandContext,
  cmd: ReplayCheck,
  found: Found,
  code: WorkflowCode | null,
  outcomes: ReplayOutcome[],
): void {
  const failed = outcomes.filter((o) => o.failure !== null);
  if (cmd.json) {
    emit(ctx, {
      schema: 'asyncjob.replay-check/v1',
      source: found.taskQueue !== null ? 'temporal' : 'files',
      taskQueue: found.taskQueue,
      query: found.query,
      truncated: found.truncated,
      workflowCode: code && { bundle: code.bundle, asyncjob: code.asyncjob },
      replayed: outcomes.length,
      failed: failed.length,
      histories: outcomes,
    });
    return;
  }
  const lines = failed.map(failureLine);
  if (outcomes.length === 0) lines.push(`replay-check: nothing is running on task queue ${found.taskQueue}`);
  if (found.truncated)
    lines.push(
      `replay-check: more operations are running than --limit ${cmd.limit}: the newest ${cmd.limit} were checked`,
    );
  lines.push(`replay-check: ${outcomes.length} histories replayed, ${failed.length} failed`);
  say(ctx, ...lines);
}

/** `replay-check`: see the module comment. The bundle is checked first: a bad one is refused before connecting. */
export async function replayCheckCommand(ctx: CommandContext, cmd: ReplayCheck): Promise<ExitCode> {
  let code: WorkflowCode | null = null;
  if (cmd.bundle !== undefined) {
    const bundled = await bundledWorkflowCode(cmd.bundle);
    if ('problem' in bundled) throw new UsageError(bundled.problem, 'replay-check');
    code = bundled;
  }
  const found = cmd.historyFiles.length > 0 ? readHistoryFiles(ctx, cmd.historyFiles) : await readRunning(ctx, cmd);
  if (found.histories.length === 0) {
    report(ctx, cmd, found, code, []);
    return EXIT.ok;
  }
  const { payloadCodecs } = await loadPayloadCodecs((ctx.deps.env ?? process.env) as NodeJS.ProcessEnv);
  code ??= await installedWorkflowCode(bundlerLogger(ctx));
  installReplayRuntime(cmd.verbose);
  const outcomes = await replayHistories(found.histories, code.code, payloadCodecs);
  report(ctx, cmd, found, code, outcomes);
  // A history that does not replay is the problem this command looks for: exit 1, as for an operation that ended badly.
  return outcomes.some((o) => o.failure !== null) ? EXIT.operationEndedBadly : EXIT.ok;
}
