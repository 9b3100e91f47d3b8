/**
 * The CLI's commands behind the `CliDeps` seam: JSON shapes, exit codes, one-line errors, watch rendering and the
 * client-side checks of `decide`. No server: the client is scripted.
 */
import { describe, expect, it } from 'vitest';
import {
  AsyncJobConnectionError,
  AsyncJobInputError,
  AsyncJobQueryTimeout,
  AsyncJobRequestRefused,
  FingerprintMismatchError,
  OperationFailedError,
} from '../../src/client';
import { runCli } from '../../src/cli/run-cli';
import { EXIT } from '../../src/cli/exit-codes';
import { ConfigError } from '../../src/config';
import { escalated, FakeClient, fakeDeps, observing, record, startArgv, T0 } from './fixtures';

const START = startArgv();

describe('asyncjob start', () => {
  it('builds the start request from the options and prints asyncjob.start/v1', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client);
    expect(await runCli([...START, '--policy', '{"maxStatusRequests":10}', '--json'], io.deps)).toBe(EXIT.ok);
    expect(client.calls[0]).toEqual({
      method: 'start',
      args: [
        {
          operationId: 'op-42',
          provider: 'rest',
          payload: { report: 'sales' },
          startedBy: 'svc:billing',
          authorisedBy: 'alice',
          createDeadline: { afterMs: 300_000 },
          resultDeadline: { afterMs: 3_600_000 },
          policy: { maxStatusRequests: 10 },
        },
        { allowUnservedProvider: false },
      ],
    });
    expect(io.json()).toEqual([
      {
        schema: 'asyncjob.start/v1',
        operationId: 'op-42',
        runId: 'run-1',
        joined: false,
        requestFingerprint: 'sha256:ab',
        traceId: client.started.traceId,
        executionStatus: 'RUNNING',
        replaced: null,
        failure: null,
        summary: null,
      },
    ]);
    expect(client.closed).toBe(true);
  });

  it('reads --payload @file', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client, { files: { 'req.json': '{"from":"file"}' } });
    const argv = [...START];
    argv[6] = '@req.json';
    expect(await runCli(argv, io.deps)).toBe(EXIT.ok);
    expect((client.calls[0]!.args[0] as { payload: unknown }).payload).toEqual({ from: 'file' });
    expect(io.stdout()).toBe(`started operation op-42 (trace ${client.started.traceId})\n`);
  });

  it('says when it joined an existing operation', async () => {
    const client = new FakeClient();
    client.started = { ...client.started, joined: true };
    const io = fakeDeps(client);
    expect(await runCli(START, io.deps)).toBe(EXIT.ok);
    expect(io.stdout()).toMatch(/^joined operation op-42: it already exists with the same request/);
  });

  it('refuses invalid JSON and unreadable files with exit 2 before connecting', async () => {
    const client = new FakeClient();
    const bad = [...START];
    bad[6] = '{report:';
    const io = fakeDeps(client);
    expect(await runCli(bad, io.deps)).toBe(EXIT.usage);
    expect(io.stderr()).toMatch(/^asyncjob: --payload: not valid JSON: .*\(asyncjob help\)\n$/);
    const missing = [...START];
    missing[6] = '@nope.json';
    const io2 = fakeDeps(client);
    expect(await runCli(missing, io2.deps)).toBe(EXIT.usage);
    expect(io2.stderr()).toMatch(/--payload: cannot read nope.json/);
    expect(client.calls).toEqual([]);
  });

  it('--wait waits for the summary and exits by its state: 0 succeeded, 1 failed', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client);
    expect(await runCli([...START, '--wait', '--json'], io.deps)).toBe(EXIT.ok);
    expect(io.json()[0]).toMatchObject({
      schema: 'asyncjob.start/v1',
      summary: { operationId: 'op-42', localState: 'succeeded' },
    });
    client.final = record({ localState: 'failed' });
    const io2 = fakeDeps(client);
    expect(await runCli([...START, '--wait'], io2.deps)).toBe(EXIT.operationEndedBadly);
    expect(io2.stdout()).toMatch(/operation op-42 ended: failed/);
  });

  it.each([
    [
      new AsyncJobInputError([
        { path: 'provider', message: 'must match [A-Za-z0-9._:-]{1,200}' },
        { path: 'startedBy', message: 'too short' },
      ]),
      EXIT.usage,
      'ASYNCJOB_ERR_INVALID_INPUT',
    ],
    [
      new FingerprintMismatchError('op-42', 'sha256:aa', 'sha256:bb'),
      EXIT.refused,
      'ASYNCJOB_ERR_FINGERPRINT_MISMATCH',
    ],
    [
      new AsyncJobConnectionError('127.0.0.1:7233', { cause: new Error('connection refused') }),
      EXIT.connection,
      'ASYNCJOB_ERR_CONNECTION',
    ],
    [
      new OperationFailedError('op-42', 'terminated', { cause: new Error('x') }),
      EXIT.operationEndedBadly,
      'ASYNCJOB_ERR_WORKFLOW_FAILED',
    ],
    [new TypeError('boom'), EXIT.internal, 'ASYNCJOB_ERR_INTERNAL'],
  ])('maps %s to its exit code, one stderr line and asyncjob.error/v1', async (error, exitCode, code) => {
    const client = new FakeClient();
    client.startError = error;
    const io = fakeDeps(client);
    expect(await runCli([...START, '--json'], io.deps)).toBe(exitCode);
    expect(io.stderr().split('\n')).toHaveLength(2);
    expect(io.stderr()).toBe(`asyncjob: ${error.message}\n`);
    const [doc] = io.json();
    expect(doc).toMatchObject({ schema: 'asyncjob.error/v1', code, exitCode, message: error.message });
    if (error instanceof AsyncJobInputError) expect(doc!.issues).toEqual(error.issues);
  });

  it('I2: a fingerprint mismatch names both fingerprints in one line', async () => {
    const client = new FakeClient();
    client.startError = new FingerprintMismatchError('op-42', 'sha256:aa', 'sha256:bb');
    const io = fakeDeps(client);
    expect(await runCli(START, io.deps)).toBe(EXIT.refused);
    expect(io.stderr()).toBe(
      'asyncjob: operation op-42 already exists with a different request (sha256:aa, now sha256:bb); a changed request needs a new operation ID\n',
    );
  });

  it('gives details (stack, cause, issues) only under --verbose', async () => {
    const client = new FakeClient();
    client.startError = new AsyncJobConnectionError('127.0.0.1:7233', { cause: new Error('ECONNREFUSED') });
    const io = fakeDeps(client);
    await runCli([...START, '--verbose'], io.deps);
    const lines = io.stderr().split('\n');
    expect(lines[0]).toBe('asyncjob: cannot reach Temporal at 127.0.0.1:7233: ECONNREFUSED');
    expect(io.stderr()).toMatch(/caused by: Error: ECONNREFUSED/);
    expect(lines.length).toBeGreaterThan(3);
  });

  it('reports a connection failure at connect time with exit 5', async () => {
    const io = fakeDeps(new FakeClient(), {
      connectError: new AsyncJobConnectionError('h:1', { cause: new Error('deadline') }),
    });
    expect(await runCli(['status', 'op-42'], io.deps)).toBe(EXIT.connection);
    expect(io.stderr()).toBe('asyncjob: cannot reach Temporal at h:1: deadline\n');
  });
});

