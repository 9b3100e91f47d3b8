/** E2: the exact decide commands an escalation shows, in a form the CLI parses. */
import { describe, expect, it } from 'vitest';
import { decideCommands, wholeDuration } from '../../src/core/decide-command';
import { parseDuration } from '../../src/cli/duration';
import { type OpenEscalation } from '../../src/core/escalation';

describe('E2: decide commands', () => {
  it.each([
    [900_000, '15m'],
    [5_400_000, '90m'],
    [129_600_000, '36h'],
    [86_400_000, '1d'],
    [1_500, '1500ms'],
  ])('%i ms is written %s, which the CLI reads back exactly', (ms, text) => {
    expect(wholeDuration(ms)).toBe(text);
    expect(parseDuration(text)).toEqual({ kind: 'ok', ms });
  });

  it('one command per offered option, with its bounds', () => {
    const escalation = {
      reason: 'deadline_exceeded',
      options: [
        { option: 'extend', label: 'extend by 15 min with 4 more checks', extendMs: 900_000, extraStatusRequests: 4 },
        { option: 'close', label: 'close the operation' },
      ],
    } as unknown as OpenEscalation;
    expect(decideCommands('op-1', escalation)).toEqual([
      'asyncjob decide op-1 --option extend --extend 15m --checks 4 --by YOU --reason "WHY"',
      'asyncjob decide op-1 --option close --by YOU --reason "WHY"',
    ]);
  });
});
