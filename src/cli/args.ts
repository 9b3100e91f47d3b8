/**
 * Argument parsing for `asyncjob`: turns argv into a typed command, or throws {@link UsageError} naming the
 * option. Pure: no I/O (a `--payload @file` is returned as a file reference for the command to read).
 */
import { parseArgs } from 'node:util';
import { parseDuration } from './duration';

/** A usage error: unknown command or option, a missing or malformed value. Exit code 2. */
export class UsageError extends Error {
  readonly code = 'ASYNCJOB_ERR_USAGE';
  constructor(
    message: string,
    /** The command whose usage text applies, if known. */
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Flags every command takes. */
export interface CommonFlags {
  json: boolean;
  verbose: boolean;
}

/** A JSON value given inline or as `@path`. */
export type JsonSource = { kind: 'inline'; text: string } | { kind: 'file'; path: string };

/** A deadline: a duration from the start, or an absolute ISO-8601 instant. */
export type DeadlineArg = { afterMs: number } | { atMs: number };

/** A parsed command line. */
export type CliCommand =
  | { command: 'help'; topic?: string }
  | ({
      command: 'start';
      provider: string;
      operationId: string;
      payload: JsonSource;
      startedBy: string;
      authorisedBy: string;
      createDeadline: DeadlineArg;
      resultDeadline: DeadlineArg;
      clientReference?: string;
      policy?: JsonSource;
      wait: boolean;
    } & CommonFlags)
  | ({ command: 'status'; operationId: string } & CommonFlags)
  | ({ command: 'watch'; operationId: string; intervalMs: number } & CommonFlags)
  | ({ command: 'cancel'; operationId: string; by: string; reason: string; expectedEffect?: string } & CommonFlags)
  | ({ command: 'decide'; operationId: string; answer?: DecideAnswer } & CommonFlags)
  | ({ command: 'list'; reason?: string; limit: number } & CommonFlags)
  | ({ command: 'adapter'; action: 'validate' | 'explain'; files: string[]; baseUrl?: string; requireEnv: boolean } & CommonFlags)
  | { command: 'audit'; argv: string[] }
  | { command: 'simulate'; argv: string[] }
  | { command: 'worker' }
  | { command: 'dev' };

/** The decision given to `decide` with `--option`. */
export interface DecideAnswer {
  option: string;
  by: string;
  reason: string;
  extendMs?: number;
  checks?: number;
  transportFailures?: number;
  rateLimited?: number;
  jobId?: string;
}

const common = {
  json: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;

function parse<O extends OptionSpec>(command: string, args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...common, ...options }, strict: true, allowPositionals: true, allowNegative: false });
  } catch (err) {
    // node:util's messages are clear ("Unknown option '--x'"); drop its advice about "--" and keep one line.
    const message = err instanceof Error ? err.message.split('\n')[0]!.replace(/\. To specify a positional argument.*$/, '') : String(err);
    throw new UsageError(message, command);
  }
}

function required(command: string, values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim().length === 0) throw new UsageError(`--${name} is required`, command);
  return v;
}

