/**
 * Argument parsing for `asyncjob`: turns argv into a typed command, or throws {@link UsageError} naming the
 * option. Pure: no I/O (a `--payload @file` is returned as a file reference for the command to read). The
 * commands that drive operations are parsed in `args-operations.ts`.
 */
import { parseActor } from '../core/actor';
import type { CommonFlags } from './args-common';
import { countOption, flags, noPositionals, optional, parse, required, UsageError } from './args-common';
import {
  type CancelCommand,
  type DecideCommand,
  type ListCommand,
  type ResultCommand,
  parseCancel,
  parseDecide,
  parseList,
  parseResult,
  parseStart,
  parseStatus,
  parseWatch,
  type StartCommand,
  type StatusCommand,
  type WatchCommand,
} from './args-operations';

export { UsageError, type JsonSource } from './args-common';
export type { DecideAnswer, SigningKey } from './args-operations';

/** A parsed command line. */
export type CliCommand =
  | { command: 'help'; topic?: string }
  | StartCommand
  | StatusCommand
  | WatchCommand
  | CancelCommand
  | DecideCommand
  | ListCommand
  | ResultCommand
  | ({
      command: 'adapter';
      action: 'validate' | 'explain';
      files: string[];
      baseUrl?: string;
      requireEnv: boolean;
    } & CommonFlags)
  | { command: 'audit'; argv: string[] }
  | { command: 'mcp'; argv: string[] }
  | { command: 'simulate'; argv: string[] }
  | { command: 'doctor'; argv: string[] }
  | ({ command: 'bundle'; out: string } & CommonFlags)
  | ReplayCheckCommand
  | KeysCommand
  | CodecServerCommand
  | WorkerCommand
  | { command: 'dev' };

/** `asyncjob worker [--nexus-endpoint NAME]`: the worker; the flag sets ASYNCJOB_NEXUS_ENDPOINT for it. */
interface WorkerCommand {
  command: 'worker';
  nexusEndpoint?: string;
}

/** `asyncjob replay-check`: the running operations' histories (or history files) against this install's workflows. */
interface ReplayCheckCommand extends CommonFlags {
  command: 'replay-check';
  /** A bundle written by `asyncjob bundle`, replayed against instead of bundling this install's workflows. */
  bundle?: string;
  /** At most this many running operations. */
  limit: number;
  /** The operator's visibility filter, and-ed with the running operations' query. */
  query?: string;
  /** History files to replay instead of the running operations' histories; empty for those. */
  historyFiles: string[];
}

/** `asyncjob keys new --for WHO [--out FILE]`: a new signing key for a decider (D3). */
interface KeysCommand extends CommonFlags {
  command: 'keys';
  action: 'new';
  /** The decider's canonical identity. */
  decider: string;
  /** Where to write the key file; absent: the decider's file in the keys directory. */
  out?: string;
}

/** `asyncjob codec-server [--port N] [--host H]`: the Web UI's codec endpoint over this process's payload keys. */
interface CodecServerCommand extends CommonFlags {
  command: 'codec-server';
  /** Port to listen on; 0 for a free one. */
  port: number;
  /** Interface to listen on. */
  host: string;
}

/** `asyncjob codec-server [--port N] [--host H]`: port 8888 (the samples' and the docs' codec port), host 127.0.0.1. */
function parseCodecServer(args: string[]): CliCommand {
  const command = 'codec-server';
  const { values, positionals } = parse(command, args, { port: { type: 'string' }, host: { type: 'string' } });
  if (values.help) return { command: 'help', topic: command };
  noPositionals(command, positionals);
  const port = countOption(command, 'port', optional(values, 'port'));
  if (port !== undefined && port > 65_535) throw new UsageError(`--port: ${port} is not a port`, command);
  const host = optional(values, 'host');
  if (host !== undefined && host.trim().length === 0) throw new UsageError('--host is empty', command);
  return { command, port: port ?? 8888, host: host ?? '127.0.0.1', ...flags(values) };
}

/** `--history FILE`, as often as given (node's parseArgs keeps only the last of a repeated option). */
function takeHistoryFiles(args: readonly string[]): { files: string[]; rest: string[] } {
  const files: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (arg.startsWith('--history=')) files.push(arg.slice('--history='.length));
    else if (arg !== '--history') rest.push(arg);
    else {
      const file = args[++i];
      if (file === undefined || file.startsWith('-'))
        throw new UsageError('--history needs a history file', 'replay-check');
      files.push(file);
    }
  }
  if (files.some((f) => f.trim().length === 0)) throw new UsageError('--history needs a history file', 'replay-check');
  return { files, rest };
}

