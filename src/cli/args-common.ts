/**
 * What every part of `asyncjob`'s argument parsing shares: the usage error, the value types and the option
 * readers (durations, deadlines, counts, JSON sources). Pure: no I/O.
 */
import { parseArgs } from 'node:util';
import { AsyncJobError } from '../core/errors';
import { parseDuration } from './duration';

/**
 * A usage error (`ASYNCJOB_ERR_USAGE`): unknown command or option, a missing or malformed value; of `asyncjob` and
 * of the commands that own their arguments (`audit`, `mcp`).
 */
export class UsageError extends AsyncJobError {
  constructor(
    message: string,
    /** The command whose usage text applies, if known. */
    readonly command?: string,
  ) {
    super('ASYNCJOB_ERR_USAGE', message);
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

/** The options of every command. */
const common = {
  json: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The options a command declares for `node:util` parseArgs; `multiple`: repeatable, its values in order. */
export type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

/** Parses a command's arguments strictly; an unknown or malformed option is a {@link UsageError}. */
export function parse(
  command: string,
  args: string[],
  options: OptionSpec,
): { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] } {
  try {
    return parseArgs({
      args,
      options: { ...common, ...options },
      strict: true,
      allowPositionals: true,
      allowNegative: false,
    });
  } catch (err) {
    // node:util's messages are clear ("Unknown option '--x'"); drop its advice about "--" and keep one line.
    const message =
      err instanceof Error
        ? err.message.split('\n')[0]!.replace(/\. To specify a positional argument.*$/, '')
        : String(err);
    throw new UsageError(message, command);
  }
}

/** A required string option; missing or blank is a usage error naming it. */
export function required(command: string, values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim().length === 0) throw new UsageError(`--${name} is required`, command);
  return v;
}

/** An optional string option. */
export function optional(values: Record<string, unknown>, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

/** The one positional argument (the operation ID). */
export function onePositional(command: string, positionals: string[]): string {
  if (positionals.length === 0) throw new UsageError(`${command} needs an operation ID`, command);
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`, command);
  return positionals[0]!;
}

/** Refuses positional arguments. */
export function noPositionals(command: string, positionals: string[]): void {
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

/** A whole-number option, or undefined when absent. */
export function countOption(command: string, name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw new UsageError(`--${name}: "${text}" is not a whole number`, command);
  return Number(text);
}

/** `@path` is a file to read, anything else inline JSON. */
export function jsonSource(text: string): JsonSource {
  return text.startsWith('@') ? { kind: 'file', path: text.slice(1) } : { kind: 'inline', text };
}

/**
 * A repeatable `--name key=value` option as an object: each split at its first `=`, so a value may hold `=`. A
 * missing `=`, an empty key or a key given twice is a usage error naming the option and the key.
 */
export function keyValueOption(command: string, name: string, given: unknown): Record<string, string> | undefined {
  if (given === undefined) return undefined;
  const entries = Array.isArray(given) ? given : [given];
  const out: Record<string, string> = {};
  for (const entry of entries) {
    const text = String(entry);
    const at = text.indexOf('=');
    if (at <= 0) throw new UsageError(`--${name} "${text}": expected NAME=VALUE`, command);
    const key = text.slice(0, at);
    if (Object.hasOwn(out, key)) throw new UsageError(`--${name} ${key}: given more than once`, command);
    Object.defineProperty(out, key, {
      value: text.slice(at + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The common flags of a parsed command. */
export function flags(values: Record<string, unknown>): CommonFlags {
  return { json: values.json === true, verbose: values.verbose === true };
}