describe('asyncjob status', () => {
  it('prints asyncjob.status/v1 with the operation view and the execution, exit 0 while observing', async () => {
    const client = new FakeClient();
    client.records = [observing(0.4)];
    const io = fakeDeps(client);
    expect(await runCli(['status', 'op-42', '--json'], io.deps)).toBe(EXIT.ok);
    const [doc] = io.json();
    expect(doc).toMatchObject({
      schema: 'asyncjob.status/v1',
      recordError: null,
      execution: { operationId: 'op-42', executionStatus: 'RUNNING', runId: 'run-1' },
      operation: {
        operationId: 'op-42',
        provider: 'rest',
        localState: 'observing',
        final: false,
        jobId: 'J-1',
        remote: { state: 'running', category: 'pending', progress: 0.4, observedAt: null },
        nextPollAt: new Date(T0 + 30_000).toISOString(),
        delaySource: 'provider_retry_after',
        statusRequests: { used: 3, allowed: expect.any(Number) },
        deadlines: {
          createAt: new Date(T0 + 120_000).toISOString(),
          resultAt: new Date(T0 + 3_600_000).toISOString(),
          cancelAt: null,
        },
        escalation: null,
        cancel: null,
        result: null,
        providerError: null,
        traceId: '0af7651916cd43dd8448eb211c80319c',
      },
    });
  });

  it.each([
    ['succeeded', EXIT.ok],
    ['failed', EXIT.operationEndedBadly],
    ['cancelled', EXIT.operationEndedBadly],
    ['closed', EXIT.operationEndedBadly],
    ['escalated', EXIT.needsDecision],
    ['cancelling', EXIT.ok],
  ] as const)('exits by the state: %s -> %i', async (localState, exitCode) => {
    const client = new FakeClient();
    client.records = [localState === 'escalated' ? escalated() : observing(1, { localState })];
    expect(await runCli(['status', 'op-42'], fakeDeps(client).deps)).toBe(exitCode);
  });

  it('renders text with the progress bar, the next poll and its delay source', async () => {
    const client = new FakeClient();
    client.records = [observing(0.4)];
    const io = fakeDeps(client);
    await runCli(['status', 'op-42'], io.deps);
    expect(io.stdout()).toContain('operation op-42 (provider rest, job J-1)');
    expect(io.stdout()).toContain('[########------------]  40%');
    expect(io.stdout()).toContain('next poll 10:00:30 UTC (in 30s, provider_retry_after)');
    expect(io.stdout()).toContain('workflow:  RUNNING, run run-1');
  });

  it('falls back to the search attributes when no worker answers the query', async () => {
    const client = new FakeClient();
    client.getError = new AsyncJobQueryTimeout('op-42', 5000, { cause: new Error('DEADLINE_EXCEEDED') });
    const io = fakeDeps(client);
    expect(await runCli(['status', 'op-42', '--json'], io.deps)).toBe(EXIT.ok);
    expect(client.calls.find((c) => c.method === 'get')!.args).toEqual(['op-42', { timeoutMs: 5000 }]);
    expect(io.json()[0]).toMatchObject({
      operation: null,
      recordError: 'operation op-42: no worker answered within 5000 ms (is a worker running on its task queue?)',
      execution: { localState: 'observing' },
    });
  });

  it('exits 4 for an unknown operation', async () => {
    const client = new FakeClient();
    client.exists = false;
    const io = fakeDeps(client);
    expect(await runCli(['status', 'nope', '--json'], io.deps)).toBe(EXIT.notFound);
    expect(io.stderr()).toBe('asyncjob: no operation nope\n');
    expect(io.json()[0]).toMatchObject({ schema: 'asyncjob.error/v1', code: 'ASYNCJOB_ERR_NOT_FOUND', exitCode: 4 });
  });
});