/** `asyncjob replay-check [--bundle FILE] [--limit N] [--query Q] [--history FILE...]`. */
function parseReplayCheck(args: string[]): CliCommand {
  const command = 'replay-check';
  const { files, rest } = takeHistoryFiles(args);
  const { values, positionals } = parse(command, rest, {
    bundle: { type: 'string' },
    limit: { type: 'string' },
    query: { type: 'string' },
  });
  if (values.help) return { command: 'help', topic: command };
  // After --history, more files may follow it (a shell glob: --history histories/*.json).
  if (files.length === 0) noPositionals(command, positionals);
  const historyFiles = [...files, ...positionals];
  const limit = countOption(command, 'limit', optional(values, 'limit'));
  if (limit !== undefined && (limit < 1 || limit > 10_000))
    throw new UsageError(`--limit: ${limit} is not from 1 to 10000`, command);
  const query = optional(values, 'query');
  if (query !== undefined && query.trim().length === 0) throw new UsageError('--query is empty', command);
  if (historyFiles.length > 0 && (limit !== undefined || query !== undefined))
    throw new UsageError('--history replays the files given: --limit and --query choose running operations', command);
  const bundle = optional(values, 'bundle');
  if (bundle !== undefined && bundle.trim().length === 0) throw new UsageError('--bundle needs a file', command);
  return {
    command,
    ...(bundle !== undefined ? { bundle } : {}),
    limit: limit ?? 100,
    ...(query !== undefined ? { query } : {}),
    historyFiles,
    ...flags(values),
  };
}

/** `asyncjob adapter validate|explain ...`. */
function parseAdapter(rest: string[]): CliCommand {
  const command = 'adapter';
  const [action, ...more] = rest;
  if (action === '--help' || action === '-h' || action === 'help') return { command: 'help', topic: command };
  if (action === undefined) throw new UsageError('adapter needs an action: validate or explain', command);
  if (action !== 'validate' && action !== 'explain')
    throw new UsageError(`adapter: unknown action "${action}" (validate or explain)`, command);
  const { values, positionals } = parse(command, more, {
    'base-url': { type: 'string' },
    'require-env': { type: 'boolean' },
  });
  if (values.help) return { command: 'help', topic: command };
  if (positionals.length === 0) throw new UsageError(`adapter ${action} needs a contract file`, command);
  if (action === 'explain' && positionals.length > 1)
    throw new UsageError(`unexpected argument "${positionals[1]}" (explain takes one file)`, command);
  const baseUrl = optional(values, 'base-url');
  return {
    command,
    action,
    files: positionals,
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    requireEnv: values['require-env'] === true,
    ...flags(values),
  };
}

/** `asyncjob bundle --out FILE`. */
function parseBundle(args: string[]): CliCommand {
  const { values, positionals } = parse('bundle', args, { out: { type: 'string' } });
  if (values.help) return { command: 'help', topic: 'bundle' };
  noPositionals('bundle', positionals);
  return { command: 'bundle', out: required('bundle', values, 'out'), ...flags(values) };
}

/** `asyncjob keys new --for WHO [--out FILE]`: WHO must be an identity (D1), kept in its canonical form. */
function parseKeys(rest: string[]): CliCommand {
  const command = 'keys';
  const [action, ...more] = rest;
  if (action === '--help' || action === '-h' || action === 'help') return { command: 'help', topic: command };
  if (action === undefined) throw new UsageError('keys needs an action: new', command);
  if (action !== 'new') throw new UsageError(`keys: unknown action "${action}" (new)`, command);
  const { values, positionals } = parse(command, more, { for: { type: 'string' }, out: { type: 'string' } });
  if (values.help) return { command: 'help', topic: command };
  noPositionals(command, positionals);
  const decider = parseActor(required(command, values, 'for'));
  if (decider.kind === 'invalid') throw new UsageError(`--for: not an identity: ${decider.message}`, command);
  const out = optional(values, 'out');
  if (out !== undefined && out.trim().length === 0) throw new UsageError('--out needs a file', command);
  return { command, action, decider: decider.actor.id, ...(out !== undefined ? { out } : {}), ...flags(values) };
}

/** Parses the arguments after `asyncjob`. Throws {@link UsageError}. */
export function parseCommandLine(argv: readonly string[]): CliCommand {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      return rest[0] !== undefined ? { command: 'help', topic: rest[0] } : { command: 'help' };
    // These own their arguments and usage text.
    case 'audit':
    case 'mcp':
    case 'simulate':
    case 'doctor':
      return { command, argv: rest };
    case 'worker': {
      const { values, positionals } = parse(command, rest, { 'nexus-endpoint': { type: 'string' } });
      if (values.help) return { command: 'help', topic: command };
      noPositionals(command, positionals);
      const nexusEndpoint = optional(values, 'nexus-endpoint');
      if (nexusEndpoint !== undefined && nexusEndpoint.trim().length === 0)
        throw new UsageError('--nexus-endpoint needs an endpoint name', command);
      return { command, ...(nexusEndpoint !== undefined ? { nexusEndpoint: nexusEndpoint.trim() } : {}) };
    }
    case 'dev': {
      const { values, positionals } = parse(command, rest, {});
      if (values.help) return { command: 'help', topic: command };
      noPositionals(command, positionals);
      return { command };
    }
    case 'bundle':
      return parseBundle(rest);
    case 'replay-check':
      return parseReplayCheck(rest);
    case 'start':
      return parseStart(rest);
    case 'status':
      return parseStatus(rest);
    case 'watch':
      return parseWatch(rest);
    case 'cancel':
      return parseCancel(rest);
    case 'decide':
      return parseDecide(rest);
    case 'list':
      return parseList(rest);
    case 'result':
      return parseResult(rest);
    case 'adapter':
      return parseAdapter(rest);
    case 'keys':
      return parseKeys(rest);
    case 'codec-server':
      return parseCodecServer(rest);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}