function optional(values: Record<string, unknown>, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

function onePositional(command: string, positionals: string[]): string {
  if (positionals.length === 0) throw new UsageError(`${command} needs an operation ID`, command);
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`, command);
  return positionals[0]!;
}

function noPositionals(command: string, positionals: string[]): void {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, command);
}

/** Parses `--x 15m` into milliseconds or throws a usage error naming the option. */
export function durationOption(command: string, name: string, text: string): number {
  const parsed = parseDuration(text);
  if (parsed.kind === 'invalid') throw new UsageError(`--${name}: ${parsed.message}`, command);
  return parsed.ms;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** A deadline option: a duration (`15m`) or an ISO-8601 instant with its offset (`2026-12-01T10:00:00Z`). */
export function deadlineOption(command: string, name: string, text: string): DeadlineArg {
  if (ISO_INSTANT.test(text)) {
    const atMs = Date.parse(text);
    if (Number.isNaN(atMs)) throw new UsageError(`--${name}: "${text}" is not a valid instant`, command);
    return { atMs };
  }
  return { afterMs: durationOption(command, name, text) };
}

function countOption(command: string, name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`--${name}: "${text}" is not a whole number`, command);
  return Number(text);
}

function jsonSource(text: string): JsonSource {
  return text.startsWith('@') ? { kind: 'file', path: text.slice(1) } : { kind: 'inline', text };
}

function flags(values: Record<string, unknown>): CommonFlags {
  return { json: values.json === true, verbose: values.verbose === true };
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
      return { command: 'audit', argv: rest };
    case 'simulate':
      return { command: 'simulate', argv: rest };
    case 'worker':
    case 'dev': {
      const { values, positionals } = parse(command, rest, {});
      if (values.help) return { command: 'help', topic: command };
      noPositionals(command, positionals);
      return { command };
    }
    case 'start': {
      const { values, positionals } = parse(command, rest, {
        provider: { type: 'string' },
        'operation-id': { type: 'string' },
        payload: { type: 'string' },
        'started-by': { type: 'string' },
        'authorised-by': { type: 'string' },
        'create-deadline': { type: 'string' },
        'result-deadline': { type: 'string' },
        'client-reference': { type: 'string' },
        policy: { type: 'string' },
        wait: { type: 'boolean' },
      });
      if (values.help) return { command: 'help', topic: command };
      noPositionals(command, positionals);
      const missing = ['provider', 'operation-id', 'payload', 'started-by', 'authorised-by', 'create-deadline', 'result-deadline'].filter(
        (name) => typeof (values as Record<string, unknown>)[name] !== 'string',
      );
      if (missing.length > 0) throw new UsageError(`missing ${missing.map((m) => `--${m}`).join(', ')}`, command);
      const v = values as Record<string, unknown>;
      const policy = optional(v, 'policy');
      const clientReference = optional(v, 'client-reference');
      return {
        command,
        provider: required(command, v, 'provider'),
        operationId: required(command, v, 'operation-id'),
        payload: jsonSource(required(command, v, 'payload')),
        startedBy: required(command, v, 'started-by'),
        authorisedBy: required(command, v, 'authorised-by'),
        createDeadline: deadlineOption(command, 'create-deadline', required(command, v, 'create-deadline')),
        resultDeadline: deadlineOption(command, 'result-deadline', required(command, v, 'result-deadline')),
        ...(clientReference !== undefined ? { clientReference } : {}),
        ...(policy !== undefined ? { policy: jsonSource(policy) } : {}),
        wait: values.wait === true,
        ...flags(values),
      };
    }
    case 'status': {
      const { values, positionals } = parse(command, rest, {});
      if (values.help) return { command: 'help', topic: command };
      return { command, operationId: onePositional(command, positionals), ...flags(values) };
    }
    case 'watch': {
      const { values, positionals } = parse(command, rest, { interval: { type: 'string' } });
      if (values.help) return { command: 'help', topic: command };
      const interval = optional(values, 'interval');
      return {
        command,
        operationId: onePositional(command, positionals),
        intervalMs: interval !== undefined ? durationOption(command, 'interval', interval) : 1000,
        ...flags(values),
      };
    }
    case 'cancel': {
      const { values, positionals } = parse(command, rest, { by: { type: 'string' }, reason: { type: 'string' }, 'expected-effect': { type: 'string' } });
      if (values.help) return { command: 'help', topic: command };
      const operationId = onePositional(command, positionals);
      const expectedEffect = optional(values, 'expected-effect');
      return {
        command,
        operationId,
        by: required(command, values, 'by'),
        reason: required(command, values, 'reason'),
        ...(expectedEffect !== undefined ? { expectedEffect } : {}),
        ...flags(values),
      };
    }
    case 'decide': {
      const { values, positionals } = parse(command, rest, {
        option: { type: 'string' },
        by: { type: 'string' },
        reason: { type: 'string' },
        extend: { type: 'string' },
        checks: { type: 'string' },
        'transport-failures': { type: 'string' },
        'rate-limited': { type: 'string' },
        'job-id': { type: 'string' },
      });
      if (values.help) return { command: 'help', topic: command };
      const operationId = onePositional(command, positionals);
      const option = optional(values, 'option');
      if (option === undefined) {
        const given = ['by', 'reason', 'extend', 'checks', 'transport-failures', 'rate-limited', 'job-id'].filter((n) => (values as Record<string, unknown>)[n] !== undefined);
        if (given.length > 0) throw new UsageError(`--${given[0]} needs --option (run "asyncjob decide ${operationId}" to see the options offered)`, command);
        return { command, operationId, ...flags(values) };
      }
      const extend = optional(values, 'extend');
      const answer: DecideAnswer = {
        option,
        by: required(command, values, 'by'),
        reason: required(command, values, 'reason'),
      };
      if (extend !== undefined) answer.extendMs = durationOption(command, 'extend', extend);
      const checks = countOption(command, 'checks', optional(values, 'checks'));
      if (checks !== undefined) answer.checks = checks;
      const transportFailures = countOption(command, 'transport-failures', optional(values, 'transport-failures'));
      if (transportFailures !== undefined) answer.transportFailures = transportFailures;
      const rateLimited = countOption(command, 'rate-limited', optional(values, 'rate-limited'));
      if (rateLimited !== undefined) answer.rateLimited = rateLimited;
      const jobId = optional(values, 'job-id');
      if (jobId !== undefined) answer.jobId = jobId;
      return { command, operationId, answer, ...flags(values) };
    }
    case 'list': {
      const { values, positionals } = parse(command, rest, { escalated: { type: 'boolean' }, reason: { type: 'string' }, limit: { type: 'string' } });
      if (values.help) return { command: 'help', topic: command };
      noPositionals(command, positionals);
      if (values.escalated !== true) throw new UsageError('list needs --escalated (the only listing so far)', command);
      const reason = optional(values, 'reason');
      const limit = countOption(command, 'limit', optional(values, 'limit')) ?? 100;
      if (limit < 1) throw new UsageError('--limit: must be at least 1', command);
      return { command, ...(reason !== undefined ? { reason } : {}), limit, ...flags(values) };
    }
    case 'adapter': {
      const [action, ...more] = rest;
      if (action === '--help' || action === '-h' || action === 'help') return { command: 'help', topic: command };
      if (action === undefined) throw new UsageError('adapter needs an action: validate or explain', command);
      if (action !== 'validate' && action !== 'explain') throw new UsageError(`adapter: unknown action "${action}" (validate or explain)`, command);
      const { values, positionals } = parse(command, more, { 'base-url': { type: 'string' }, 'require-env': { type: 'boolean' } });
      if (values.help) return { command: 'help', topic: command };
      if (positionals.length === 0) throw new UsageError(`adapter ${action} needs a contract file`, command);
      if (action === 'explain' && positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}" (explain takes one file)`, command);
      const baseUrl = optional(values, 'base-url');
      return { command, action, files: positionals, ...(baseUrl !== undefined ? { baseUrl } : {}), requireEnv: values['require-env'] === true, ...flags(values) };
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}