describe('asyncjob watch', () => {
  const progression = () => [
    observing(undefined, { localState: 'accepted' }),
    observing(0.2),
    observing(0.2),
    observing(0.7),
    observing(1, { localState: 'succeeded' }),
  ];

  it('P8: prints one line per change when not on a terminal, and stops at the final state with exit 0', async () => {
    const client = new FakeClient();
    client.records = progression();
    const io = fakeDeps(client);
    expect(await runCli(['watch', 'op-42', '--interval', '2s'], io.deps)).toBe(EXIT.ok);
    const lines = io.stdout().trim().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(
      /^\[\.{20}\]\s+\?%\s+local accepted\s+remote running\s+checks 3\/\d+\s+next poll 10:00:30 UTC \(provider_retry_after\)$/,
    );
    expect(lines[1]).toMatch(/^\[####----------------\]\s+20%\s+local observing/);
    expect(lines[2]).toMatch(/70%/);
    expect(lines[3]).toMatch(/^\[#{20}\] 100%\s+local succeeded/);
    expect(lines[4]).toBe('operation op-42 ended: succeeded');
    expect(io.sleeps).toEqual([2000, 2000, 2000, 2000]);
  });

  it('redraws one line in place on a terminal, with a countdown to the next poll', async () => {
    const client = new FakeClient();
    client.records = progression();
    const io = fakeDeps(client, { isTTY: true });
    await runCli(['watch', 'op-42'], io.deps);
    const frames = io.stdout().split('\r\u001b[2K').filter(Boolean);
    expect(frames).toHaveLength(5);
    expect(frames[0]).toMatch(/next poll 10:00:30 UTC \(in 30s, provider_retry_after\)$/);
    expect(frames[1]).toMatch(/in 29s/);
    expect(frames[4]).toBe(
      '[####################] 100%  local succeeded  remote running  checks 3/' +
        client.final.budgets.maxStatusRequests +
        '\noperation op-42 ended: succeeded\n',
    );
  });

  it('ends the redrawn line before an error so the error line stands alone', async () => {
    const client = new FakeClient();
    client.records = [observing(0.2), observing(0.3)];
    const io = fakeDeps(client, { isTTY: true });
    client.sleep = async () =>
      void (client.getError = new AsyncJobQueryTimeout('op-42', 30_000, { cause: new Error('deadline') }));
    expect(await runCli(['watch', 'op-42'], io.deps)).toBe(EXIT.connection);
    expect(io.stdout()).toMatch(/20%.*\n$/);
    expect(io.stderr()).toBe(
      'asyncjob: operation op-42: no worker answered within 30000 ms (is a worker running on its task queue?)\n',
    );
  });

  it('stops at an escalation with exit 7 (needs a decision), lists the options and points at decide', async () => {
    const client = new FakeClient();
    client.records = [observing(0.5), escalated('rate_limited')];
    const io = fakeDeps(client);
    expect(await runCli(['watch', 'op-42'], io.deps)).toBe(EXIT.needsDecision);
    expect(io.stdout()).toMatch(/escalated: rate_limited/);
    expect(io.stdout()).toContain('--option extend --extend 15m --checks 4');
    expect(io.stdout().trim().split('\n').at(-1)).toBe(
      'operation op-42 escalated (rate_limited): asyncjob decide op-42',
    );
  });

  it('--until-final watches through an escalation to the final state', async () => {
    const client = new FakeClient();
    client.records = [
      observing(0.5),
      escalated('rate_limited'),
      observing(0.7),
      observing(1, { localState: 'succeeded' }),
    ];
    const io = fakeDeps(client);
    expect(await runCli(['watch', 'op-42', '--until-final'], io.deps)).toBe(EXIT.ok);
    expect(io.stdout().trim().split('\n').at(-1)).toBe('operation op-42 ended: succeeded');
  });

  it('emits asyncjob.watch/v1 documents: one update per change and an end with the exit code', async () => {
    const client = new FakeClient();
    client.records = [observing(0.2), observing(0.2), observing(1, { localState: 'cancelled' })];
    const io = fakeDeps(client);
    expect(await runCli(['watch', 'op-42', '--json'], io.deps)).toBe(EXIT.operationEndedBadly);
    const docs = io.json();
    expect(docs.map((d) => [d.schema, d.event])).toEqual([
      ['asyncjob.watch/v1', 'update'],
      ['asyncjob.watch/v1', 'update'],
      ['asyncjob.watch/v1', 'end'],
    ]);
    expect(docs[2]).toMatchObject({
      operation: { localState: 'cancelled', final: true },
      workflowStatus: null,
      exitCode: 1,
    });
  });

  it('stops with exit 1 when the workflow was terminated before a final state, with the reason', async () => {
    const client = new FakeClient();
    client.records = [observing(0.2)];
    client.executionStatus = 'TERMINATED';
    client.failure = { type: null, message: 'stopped by an operator' };
    const io = fakeDeps(client);
    expect(await runCli(['watch', 'op-42'], io.deps)).toBe(EXIT.operationEndedBadly);
    expect(io.stdout().trim().split('\n').at(-1)).toBe(
      'operation op-42: its workflow is TERMINATED while observing: stopped by an operator',
    );
    const json = fakeDeps(client);
    expect(await runCli(['watch', 'op-42', '--json'], json.deps)).toBe(EXIT.operationEndedBadly);
    expect(json.json().at(-1)).toMatchObject({
      event: 'end',
      workflowStatus: 'TERMINATED',
      failure: { type: null, message: 'stopped by an operator' },
      exitCode: 1,
    });
  });
});

describe('asyncjob cancel', () => {
  it('X1: sends who, why and the expected effect through the update and prints asyncjob.cancel/v1', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client);
    expect(
      await runCli(
        ['cancel', 'op-42', '--by', 'bob', '--reason', 'no longer needed', '--expected-effect', 'job stops', '--json'],
        io.deps,
      ),
    ).toBe(EXIT.ok);
    expect(client.calls).toEqual([
      {
        method: 'cancel',
        args: ['op-42', { requestedBy: 'bob', reason: 'no longer needed', expectedEffect: 'job stops' }],
      },
    ]);
    expect(io.json()).toEqual([
      { schema: 'asyncjob.cancel/v1', operationId: 'op-42', accepted: true, localState: 'cancel_requested' },
    ]);
  });

  it("exits 3 with the workflow's own code when the cancel is refused", async () => {
    const client = new FakeClient();
    client.updateError = new AsyncJobRequestRefused(
      'op-42',
      'ASYNCJOB_ERR_CANCEL_UNSUPPORTED',
      'provider rest has no cancel endpoint',
    );
    const io = fakeDeps(client);
    expect(await runCli(['cancel', 'op-42', '--by', 'bob', '--reason', 'r', '--json'], io.deps)).toBe(EXIT.refused);
    expect(io.stderr()).toBe('asyncjob: ASYNCJOB_ERR_CANCEL_UNSUPPORTED: provider rest has no cancel endpoint\n');
    expect(io.json()[0]).toMatchObject({ code: 'ASYNCJOB_ERR_CANCEL_UNSUPPORTED', exitCode: 3 });
  });
});

describe('asyncjob decide', () => {
  it('E2: without --option shows the escalation text and every offered option with its flags', async () => {
    const client = new FakeClient();
    client.records = [escalated()];
    const io = fakeDeps(client);
    expect(await runCli(['decide', 'op-42'], io.deps)).toBe(EXIT.ok);
    const text = io.stdout();
    expect(text).toContain('External job needs a decision');
    expect(text).toContain('Stopped because: deadline_exceeded');
    expect(text).toContain('--option extend --extend 15m --checks 4 --by WHO --reason TEXT');
    expect(text).toContain('cancel_at_provider');
    expect(text).not.toMatch(/continue\?/i);
  });

  it('prints asyncjob.decide/v1 with action "show" (escalation null when none is open)', async () => {
    const client = new FakeClient();
    client.records = [escalated()];
    const io = fakeDeps(client);
    await runCli(['decide', 'op-42', '--json'], io.deps);
    const [doc] = io.json();
    expect(doc).toMatchObject({
      schema: 'asyncjob.decide/v1',
      operationId: 'op-42',
      action: 'show',
      escalation: { reason: 'deadline_exceeded', decisionDeadlineAt: new Date(T0 + 7_200_000).toISOString() },
    });
    expect((doc!.escalation as { options: { option: string }[] }).options.map((o) => o.option)).toEqual([
      'extend',
      'cancel_at_provider',
      'close',
      'inspect_provider_console',
    ]);
    const none = new FakeClient();
    none.records = [observing(0.1)];
    const io2 = fakeDeps(none);
    expect(await runCli(['decide', 'op-42', '--json'], io2.deps)).toBe(EXIT.ok);
    expect(io2.json()[0]).toMatchObject({ action: 'show', escalation: null });
  });

  it('A2, D5: sends an offered option with its named bounds, declaring the route cli, and prints action "decided"', async () => {
    const client = new FakeClient();
    client.records = [escalated()];
    const io = fakeDeps(client);
    expect(
      await runCli(
        [
          'decide',
          'op-42',
          '--option',
          'extend',
          '--extend',
          '10m',
          '--checks',
          '4',
          '--by',
          'alice',
          '--reason',
          'month end',
          '--json',
        ],
        io.deps,
      ),
    ).toBe(EXIT.ok);
    expect(client.calls.find((c) => c.method === 'decide')!.args).toEqual([
      'op-42',
      {
        option: 'extend',
        approvedBy: 'alice',
        reason: 'month end',
        extendMs: 600_000,
        extraStatusRequests: 4,
        route: 'cli',
      },
    ]);
    expect(io.json()).toEqual([
      {
        schema: 'asyncjob.decide/v1',
        operationId: 'op-42',
        action: 'decided',
        option: 'extend',
        accepted: true,
        localState: 'observing',
      },
    ]);
  });

  it.each([
    [
      ['--option', 'retry_collect'],
      EXIT.refused,
      /ASYNCJOB_ERR_OPTION_NOT_OFFERED: "retry_collect" was not offered for deadline_exceeded; offered: extend, cancel_at_provider, close, inspect_provider_console/,
    ],
    [['--option', 'continue'], EXIT.refused, /"continue" was not offered/],
    [
      ['--option', 'extend', '--extend', '1h', '--checks', '4'],
      EXIT.refused,
      /ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS: --extend 1h exceeds the offered 15m/,
    ],
    [['--option', 'extend', '--extend', '15m', '--checks', '9'], EXIT.refused, /--checks 9 exceeds the offered 4/],
    [
      ['--option', 'extend'],
      EXIT.usage,
      /--option extend names its bounds: --extend D --checks N \(offered: at most 15m and 4 checks\)/,
    ],
    [['--option', 'close', '--extend', '5m'], EXIT.usage, /--extend: only --option extend takes extension bounds/],
    [['--option', 'close', '--job-id', 'J-1'], EXIT.usage, /--job-id: only --option adopt_job names a job/],
  ])('A2: refuses %j before sending anything', async (extra, exitCode, message) => {
    const client = new FakeClient();
    client.records = [escalated()];
    const io = fakeDeps(client);
    expect(await runCli(['decide', 'op-42', ...(extra as string[]), '--by', 'alice', '--reason', 'r'], io.deps)).toBe(
      exitCode,
    );
    expect(io.stderr()).toMatch(message);
    expect(client.calls.some((c) => c.method === 'decide')).toBe(false);
  });

  it('refuses a decision when no escalation is open (exit 3)', async () => {
    const client = new FakeClient();
    client.records = [observing(0.3)];
    const io = fakeDeps(client);
    expect(
      await runCli(['decide', 'op-42', '--option', 'close', '--by', 'a', '--reason', 'r', '--json'], io.deps),
    ).toBe(EXIT.refused);
    expect(io.json()[0]).toMatchObject({ code: 'ASYNCJOB_ERR_NO_OPEN_ESCALATION' });
  });

  it("passes the workflow's refusal through (exit 3, its code)", async () => {
    const client = new FakeClient();
    client.records = [escalated()];
    client.updateError = new AsyncJobRequestRefused(
      'op-42',
      'ASYNCJOB_ERR_DECISION_TOO_LATE',
      'after the decision deadline',
    );
    const io = fakeDeps(client);
    expect(
      await runCli(['decide', 'op-42', '--option', 'close', '--by', 'a', '--reason', 'r', '--json'], io.deps),
    ).toBe(EXIT.refused);
    expect(io.json()[0]).toMatchObject({ code: 'ASYNCJOB_ERR_DECISION_TOO_LATE' });
  });
});

describe('asyncjob list', () => {
  it('--escalated prints asyncjob.list/v1 (operations, and the escalated v1 list) and passes the reason and limit', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client);
    expect(await runCli(['list', '--escalated', '--reason', 'rate_limited', '--limit', '5', '--json'], io.deps)).toBe(
      EXIT.ok,
    );
    expect(client.calls).toEqual([
      { method: 'list', args: [{ state: 'escalated', reason: 'rate_limited', limit: 5 }] },
    ]);
    const startedAt = new Date(T0).toISOString();
    expect(io.json()[0]).toEqual({
      schema: 'asyncjob.list/v1',
      operations: [
        {
          operationId: 'op-1',
          state: 'escalated',
          reason: 'rate_limited',
          provider: 'rest',
          jobId: 'J-9',
          executionStatus: 'RUNNING',
          startedAt,
        },
        {
          operationId: 'op-2',
          state: 'escalated',
          reason: 'deadline_exceeded',
          provider: 'lro',
          jobId: null,
          executionStatus: 'COMPLETED',
          startedAt,
        },
      ],
      escalated: [
        { operationId: 'op-1', reason: 'rate_limited', provider: 'rest', jobId: 'J-9', executionStatus: 'RUNNING' },
        {
          operationId: 'op-2',
          reason: 'deadline_exceeded',
          provider: 'lro',
          jobId: null,
          executionStatus: 'COMPLETED',
        },
      ],
    });
  });

  it('lists by state and provider (visibility filters), without --escalated', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client);
    expect(await runCli(['list', '--state', 'observing', '--provider', 'demo-reports', '--json'], io.deps)).toBe(
      EXIT.ok,
    );
    expect(client.calls).toEqual([
      { method: 'list', args: [{ state: 'observing', provider: 'demo-reports', limit: 100 }] },
    ]);
    expect(io.json()[0]).not.toHaveProperty('escalated');
  });

  it('prints an aligned table', async () => {
    const io = fakeDeps(new FakeClient());
    await runCli(['list', '--escalated'], io.deps);
    expect(io.stdout().split('\n').slice(0, 3)).toEqual([
      'OPERATION  STATE      REASON             PROVIDER  PROVIDER JOB  WORKFLOW   STARTED',
      'op-1       escalated  rate_limited       rest      J-9           RUNNING    2026-11-29T10:00:00.000Z',
      'op-2       escalated  deadline_exceeded  lro       -             COMPLETED  2026-11-29T10:00:00.000Z',
    ]);
  });

  it('E1: refuses an unknown reason with exit 2 naming the known ones', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client);
    expect(await runCli(['list', '--escalated', '--reason', 'bored'], io.deps)).toBe(EXIT.usage);
    expect(io.stderr()).toMatch(
      /--reason: "bored" is not an escalation reason \(deadline_exceeded, request_budget_exhausted, rate_limited/,
    );
    expect(client.calls).toEqual([]);
  });
});

