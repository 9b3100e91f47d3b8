/**
 * Structured logs: one JSON object per line (`{"ts","level","msg",...fields}`) on stderr, for log shippers.
 * Fields come from the activities, which only log redacted data; every string is passed through the HTTP
 * layer's text redaction once more, and configured secret values are masked, as defence in depth (T4).
 */
import { redactText } from './adapters/http/redact';
import type { ActivityLogger } from './activities/provider-call';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
/** A log level. */
export type LogLevel = keyof typeof LEVELS;

/** Options of {@link createJsonLogger}. */
export interface JsonLoggerOptions {
  level?: LogLevel;
  write?: (line: string) => void;
  /** Exact values that must never be printed (credentials resolved by this process). */
  secretValues?: readonly string[];
  clock?: () => number;
}

/** A JSON-lines logger usable as the activities' logger. */
export function createJsonLogger(
  options: JsonLoggerOptions = {},
): ActivityLogger & { error(message: string, fields?: Record<string, unknown>): void } {
  const min = LEVELS[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const secrets = (options.secretValues ?? []).filter((s) => s.length >= 4);
  const clean = (text: string): string => {
    let out = redactText(text);
    for (const secret of secrets) out = out.split(secret).join('[redacted]');
    return out;
  };
  const emit = (level: LogLevel, message: string, fields: Record<string, unknown> = {}): void => {
    if (LEVELS[level] < min) return;
    const line = JSON.stringify(
      { ts: new Date((options.clock ?? Date.now)()).toISOString(), level, msg: message, ...fields },
      (_key, value: unknown) => (typeof value === 'string' ? clean(value) : value),
    );
    write(`${line}\n`);
  };
  return {
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
  };
}
