/**
 * Runs one `asyncjob` command line: parse, dispatch, and turn any error into ONE line on stderr (details with
 * `--verbose`, a JSON error document on stdout with `--json`) and a stable exit code (see exit-codes.ts).
 */
import { adapterCommand } from './adapter';
import { type CliCommand, parseCommandLine, UsageError } from './args';
import { bundleCommand } from './bundle-command';
import {
  cancelCommand,
  type CommandContext,
  decideCommand,
  listCommand,
  startCommand,
  statusCommand,
  watchCommand,
} from './commands';
import type { CliClient, CliDeps } from './deps';
import { EXIT, type ExitCode } from './exit-codes';
import { replayCheckCommand } from './replay-command';
import { COMMAND_USAGE, USAGE } from './usage';

/** An error as the CLI reports it. */
export interface ClassifiedError {
  exitCode: ExitCode;
  /** A stable code: the error's own `ASYNCJOB_ERR_...`, or the workflow's refusal code. */
  code: string;
  message: string;
}

const EXIT_BY_CODE: Readonly<Record<string, ExitCode>> = {
  ASYNCJOB_ERR_USAGE: EXIT.usage,
  ASYNCJOB_ERR_INVALID_INPUT: EXIT.usage,
  ASYNCJOB_ERR_CONFIG_INVALID: EXIT.usage,
  ASYNCJOB_ERR_NODE_UNSUPPORTED: EXIT.usage,
  ASYNCJOB_ERR_FINGERPRINT_MISMATCH: EXIT.refused,
  ASYNCJOB_ERR_REFUSED: EXIT.refused,
  ASYNCJOB_ERR_NOT_FOUND: EXIT.notFound,
  ASYNCJOB_ERR_CONNECTION: EXIT.connection,
  ASYNCJOB_ERR_QUERY_TIMEOUT: EXIT.connection,
  ASYNCJOB_ERR_UPDATE_TIMEOUT: EXIT.connection,
  ASYNCJOB_ERR_WORKFLOW_FAILED: EXIT.operationEndedBadly,
  ASYNCJOB_ERR_PROVIDER_UNSERVED: EXIT.usage,
  ASYNCJOB_ERR_JOIN_MISMATCH: EXIT.refused,
  ASYNCJOB_ERR_SERVER: EXIT.connection,
};

/** One line: newlines and runs of spaces folded. */
function oneLine(text: string): string {
  return text
    .replace(/:\s*\n\s*-?\s*/g, ': ')
    .replace(/\s*\n\s*-?\s*/g, '; ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Maps an error to its exit code, stable code and one-line message. */
export function classifyError(err: unknown): ClassifiedError {
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    code?: unknown;
    refusalCode?: unknown;
    message?: unknown;
  };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = oneLine(typeof e.message === 'string' ? e.message : String(err));
  const exitCode = code !== undefined ? EXIT_BY_CODE[code] : undefined;
  if (exitCode === undefined) return { exitCode: EXIT.internal, code: code ?? 'ASYNCJOB_ERR_INTERNAL', message };
  return {
    exitCode,
    code: code === 'ASYNCJOB_ERR_REFUSED' && typeof e.refusalCode === 'string' ? e.refusalCode : code!,
    message,
  };
}

function verboseDetails(err: unknown): string {
  const lines: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e !== undefined && e !== null && depth < 6; depth++) {
    if (e instanceof Error) {
      const extra = e as Error & { issues?: unknown; problems?: unknown; details?: unknown };
      lines.push(depth === 0 ? (e.stack ?? e.message) : `caused by: ${e.stack ?? e.message}`);
      if (extra.issues !== undefined) lines.push(`issues: ${JSON.stringify(extra.issues)}`);
      if (extra.problems !== undefined) lines.push(`problems: ${JSON.stringify(extra.problems)}`);
      e = e.cause;
    } else {
      lines.push(`caused by: ${String(e)}`);
      break;
    }
  }
  return `${lines.join('\n')}\n`;
}

function report(err: unknown, flags: { json: boolean; verbose: boolean; command?: string }, deps: CliDeps): ExitCode {
  const c = classifyError(err);
  deps.stderr(
    `asyncjob: ${c.message}${c.exitCode === EXIT.usage && err instanceof UsageError ? ` (asyncjob help${err.command ? ` ${err.command}` : ''})` : ''}\n`,
  );
  if (flags.verbose) deps.stderr(verboseDetails(err));
  if (flags.json) {
    const issues = (err as { issues?: unknown }).issues;
    deps.stdout(
      `${JSON.stringify({ schema: 'asyncjob.error/v1', code: c.code, message: c.message, exitCode: c.exitCode, ...(Array.isArray(issues) ? { issues } : {}) })}\n`,
    );
  }
  return c.exitCode;
}

function help(topic: string | undefined, deps: CliDeps): ExitCode {
  if (topic === undefined) {
    deps.stdout(USAGE);
    return EXIT.ok;
  }
  const text = COMMAND_USAGE[topic];
  if (text === undefined) {
    deps.stderr(`asyncjob: no command "${topic}" (asyncjob help)\n`);
    return EXIT.usage;
  }
  deps.stdout(`${text}\n`);
  return EXIT.ok;
}

async function dispatch(cmd: CliCommand, ctx: CommandContext): Promise<number> {
  switch (cmd.command) {
    case 'help':
      return help(cmd.topic, ctx.deps);
    case 'start':
      return startCommand(ctx, cmd);
    case 'status':
      return statusCommand(ctx, cmd);
    case 'watch':
      return watchCommand(ctx, cmd);
    case 'cancel':
      return cancelCommand(ctx, cmd);
    case 'decide':
      return decideCommand(ctx, cmd);
    case 'list':
      return listCommand(ctx, cmd);
    case 'adapter':
      return adapterCommand(ctx, cmd);
    case 'audit':
      return ctx.deps.runAudit(cmd.argv);
    case 'mcp':
      return ctx.deps.runMcp(cmd.argv);
    case 'simulate':
      return ctx.deps.runSimulate(cmd.argv);
    case 'doctor':
      return ctx.deps.runDoctor ? ctx.deps.runDoctor(cmd.argv) : EXIT.internal;
    case 'bundle':
      return bundleCommand(ctx, cmd);
    case 'replay-check':
      return replayCheckCommand(ctx, cmd);
    case 'worker':
      return ctx.deps.runWorker();
    case 'dev':
      return ctx.deps.runDev();
  }
}

/** Runs `asyncjob <argv...>` and resolves with the exit code. Never throws. */
export async function runCli(argv: readonly string[], deps: CliDeps): Promise<number> {
  const guessed = { json: argv.includes('--json'), verbose: argv.includes('--verbose') || argv.includes('-v') };
  let cmd: CliCommand;
  try {
    cmd = parseCommandLine(argv);
  } catch (err) {
    return report(err, guessed, deps);
  }
  const flags = 'json' in cmd ? { json: cmd.json, verbose: cmd.verbose } : guessed;
  let connected: Promise<CliClient> | undefined;
  const ctx: CommandContext = { deps, client: () => (connected ??= deps.connect()) };
  try {
    return await dispatch(cmd, ctx);
  } catch (err) {
    return report(err, flags, deps);
  } finally {
    if (connected) await connected.then((c) => c.close()).catch(() => undefined);
  }
}
