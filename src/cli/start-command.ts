/**
 * `asyncjob start`: builds the start request from the options, checks its variables against the adapter's
 * declarations when the adapter document is visible here (C5), starts or joins the operation (the client checks
 * the request and the provider first: nothing exists when it refuses), and with `--wait` waits until the
 * operation ends or needs a decision (`--until-final`: until it ends), exiting by what it found.
 */
import { InvalidVariableError } from '../client/errors';
import type { StartRequest } from '../core/operation';
import { checkOperationVariables } from '../core/operation-variables';
import type { OperationSummary } from '../workflows/messages';
import { type Cmd, type CommandContext, emit, readJson, say } from './command-context';
import { declaredVariablesOf } from './declared-variables';
import type { CliClient, StartedOperation } from './deps';
import { EXIT, exitForState, type ExitCode } from './exit-codes';
import { decideAdvice, failureText } from './view';

const ENDED_BADLY = ['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED'];

function startRequest(ctx: CommandContext, cmd: Cmd<'start'>): StartRequest {
  return {
    operationId: cmd.operationId,
    provider: cmd.provider,
    payload: readJson(ctx, cmd.payload, '--payload'),
    startedBy: cmd.startedBy,
    authorisedBy: cmd.authorisedBy,
    createDeadline: cmd.createDeadline,
    resultDeadline: cmd.resultDeadline,
    ...(cmd.clientReference !== undefined ? { clientReference: cmd.clientReference } : {}),
    ...(cmd.policy !== undefined ? { policy: readJson(ctx, cmd.policy, '--policy') } : {}),
    ...(cmd.variables !== undefined ? { variables: cmd.variables } : {}),
  } as StartRequest; // validated by the client, which names every bad field
}

/**
 * C5: when this process can read the provider's adapter document (ASYNCJOB_PROVIDERS, as a worker), the variables
 * must fit its declarations before anything is started; a misfit is `ASYNCJOB_ERR_INVALID_VARIABLE` (exit 2)
 * naming every variable. Otherwise the workflow checks them.
 */
async function checkVariables(ctx: CommandContext, request: StartRequest): Promise<void> {
  const declared = await declaredVariablesOf(ctx.deps.env ?? process.env, request.provider);
  if (declared === undefined) return;
  const checked = checkOperationVariables(declared, request.variables);
  if (!checked.ok) throw new InvalidVariableError(checked.issues);
}

function startedText(started: StartedOperation, failure: { type: string | null; message: string } | null): string {
  const { operationId, traceId } = started;
  if (started.replaced)
    return `started operation ${operationId} again: its earlier run failed on its input (${failureText(started.replaced)}) (trace ${traceId})`;
  if (!started.joined) return `started operation ${operationId} (trace ${traceId})`;
  const ended = failure ? `; its workflow has ended: ${started.executionStatus} (${failureText(failure)})` : '';
  return `joined operation ${operationId}: it already exists with the same request (trace ${traceId})${ended}`;
}

/** The escalation's text and the commands that answer it (the options need a worker to answer; best effort). */
async function escalationText(client: CliClient, summary: OperationSummary): Promise<string[]> {
  if (!summary.escalation) return [];
  const open = await client.escalation(summary.operationId, { timeoutMs: 5_000 }).catch(() => null);
  return [
    summary.escalation.text,
    '',
    ...decideAdvice(summary.operationId, summary.escalation.reason, open?.options ?? null),
  ];
}

/** `start`: see the module comment. */
export async function startCommand(ctx: CommandContext, cmd: Cmd<'start'>): Promise<ExitCode> {
  const request = startRequest(ctx, cmd);
  await checkVariables(ctx, request);
  const client = await ctx.client();
  const started = await client.start(request, { allowUnservedProvider: cmd.allowUnservedProvider });
  const endedBadly = started.joined && ENDED_BADLY.includes(started.executionStatus);
  const failure = endedBadly ? (await client.describeOperation(started.operationId)).failure : null;
  const base = {
    schema: 'asyncjob.start/v1',
    operationId: started.operationId,
    runId: started.runId,
    joined: started.joined,
    requestFingerprint: started.requestFingerprint,
    traceId: started.traceId,
    executionStatus: started.executionStatus,
    replaced: started.replaced ? { type: started.replaced.type, message: started.replaced.message } : null,
    failure,
  };
  if (!cmd.json) say(ctx, startedText(started, failure));
  if (!cmd.wait) {
    if (cmd.json) emit(ctx, { ...base, summary: null });
    return endedBadly ? EXIT.operationEndedBadly : EXIT.ok;
  }
  const summary = await client.result(started.operationId, { untilFinal: cmd.untilFinal });
  if (cmd.json) emit(ctx, { ...base, summary });
  else if (summary.localState === 'escalated') {
    say(
      ctx,
      `operation ${summary.operationId} needs a decision${summary.escalation ? ` (${summary.escalation.reason})` : ''}:`,
      ...(await escalationText(client, summary)),
    );
  } else {
    say(
      ctx,
      `operation ${summary.operationId} ended: ${summary.localState}${summary.remoteState ? ` (provider: ${summary.remoteState})` : ''}`,
    );
    if (summary.escalation) say(ctx, summary.escalation.text);
  }
  return exitForState(summary.localState);
}
