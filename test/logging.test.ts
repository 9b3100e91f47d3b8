import { describe, expect, it } from 'vitest';
import { createJsonLogger } from '../src/logging';

describe('structured logs (T4)', () => {
  it('writes one JSON object per line with level, message and fields', () => {
    const lines: string[] = [];
    const log = createJsonLogger({ write: (l) => void lines.push(l), clock: () => 0 });
    log.info('provider call', { operationId: 'op-1', status: 202 });
    expect(lines).toEqual([
      '{"ts":"1970-01-01T00:00:00.000Z","level":"info","msg":"provider call","operationId":"op-1","status":202}\n',
    ]);
  });

  it('T4: masks bearer tokens and configured secret values anywhere in a field', () => {
    const lines: string[] = [];
    const log = createJsonLogger({ write: (l) => void lines.push(l), secretValues: ['s3cr3t-value-123'] });
    log.warn('echo', {
      header: 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789',
      nested: { note: 'token s3cr3t-value-123 seen' },
    });
    expect(lines.join('')).not.toContain('abcdefghijklmnopqrstuvwxyz0123456789');
    expect(lines.join('')).not.toContain('s3cr3t-value-123');
  });

  it('drops lines below the level', () => {
    const lines: string[] = [];
    createJsonLogger({ level: 'warn', write: (l) => void lines.push(l) }).info('quiet');
    expect(lines).toEqual([]);
  });
});
