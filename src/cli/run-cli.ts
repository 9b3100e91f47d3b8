/**
 * Runs one `asyncjob` command line: parse, dispatch, and turn any error into ONE line on stderr (details with
 * `--verbose`, a JSON error document on stdout with `--json`) and the exit status its code has in the registry
 * (`core/codes.ts`, docs/errors.md); anything not ours is `ASYNCJOB_ERR_INTERNAL`.
 */
import { adapterCommand } from './adapter';
import { AsyncJobError } from '../core/errors';
import { type CliCommand, parseCommandLine, UsageError } from './args';
import { bundleCommand } from './bundle-command';
import { codecServerCommand } from './codec-server-command';
import { keysCommand } from './keys-command';
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
import { classifyError, EXIT, type ExitCode } from './exit-codes';
import { replayCheckCommand } from './replay-command';
import { resultCommand } from './result-command';
import { COMMAND_USAGE, USAGE } from './usage';

export { classifyError, type ClassifiedError } from './exit-codes';

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
  const help = err instanceof UsageError ? ` (asyncjob help${err.command ? ` ${err.command}` : ''})` : '';
  deps.stderr(`asyncjob: ${c.message}${help}\n`);
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
  if (text === undefined) throw new UsageError(`no command "${topic}"`);
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
    case 'result':
      return resultCommand(ctx, cmd);
    case 'adapter':
      return adapterCommand(ctx, cmd);
    case 'audit':
      return ctx.deps.runAudit(cmd.argv);
    case 'mcp':
      return ctx.deps.runMcp(cmd.argv);
    case 'simulate':
      return ctx.deps.runSimulate(cmd.argv);
    case 'doctor':
      if (!ctx.deps.runDoctor)
        throw new AsyncJobError('ASYNCJOB_ERR_INTERNAL', 'asyncjob doctor is not available here');
      return ctx.deps.runDoctor(cmd.argv);
    case 'bundle':
      return bundleCommand(ctx, cmd);
    case 'replay-check':
      return replayCheckCommand(ctx, cmd);
    case 'keys':
      return keysCommand(ctx, cmd);
    case 'codec-server':
      return codecServerCommand(ctx, cmd);
    case 'worker':
      return ctx.deps.runWorker(cmd.nexusEndpoint !== undefined ? { nexusEndpoint: cmd.nexusEndpoint } : {});
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
