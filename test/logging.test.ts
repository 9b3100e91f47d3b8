import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '@temporalio/common';
import type { RuntimeOptions } from '@temporalio/worker';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ActivityLogger } from '../src/activities/provider-call';
import { createJsonLogger, sdkLogLevel, type JsonLoggerOptions } from '../src/logging';
import type { WebhookOutcomeReporterOptions } from '../src/webhooks/outcome-reporter';

/** A logger writing into an array, at time 0 unless the record carries the SDK's own timestamp. */
function capture(options: JsonLoggerOptions = {}) {
  const lines: string[] = [];
  const logger = createJsonLogger({ write: (line) => void lines.push(line), clock: () => 0, ...options });
  const records = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, records };
}

describe('structured logs (T4)', () => {
  it('writes one JSON object per line with level, message and fields', () => {
    const { logger, lines } = capture();
    logger.info('provider call', { operationId: 'op-1', status: 202 });
    expect(lines).toEqual([
      '{"ts":"1970-01-01T00:00:00.000Z","level":"info","msg":"provider call","operationId":"op-1","status":202}\n',
    ]);
  });

  it('T4: masks bearer tokens and configured secret values anywhere in a field', () => {
    const { logger, lines } = capture({ secretValues: ['s3cr3t-value-123'] });
    logger.warn('echo', {
      header: 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789',
      nested: { note: 'token s3cr3t-value-123 seen' },
    });
    expect(lines.join('')).not.toContain('abcdefghijklmnopqrstuvwxyz0123456789');
    expect(lines.join('')).not.toContain('s3cr3t-value-123');
  });

  it('T4: masks a secret value in the message and in a thrown error the SDK passes as a field', () => {
    const { logger, lines } = capture({ secretValues: ['s3cr3t-value-123'] });
    logger.error('failed with s3cr3t-value-123', { error: new Error('refused s3cr3t-value-123') });
    expect(lines.join('')).not.toContain('s3cr3t-value-123');
    const error = (JSON.parse(lines[0]!) as { error: { name: string; message: string } }).error;
    expect(error).toMatchObject({ name: 'Error', message: 'refused [redacted]' });
  });

  it('drops lines below the level', () => {
    const { logger, lines } = capture({ level: 'warn' });
    logger.info('quiet');
    logger.debug('quieter');
    logger.trace('quietest');
    expect(lines).toEqual([]);
  });
});

describe('one logger for the SDK and for us', () => {
  it("is Temporal's Logger, and so the activities' and the webhook receiver's logger too", () => {
    const logger = createJsonLogger();
    expectTypeOf(logger).toEqualTypeOf<Logger>();
    expectTypeOf(logger).toExtend<NonNullable<RuntimeOptions['logger']>>();
    expectTypeOf(logger).toExtend<ActivityLogger>();
    expectTypeOf(logger).toExtend<NonNullable<WebhookOutcomeReporterOptions['logger']>>();
  });

  it("src/ declares no logger interface of its own: a logger type is Temporal's Logger, or a Pick of it", () => {
    const src = path.join(__dirname, '..', 'src');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const declared = files.flatMap((file) =>
      [
        ...readFileSync(path.join(src, file), 'utf8').matchAll(
          /^(?:export )?(?:interface|type) (\w*Logger)\b[^=\n{]*(=[^;\n]*)?/gm,
        ),
      ]
        .filter((match) => !/^=\s*Pick<Logger,/.test(match[2] ?? ''))
        .map((match) => `${file}: ${match[1]}`),
    );
    expect(declared).toEqual([]);
  });

  it("writes the SDK's levels in lower case and takes the SDK's own timestamp (epoch nanoseconds)", () => {
    const { logger, records } = capture({ level: 'trace' });
    logger.log('WARN', 'Worker state changed', {
      [Symbol.for('log_timestamp')]: 1_764_583_200_123_000_000n,
      sdkComponent: 'worker',
      state: 'DRAINING',
    });
    logger.trace('deep');
    expect(records()).toEqual([
      {
        ts: '2025-12-01T10:00:00.123Z',
        level: 'warn',
        msg: 'Worker state changed',
        sdkComponent: 'worker',
        state: 'DRAINING',
      },
      { ts: '1970-01-01T00:00:00.000Z', level: 'trace', msg: 'deep' },
    ]);
    expect(sdkLogLevel('debug')).toBe('DEBUG');
  });

  it('keeps its own ts, level and msg when a field has the same name, and writes bigints as strings', () => {
    const { logger, records } = capture();
    logger.info('real', { level: 'fake', msg: 'fake', ts: 'fake', size: 12n });
    expect(records()).toEqual([{ ts: '1970-01-01T00:00:00.000Z', level: 'info', msg: 'real', size: '12' }]);
  });

  it('never throws: a field with a cycle is dropped and the line says so', () => {
    const { logger, records } = capture();
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    expect(() => logger.warn('odd meta', { cyclic })).not.toThrow();
    expect(records()).toEqual([
      { ts: '1970-01-01T00:00:00.000Z', level: 'warn', msg: 'odd meta', fieldsDropped: 'not serialisable' },
    ]);
  });

  it('leaves out the messages it is told to drop (the SDK warnings asyncjob expects)', () => {
    const { logger, records } = capture({ dropMessages: [/^No workflows registered/] });
    logger.warn('No workflows registered, not polling for workflow tasks');
    logger.warn('Something else');
    expect(records().map((record) => record.msg)).toEqual(['Something else']);
  });
});
