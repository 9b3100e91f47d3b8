/**
 * The worker's one logger: Temporal's `Logger` interface, so the SDK (installed with `Runtime.install({ logger })`,
 * its native core's logs forwarded too), the activities and the webhook receiver all write the same lines: one JSON
 * object per line (`{"ts","level","msg",...fields}`) on stderr, for log shippers. Fields come from the activities,
 * which only log redacted data; every string is passed through the HTTP layer's text redaction once more, and
 * configured secret values are masked, as defence in depth (T4).
 */
import type { Logger, LogLevel as SdkLogLevel, LogMetadata } from '@temporalio/common';
import { redactText } from './adapters/http/redact';

const LEVELS = { trace: 0, debug: 10, info: 20, warn: 30, error: 40 } as const;
/** A log level, as `ASYNCJOB_LOG_LEVEL` names it. */
export type LogLevel = keyof typeof LEVELS;

/** The SDK's name of a level (`Runtime.install`'s filters take these). */
export function sdkLogLevel(level: LogLevel): SdkLogLevel {
  return level.toUpperCase() as SdkLogLevel;
}

/** Where the SDK puts a record's own time (epoch nanoseconds, a bigint): `LogTimestamp` of @temporalio/worker. */
const SDK_TIMESTAMP = Symbol.for('log_timestamp');

/** Options of {@link createJsonLogger}. */
export interface JsonLoggerOptions {
  /** The least severe level written; default `info`. */
  level?: LogLevel;
  /** Receives each line, newline included; default: stderr. */
  write?: (line: string) => void;
  /** Exact values that must never be printed (credentials resolved by this process); shorter than 4 are ignored. */
  secretValues?: readonly string[];
  /** Messages never written (the SDK's warnings that asyncjob's layout makes expected). */
  dropMessages?: readonly RegExp[];
  /** Epoch ms, for records that do not carry the SDK's own timestamp. */
  clock?: () => number;
}

/** A thrown value as JSON can show it (an `Error`'s fields are not enumerable). */
function errorFields(error: Error): Record<string, unknown> {
  const code = (error as { code?: unknown }).code;
  return {
    name: error.name,
    message: error.message,
    ...(code !== undefined ? { code } : {}),
    ...(error.stack !== undefined ? { stack: error.stack } : {}),
  };
}

/** The record's time: the SDK's own timestamp when it carries one (its lines are sorted by it), else the clock. */
function timeOf(meta: LogMetadata, clock: () => number): string {
  const nanos: unknown = meta[SDK_TIMESTAMP];
  return new Date(typeof nanos === 'bigint' ? Number(nanos / 1_000_000n) : clock()).toISOString();
}

/**
 * Creates the logger: Temporal's `Logger`, asyncjob's one logger interface (the activities and the webhook receiver
 * take it narrowed to the levels they write). Never throws: a record whose fields cannot be serialised (a cycle) is
 * written without them, saying so. Safe to share between workers, activities and the SDK.
 */
export function createJsonLogger(options: JsonLoggerOptions = {}): Logger {
  const least = LEVELS[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const clock = options.clock ?? Date.now;
  const secrets = (options.secretValues ?? []).filter((secret) => secret.length >= 4);
  const dropped = options.dropMessages ?? [];
  const clean = (text: string): string => {
    let out = redactText(text);
    for (const secret of secrets) out = out.split(secret).join('[redacted]');
    return out;
  };
  const replacer = (_key: string, value: unknown): unknown => {
    if (typeof value === 'string') return clean(value);
    if (typeof value === 'bigint') return value.toString();
    if (value instanceof Error) return errorFields(value);
    return value;
  };
  const log = (sdkLevel: SdkLogLevel, message: string, meta: LogMetadata = {}): void => {
    const level = sdkLevel.toLowerCase() as LogLevel;
    if (LEVELS[level] < least) return;
    if (dropped.some((pattern) => pattern.test(message))) return;
    const head = { ts: timeOf(meta, clock), level, msg: message };
    // The head's fields come first and cannot be overwritten by a field of the same name.
    const record: Record<string, unknown> = { ...head };
    for (const [name, value] of Object.entries(meta)) if (!(name in head)) record[name] = value;
    let line: string;
    try {
      line = JSON.stringify(record, replacer);
    } catch {
      line = JSON.stringify({ ...head, fieldsDropped: 'not serialisable' }, replacer);
    }
    write(`${line}\n`);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