describe('delegated commands and help', () => {
  it('hands audit, simulate, doctor, worker and dev to their owners with their arguments', async () => {
    const io = fakeDeps(new FakeClient());
    await runCli(['audit', 'verify', '--operation', 'op-1'], io.deps);
    await runCli(['simulate', '--port', '0'], io.deps);
    await runCli(['doctor', '--json'], io.deps);
    await runCli(['worker'], io.deps);
    await runCli(['dev'], io.deps);
    expect(io.delegated).toEqual([
      { command: 'audit', argv: ['verify', '--operation', 'op-1'] },
      { command: 'simulate', argv: ['--port', '0'] },
      { command: 'doctor', argv: ['--json'] },
      { command: 'worker', argv: [] },
      { command: 'dev', argv: [] },
    ]);
  });

  it('prints the usage with the exit codes, and per-command help', async () => {
    const io = fakeDeps(new FakeClient());
    expect(await runCli([], io.deps)).toBe(EXIT.ok);
    expect(io.stdout()).toMatch(
      /exit codes: 0 ok\/succeeded, 1 operation ended badly, 2 usage or bad input, 3 refused/,
    );
    expect(io.stdout()).toMatch(/7 needs a decision/);
    const io2 = fakeDeps(new FakeClient());
    expect(await runCli(['decide', '--help'], io2.deps)).toBe(EXIT.ok);
    expect(io2.stdout()).toMatch(/^usage: asyncjob decide ID/);
    const io3 = fakeDeps(new FakeClient());
    expect(await runCli(['help', 'nope'], io3.deps)).toBe(EXIT.usage);
  });

  it('reports an unknown command in one line with exit 2, as JSON too', async () => {
    const io = fakeDeps(new FakeClient());
    expect(await runCli(['frob', '--json'], io.deps)).toBe(EXIT.usage);
    expect(io.stderr()).toBe('asyncjob: unknown command "frob" (asyncjob help)\n');
    expect(io.json()).toEqual([
      { schema: 'asyncjob.error/v1', code: 'ASYNCJOB_ERR_USAGE', message: 'unknown command "frob"', exitCode: 2 },
    ]);
  });
});

describe('error lines', () => {
  it('folds a multi-line configuration error into one line', async () => {
    const io = fakeDeps(new FakeClient(), {
      connectError: new ConfigError(['ASYNCJOB_LOG_LEVEL: invalid', 'TEMPORAL_TLS_CERT: goes with TEMPORAL_TLS_KEY']),
    });
    expect(await runCli(['list', '--escalated'], io.deps)).toBe(EXIT.usage);
    expect(io.stderr()).toBe(
      'asyncjob: invalid configuration: ASYNCJOB_LOG_LEVEL: invalid; TEMPORAL_TLS_CERT: goes with TEMPORAL_TLS_KEY\n',
    );
  });
});
