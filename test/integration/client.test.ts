/**
 * AsyncJobClient against the run's real Temporal dev server. These tests need no worker: starting (with
 * `allowUnservedProvider`, as during a worker outage), joining, the fingerprint and settings checks, describing,
 * listing and bounded waits work from Temporal's own records (memo, search attributes, history).
 */
import net from 'node:net';
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  AsyncJobAborted,
  AsyncJobClient,
  AsyncJobError,
  AsyncJobConnectionError,
  AsyncJobInputError,
  AsyncJobQueryTimeout,
  AsyncJobUpdateTimeout,
  AsyncJobWaitTimeout,
  FingerprintMismatchError,
  JoinMismatchError,
  OperationNotFoundError,
  ProviderUnservedError,
  WORKFLOW_TYPE,
} from '../../src/client';
import type { StartRequest } from '../../src/core/operation';
import { requestFingerprint } from '../../src/core/fingerprint';
import { escalationReasonKey, providerJobIdKey, providerKey, stateKey } from '../../src/workflows/search-attributes';
import { Worker } from '@temporalio/worker';
import { connectTestEnvironment, uniqueId, workflowBundle } from '../setup/temporal';

function request(operationId: string, payload: Record<string, unknown> = { prompt: 'hello', n: 1 }): StartRequest {
  return {
    operationId,
    provider: 'sim-rest',
    payload,
    startedBy: 'svc:test',
    authorisedBy: 'alice',
    createDeadline: { afterMs: 60_000 },
    resultDeadline: { afterMs: 3_600_000 },
  };
}

/** The error the call ends with (caught at once, so no rejection goes unhandled while others are awaited). */
function failureOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => new Error('the call succeeded'),
    (err: unknown) => err,
  );
}

