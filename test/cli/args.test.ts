import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/args';
import { startArgv, usageError } from './fixtures';

const START = startArgv();

describe('parseCommandLine', () => {
  it('parses start with durations, inline payload and flags', () => {
    expect(parseCommandLine([...START, '--wait', '--json'])).toEqual({
      command: 'start',
      provider: 'rest',
      operationId: 'op-42',
      payload: { kind: 'inline', text: '{"report":"sales"}' },
      startedBy: 'svc:billing',
      authorisedBy: 'alice',
      createDeadline: { afterMs: 300_000 },
      resultDeadline: { afterMs: 3_600_000 },
      wait: true,
      untilFinal: false,
      allowUnservedProvider: false,
      json: true,
      verbose: false,
    });
  });

  it('reads @file payloads and policies as file references, and ISO instants as absolute deadlines', () => {
    const cmd = parseCommandLine([
      ...START.slice(0, 6),
      '@req.json',
      ...START.slice(7, 14),
      '2026-12-01T10:00:00Z',
      '--policy',
      '@p.json',
      '--client-reference',
      'ref-1',
    ]);
    expect(cmd).toMatchObject({
      payload: { kind: 'file', path: 'req.json' },
      resultDeadline: { atMs: Date.UTC(2026, 11, 1, 10) },
      policy: { kind: 'file', path: 'p.json' },
      clientReference: 'ref-1',
    });
  });

  it('names every missing start option at once', () => {
    expect(usageError(['start', '--provider', 'rest']).message).toBe(
      'missing --operation-id, --payload, --started-by, --authorised-by, --create-deadline, --result-deadline',
    );
  });

  it.each([
    [[...START.slice(0, 12), '15', ...START.slice(13)], /--create-deadline: "15" is not a duration/],
    [[...START, '--nope'], /Unknown option '--nope'/],
    [[...START, 'extra'], /unexpected argument "extra"/],
    [['status'], /status needs an operation ID/],
    [['status', 'a', 'b'], /unexpected argument "b"/],
    [['watch', 'op', '--interval', 'soon'], /--interval: "soon" is not a duration/],
    [['cancel', 'op', '--by', 'bob'], /--reason is required/],
    [['cancel', 'op', '--reason', 'r'], /--by is required/],
    [['decide', 'op', '--by', 'bob'], /--by needs --option/],
    [
      ['decide', 'op', '--option', 'extend', '--by', 'b', '--reason', 'r', '--checks', 'four'],
      /--checks: "four" is not a whole number/,
    ],
    [['list', '--state', 'bored'], /--state: "bored" is not a local state/],
    [['list', '--escalated', '--state', 'observing'], /--escalated contradicts --state observing/],
    [[...START, '--until-final'], /--until-final goes with --wait/],
    [['list', '--escalated', '--limit', '0'], /--limit: must be at least 1/],
    [['frobnicate'], /unknown command "frobnicate"/],
  ])('refuses %j', (argv, message) => {
    expect(usageError(argv as string[]).message).toMatch(message);
  });

  it('remembers which command a usage error belongs to', () => {
    expect(usageError(['cancel', 'op']).command).toBe('cancel');
  });

  it('parses status, watch (default interval 1s), cancel and list', () => {
    expect(parseCommandLine(['status', 'op-1', '--json'])).toEqual({
      command: 'status',
      operationId: 'op-1',
      json: true,
      verbose: false,
    });
    expect(parseCommandLine(['watch', 'op-1'])).toMatchObject({ command: 'watch', intervalMs: 1000 });
    expect(parseCommandLine(['watch', 'op-1', '--interval', '250ms'])).toMatchObject({ intervalMs: 250 });
    expect(
      parseCommandLine([
        'cancel',
        'op-1',
        '--by',
        'bob',
        '--reason',
        'not needed',
        '--expected-effect',
        'job stops',
        '-v',
      ]),
    ).toEqual({
      command: 'cancel',
      operationId: 'op-1',
      by: 'bob',
      reason: 'not needed',
      expectedEffect: 'job stops',
      json: false,
      verbose: true,
    });
    expect(parseCommandLine(['list', '--escalated', '--reason', 'rate_limited', '--limit', '5'])).toMatchObject({
      reason: 'rate_limited',
      limit: 5,
    });
  });

  it('parses decide without an option as "show", and with one as an answer with its bounds', () => {
    expect(parseCommandLine(['decide', 'op-1'])).toEqual({
      command: 'decide',
      operationId: 'op-1',
      json: false,
      verbose: false,
    });
    expect(
      parseCommandLine([
        'decide',
        'op-1',
        '--option',
        'extend',
        '--by',
        'alice',
        '--reason',
        'month end',
        '--extend',
        '15m',
        '--checks',
        '4',
        '--transport-failures',
        '2',
        '--rate-limited',
        '1',
      ]),
    ).toMatchObject({
      answer: {
        option: 'extend',
        by: 'alice',
        reason: 'month end',
        extendMs: 900_000,
        checks: 4,
        transportFailures: 2,
        rateLimited: 1,
      },
    });
    expect(
      parseCommandLine(['decide', 'op-1', '--option', 'adopt_job', '--by', 'a', '--reason', 'r', '--job-id', 'J-2']),
    ).toMatchObject({ answer: { jobId: 'J-2' } });
  });

  it('hands audit and simulate their own arguments untouched', () => {
    expect(parseCommandLine(['audit', 'show', 'op-1', '--json'])).toEqual({
      command: 'audit',
      argv: ['show', 'op-1', '--json'],
    });
    expect(parseCommandLine(['simulate', '--port', '0'])).toEqual({ command: 'simulate', argv: ['--port', '0'] });
  });

  it("answers help in every spelling, and --help on a command as that command's help", () => {
    expect(parseCommandLine([])).toEqual({ command: 'help' });
    expect(parseCommandLine(['--help'])).toEqual({ command: 'help' });
    expect(parseCommandLine(['help', 'watch'])).toEqual({ command: 'help', topic: 'watch' });
    expect(parseCommandLine(['start', '--help'])).toEqual({ command: 'help', topic: 'start' });
    expect(parseCommandLine(['worker'])).toEqual({ command: 'worker' });
    expect(parseCommandLine(['dev'])).toEqual({ command: 'dev' });
  });
});