describe('AsyncJobClient on a real Temporal dev server (no worker)', () => {
  let env: TestWorkflowEnvironment;
  let client: AsyncJobClient;
  // No worker polls this queue: workflows stay scheduled, which is all these tests need.
  const taskQueue = uniqueId('client-no-worker');

  beforeAll(async () => {
    env = await connectTestEnvironment();
    client = new AsyncJobClient({ client: env.client, taskQueue });
  });

  /** No worker serves these providers: every start here is a start "during a worker outage". */
  const start = (r: StartRequest) => client.start(r, { allowUnservedProvider: true });

  afterAll(async () => {
    await env?.teardown();
  });

  async function terminate(operationId: string): Promise<void> {
    await env.client.workflow.getHandle(operationId).terminate('test cleanup');
  }

  it('C1/T1: starts with the operation ID as workflow ID, the fingerprint and trace ID in the memo, and typed search attributes', async () => {
    const operationId = uniqueId('op');
    const before = Date.now();
    const handle = await start(request(operationId));
    try {
      // The start itself carries the first state, the provider and the result deadline (relative: the client's estimate).
      const deadlineAt = Date.parse((await client.describeOperation(operationId)).resultDeadlineAt ?? '');
      expect(deadlineAt).toBeGreaterThanOrEqual(before + 3_600_000);
      expect(deadlineAt).toBeLessThanOrEqual(Date.now() + 3_600_000);
      expect(handle.operationId).toBe(operationId);
      expect(handle.joined).toBe(false);
      expect(handle.requestFingerprint).toBe(requestFingerprint({ prompt: 'hello', n: 1 }));
      expect(handle.traceId).toMatch(/^[0-9a-f]{32}$/);
      const d = await client.describeOperation(operationId);
      expect(d).toMatchObject({
        operationId,
        runId: handle.runId,
        executionStatus: 'RUNNING',
        localState: 'create_pending',
        provider: 'sim-rest',
        requestFingerprint: handle.requestFingerprint,
        traceId: handle.traceId,
        closedAt: null,
      });
      const raw = await env.client.workflow.getHandle(operationId).describe();
      expect(await raw.staticSummary()).toBe(`asyncjob sim-rest ${operationId}`);
      expect(raw.taskQueue).toBe(taskQueue);
    } finally {
      await terminate(operationId);
    }
  });

  it('I2: a second start with the same request joins the running operation (same run, same trace ID)', async () => {
    const operationId = uniqueId('op');
    const first = await start(request(operationId));
    try {
      // Key order does not change the fingerprint (canonical JSON).
      const second = await start(request(operationId, { n: 1, prompt: 'hello' }));
      expect(second.joined).toBe(true);
      expect(second.runId).toBe(first.runId);
      expect(second.traceId).toBe(first.traceId);
    } finally {
      await terminate(operationId);
    }
  });

  it('I2: a second start with a changed payload is refused with ASYNCJOB_ERR_FINGERPRINT_MISMATCH and leaves the run alone', async () => {
    const operationId = uniqueId('op');
    const first = await start(request(operationId));
    try {
      const err = await start(request(operationId, { prompt: 'changed', n: 1 })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FingerprintMismatchError);
      expect((err as FingerprintMismatchError).code).toBe('ASYNCJOB_ERR_FINGERPRINT_MISMATCH');
      expect((err as FingerprintMismatchError).existing).toBe(first.requestFingerprint);
      const d = await client.describeOperation(operationId);
      expect(d.runId).toBe(first.runId);
      expect(d.executionStatus).toBe('RUNNING');
    } finally {
      await terminate(operationId);
    }
  });

  it('I2: a second start with the same payload under another provider is refused too', async () => {
    const operationId = uniqueId('op');
    await start(request(operationId));
    try {
      await expect(start({ ...request(operationId), provider: 'sim-lro' })).rejects.toMatchObject({
        code: 'ASYNCJOB_ERR_FINGERPRINT_MISMATCH',
      });
    } finally {
      await terminate(operationId);
    }
  });

  it('I2: a closed operation is never restarted: the same request joins it, a changed one is refused', async () => {
    const operationId = uniqueId('op');
    const first = await start(request(operationId));
    await terminate(operationId);
    const again = await start(request(operationId));
    expect(again.joined).toBe(true);
    expect(again.runId).toBe(first.runId);
    expect((await client.describeOperation(operationId)).executionStatus).toBe('TERMINATED');
    await expect(start(request(operationId, { prompt: 'other' }))).rejects.toBeInstanceOf(FingerprintMismatchError);
  });

  it('refuses an invalid request naming every bad field, and starts nothing', async () => {
    const operationId = uniqueId('op');
    const bad = {
      ...request(operationId),
      provider: 'has space',
      startedBy: '',
      createDeadline: { afterMs: -1 },
      extra: true,
    } as unknown as StartRequest;
    const err = await start(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AsyncJobInputError);
    const paths = (err as AsyncJobInputError).issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['provider', 'startedBy', 'createDeadline.afterMs']));
    expect((err as AsyncJobInputError).issues.find((i) => i.path === '')?.message).toMatch(/extra/);
    await expect(client.describeOperation(operationId)).rejects.toBeInstanceOf(OperationNotFoundError);
  });

  it('refuses an absolute deadline in the past before starting anything', async () => {
    const operationId = uniqueId('op');
    const err = await start({ ...request(operationId), resultDeadline: { atMs: 1_000 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AsyncJobInputError);
    expect((err as AsyncJobInputError).issues).toContainEqual({
      path: 'resultDeadline',
      message: 'must be in the future',
    });
    await expect(client.describeOperation(operationId)).rejects.toBeInstanceOf(OperationNotFoundError);
  });

  it('an unknown operation is OperationNotFoundError (ASYNCJOB_ERR_NOT_FOUND) from every call about one', async () => {
    const missing = uniqueId('missing');
    const calls: Record<string, Promise<unknown>> = {
      describeOperation: failureOf(client.describeOperation(missing)),
      get: failureOf(client.get(missing, { timeoutMs: 5_000 })),
      escalation: failureOf(client.escalation(missing, { timeoutMs: 5_000 })),
      history: failureOf(client.history(missing, { timeoutMs: 5_000 })),
      cancel: failureOf(client.cancel(missing, { requestedBy: 'bob', reason: 'x' }, { acceptTimeoutMs: 5_000 })),
      decide: failureOf(
        client.decide(missing, { option: 'close', approvedBy: 'bob', reason: 'x' }, { acceptTimeoutMs: 5_000 }),
      ),
      signalWebhook: failureOf(client.signalWebhook(missing, { eventId: 'evt-1' })),
      result: failureOf(client.result(missing)),
      watch: failureOf(client.watch(missing).next()),
    };
    for (const [name, pending] of Object.entries(calls)) {
      const err = await pending;
      expect(err, name).toBeInstanceOf(OperationNotFoundError);
      expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_NOT_FOUND', operationId: missing });
    }
  });

  it('E1: listEscalated finds escalated operations by search attribute, closed ones too, filtered by reason', async () => {
    // Workflows that carry the search attributes an escalated AsyncJobWorkflow publishes; nobody runs them.
    const rateLimited = uniqueId('esc');
    const denied = uniqueId('esc');
    const running = uniqueId('obs');
    const startFake = (workflowId: string, state: string, reason?: string) =>
      env.client.workflow.start(WORKFLOW_TYPE, {
        workflowId,
        taskQueue,
        args: [],
        typedSearchAttributes: [
          { key: stateKey, value: state },
          { key: providerKey, value: 'sim-rest' },
          { key: providerJobIdKey, value: `job-${workflowId}` },
          ...(reason ? [{ key: escalationReasonKey, value: reason }] : []),
        ],
      });
    await startFake(rateLimited, 'escalated', 'rate_limited');
    await startFake(denied, 'escalated', 'authorization_denied');
    await startFake(running, 'observing');
    await terminate(denied);
    try {
      await expect
        .poll(async () => (await client.listEscalated()).map((e) => e.operationId), { timeout: 15_000, interval: 250 })
        .toEqual(expect.arrayContaining([rateLimited, denied]));
      const all = await client.listEscalated();
      expect(all.map((e) => e.operationId)).not.toContain(running);
      expect(all.find((e) => e.operationId === denied)).toEqual({
        operationId: denied,
        reason: 'authorization_denied',
        provider: 'sim-rest',
        jobId: `job-${denied}`,
        executionStatus: 'TERMINATED',
      });
      const onlyRateLimited = await client.listEscalated({ reason: 'rate_limited' });
      expect(onlyRateLimited.map((e) => e.operationId)).toContain(rateLimited);
      expect(onlyRateLimited.every((e) => e.reason === 'rate_limited')).toBe(true);
      expect(await client.listEscalated({ limit: 1 })).toHaveLength(1);
    } finally {
      await terminate(rateLimited);
      await terminate(running);
    }
  });

  it('W1: signalWebhook delivers a validated hint as the "webhook" signal, and refuses a malformed one', async () => {
    const operationId = uniqueId('op');
    await start(request(operationId));
    try {
      await client.signalWebhook(operationId, { eventId: 'evt-1', remoteJobId: 'J-1', state: 'succeeded' });
      await expect(client.signalWebhook(operationId, { eventId: '' } as never)).rejects.toBeInstanceOf(
        AsyncJobInputError,
      );
      const history = await env.client.workflow.getHandle(operationId).fetchHistory();
      const signals = (history.events ?? []).flatMap((e) =>
        e.workflowExecutionSignaledEventAttributes ? [e.workflowExecutionSignaledEventAttributes.signalName] : [],
      );
      expect(signals).toEqual(['webhook']);
    } finally {
      await terminate(operationId);
    }
  });

  it('a query no worker answers ends with AsyncJobQueryTimeout (ASYNCJOB_ERR_QUERY_TIMEOUT) after timeoutMs, never an SDK error', async () => {
    const operationId = uniqueId('op');
    await start(request(operationId));
    try {
      const started = Date.now();
      const errors = await Promise.all([
        client.get(operationId, { timeoutMs: 500 }).catch((e: unknown) => e),
        client.escalation(operationId, { timeoutMs: 500 }).catch((e: unknown) => e),
        client.history(operationId, { timeoutMs: 500 }).catch((e: unknown) => e),
      ]);
      for (const err of errors) {
        // Whichever answer the server gave first (our deadline, its own, a cancelled call, no poller): the same error.
        expect(err).toBeInstanceOf(AsyncJobQueryTimeout);
        expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_QUERY_TIMEOUT', operationId });
      }
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await terminate(operationId);
    }
  });

  it('a cancel or a decision no worker accepts in time is AsyncJobUpdateTimeout; nothing is claimed', async () => {
    const operationId = uniqueId('op');
    await start(request(operationId));
    try {
      const started = Date.now();
      const errors = await Promise.all([
        client
          .cancel(operationId, { requestedBy: 'bob', reason: 'not needed' }, { acceptTimeoutMs: 500 })
          .catch((e: unknown) => e),
        client
          .decide(operationId, { option: 'close', approvedBy: 'bob', reason: 'done' }, { acceptTimeoutMs: 500 })
          .catch((e: unknown) => e),
      ]);
      for (const err of errors) {
        expect(err).toBeInstanceOf(AsyncJobUpdateTimeout);
        expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_UPDATE_TIMEOUT', operationId, timeoutMs: 500 });
        expect((err as Error).message).toMatch(/not refused and may still be applied/);
      }
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await client.describeOperation(operationId)).executionStatus).toBe('RUNNING');
    } finally {
      await terminate(operationId);
    }
  });

  it('result() of a terminated operation throws OperationFailedError (ASYNCJOB_ERR_WORKFLOW_FAILED)', async () => {
    const operationId = uniqueId('op');
    await start(request(operationId));
    await terminate(operationId);
    await expect(client.result(operationId)).rejects.toMatchObject({
      code: 'ASYNCJOB_ERR_WORKFLOW_FAILED',
      operationId,
    });
  });

  it('listEscalated refuses an unknown reason instead of querying with it', async () => {
    await expect(client.listEscalated({ reason: 'x" OR 1=1' as never })).rejects.toBeInstanceOf(AsyncJobInputError);
  });

  it('refuses to start for a provider no worker serves, naming it, and starts nothing', async () => {
    const operationId = uniqueId('op');
    const err = await client.start({ ...request(operationId), provider: uniqueId('nobody') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderUnservedError);
    expect((err as ProviderUnservedError).code).toBe('ASYNCJOB_ERR_PROVIDER_UNSERVED');
    expect((err as ProviderUnservedError).message).toMatch(
      /no worker serves provider nobody-.*--allow-unserved-provider/,
    );
    await expect(client.describeOperation(operationId)).rejects.toBeInstanceOf(OperationNotFoundError);
  });

  it('a join with other settings is refused naming every differing field; the same settings join, durations counted from the creation', async () => {
    const operationId = uniqueId('op');
    const original = { ...request(operationId), policy: { maxStatusRequests: 30 } };
    const first = await start(original);
    try {
      const changed = {
        ...original,
        startedBy: 'svc:other',
        resultDeadline: { afterMs: 7_200_000 },
        policy: { maxStatusRequests: 31, baseDelayMs: 1_000 },
      };
      const err = await start(changed).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JoinMismatchError);
      expect((err as JoinMismatchError).code).toBe('ASYNCJOB_ERR_JOIN_MISMATCH');
      expect((err as JoinMismatchError).differences.map((d) => d.field)).toEqual([
        'startedBy',
        'resultDeadline',
        'policy.baseDelayMs',
        'policy.maxStatusRequests',
      ]);
      expect((err as JoinMismatchError).message).toContain(
        'resultDeadline is {"afterMs":3600000}, given {"afterMs":7200000}',
      );
      // The same request later, and its deadline given as the instant it resolved to: the same operation.
      const created = Date.parse((await client.describeOperation(operationId)).startedAt);
      const same = await start({ ...original, resultDeadline: { atMs: created + 3_600_000 } });
      expect(same).toMatchObject({ joined: true, runId: first.runId, traceId: first.traceId });
      // The policy as the defaults fill it in is the same policy.
      expect((await start({ ...original, policy: { maxStatusRequests: 30, baseDelayMs: 5_000 } })).joined).toBe(true);
    } finally {
      await terminate(operationId);
    }
  });

  it('result() and watch() are bounded: timeoutMs gives AsyncJobWaitTimeout, an AbortSignal gives AsyncJobAborted (AbortError)', async () => {
    const operationId = uniqueId('op');
    await start(request(operationId));
    try {
      const started = Date.now();
      const timedOut = await client.result(operationId, { timeoutMs: 300 }).catch((e: unknown) => e);
      expect(timedOut).toBeInstanceOf(AsyncJobWaitTimeout);
      expect(Date.now() - started).toBeLessThan(5_000);
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('caller gave up')), 200);
      const aborted = await client.result(operationId, { signal: controller.signal }).catch((e: unknown) => e);
      expect(aborted).toBeInstanceOf(AsyncJobAborted);
      expect(aborted).toMatchObject({ name: 'AbortError', code: 'ASYNCJOB_ERR_ABORTED' });
      const watching = client.watch(operationId, { signal: AbortSignal.abort() });
      await expect(watching.next()).rejects.toBeInstanceOf(AsyncJobAborted);
      expect((await client.describeOperation(operationId)).executionStatus).toBe('RUNNING');
    } finally {
      await terminate(operationId);
    }
  });

  it("a query no worker answers is AsyncJobQueryTimeout whichever answer comes first (our deadline, a cancelled call, the server's own timeout)", async () => {
    const operationId = uniqueId('op');
    await start(request(operationId));
    try {
      // Our deadline before, around and after the server's own query timeout (about 30 s here).
      const limits = [200, 3_000, 25_000, 29_900, 30_100, 33_000];
      const errors = await Promise.all(
        limits.map((timeoutMs) => client.get(operationId, { timeoutMs }).catch((e: unknown) => e)),
      );
      for (const err of errors) {
        expect(err).toBeInstanceOf(AsyncJobQueryTimeout);
        expect(err).toBeInstanceOf(AsyncJobError);
      }
    } finally {
      await terminate(operationId);
    }
  }, 60_000);

  it('a query on a queue whose worker has gone is AsyncJobQueryTimeout, before and after the server stops waiting for one', async () => {
    // A worker polls the queue for a moment and goes; the operation is started after it went, so nobody runs it.
    const queue = uniqueId('gone-worker');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: queue,
      workflowBundle: await workflowBundle(),
      activities: {},
    });
    const running = worker.run();
    await new Promise((r) => setTimeout(r, 1_000));
    worker.shutdown();
    await running;
    const gone = new AsyncJobClient({ client: env.client, taskQueue: queue });
    const operationId = uniqueId('op');
    await gone.start(request(operationId), { allowUnservedProvider: true });
    try {
      // At first the server waits for a worker (our deadline or its own ends the query); some 20 s after the last
      // poll it answers at once that no poller was seen. Either way: AsyncJobQueryTimeout.
      const soon = await Promise.all(
        [300, 5_000].map((timeoutMs) => gone.get(operationId, { timeoutMs }).catch((e: unknown) => e)),
      );
      await new Promise((r) => setTimeout(r, 22_000));
      const later = await Promise.all(
        [300, 5_000].map((timeoutMs) => gone.get(operationId, { timeoutMs }).catch((e: unknown) => e)),
      );
      for (const err of [...soon, ...later]) expect(err).toBeInstanceOf(AsyncJobQueryTimeout);
    } finally {
      await terminate(operationId);
    }
  }, 90_000);

  it('an unreachable server (connection refused) is AsyncJobConnectionError for every kind of call', async () => {
    const connection = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 300 });
    const offline = new AsyncJobClient({ client: new Client({ connection }), taskQueue });
    try {
      const calls: Record<string, Promise<unknown>> = {
        describeOperation: failureOf(offline.describeOperation('op-x')),
        get: failureOf(offline.get('op-x', { timeoutMs: 500 })),
        history: failureOf(offline.history('op-x', { timeoutMs: 500 })),
        cancel: failureOf(offline.cancel('op-x', { requestedBy: 'a', reason: 'r' }, { acceptTimeoutMs: 500 })),
        decide: failureOf(
          offline.decide('op-x', { option: 'close', approvedBy: 'a', reason: 'r' }, { acceptTimeoutMs: 500 }),
        ),
        signalWebhook: failureOf(offline.signalWebhook('op-x', { eventId: 'evt-1' })),
        list: failureOf(offline.list()),
        listEscalated: failureOf(offline.listEscalated()),
        start: failureOf(offline.start(request(uniqueId('op')), { allowUnservedProvider: true })),
        result: failureOf(offline.result('op-x')),
        watch: failureOf(offline.watch('op-x').next()),
      };
      for (const [name, pending] of Object.entries(calls)) {
        const err = await pending;
        expect(err, name).toBeInstanceOf(AsyncJobConnectionError);
        expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_CONNECTION', address: '127.0.0.1:1' });
      }
    } finally {
      await connection.close();
    }
  }, 60_000);

  it('a server that goes away mid-call is AsyncJobConnectionError, for a query and an update alike', async () => {
    const operationId = uniqueId('op');
    await start(request(operationId));
    const proxy = await tcpProxy(inject('temporalAddress'));
    // No retry interceptor: a retry the SDK schedules for the dead address and runs after the connection is closed
    // throws "Channel has been shut down" from its timer, outside any call (an uncaught error of the test run).
    const connection = await Connection.connect({ address: proxy.address, connectTimeout: 2_000, interceptors: [] });
    const through = new AsyncJobClient({
      client: new Client({ connection, namespace: env.client.options.namespace }),
      taskQueue,
    });
    try {
      const sent = proxy.nextRequestBytes();
      const calls = [
        through.get(operationId, { timeoutMs: 3_000 }).catch((e: unknown) => e),
        through
          .cancel(operationId, { requestedBy: 'bob', reason: 'not needed' }, { acceptTimeoutMs: 3_000 })
          .catch((e: unknown) => e),
      ];
      // Both calls are on their way to the server, which holds them (no worker): the server goes away now.
      await sent;
      proxy.stop();
      for (const err of await Promise.all(calls)) {
        expect(err).toBeInstanceOf(AsyncJobConnectionError);
        expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_CONNECTION', address: proxy.address });
      }
      expect((await client.describeOperation(operationId)).executionStatus).toBe('RUNNING');
    } finally {
      proxy.stop();
      await connection.close();
      await terminate(operationId);
    }
  }, 60_000);
});

/**
 * A TCP proxy to the dev server that can be stopped mid-call: its listener closes (a reconnection is refused) and
 * every connection through it is cut, as when the server stops.
 */
async function tcpProxy(target: string): Promise<{
  address: string;
  nextRequestBytes: () => Promise<void>;
  stop: () => void;
}> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  let onRequestBytes: (() => void) | undefined;
  const server = net.createServer((downstream) => {
    const upstream = net.connect(port, host);
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    downstream.on('data', () => onRequestBytes?.());
    downstream.pipe(upstream);
    upstream.pipe(downstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: listening } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${listening}`,
    nextRequestBytes: () => new Promise<void>((resolve) => (onRequestBytes = resolve)),
    stop: () => {
      server.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}
