/**
 * Every answer of the Temporal server reaches a caller of AsyncJobClient as one of our typed errors.
 * Each answer the server can give is injected under the real @temporalio/client (`fake-temporal.ts`), which wraps
 * it as it does in production; so the outcome is proven for every answer, whichever one a real server sends first.
 */
import { Metadata, status } from '@grpc/grpc-js';
import { callErrorFromStatus } from '@grpc/grpc-js/build/src/call';
import { defaultPayloadConverter } from '@temporalio/common';
import { google, temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import {
  type AsyncJobClient,
  AsyncJobError,
  AsyncJobConnectionError,
  AsyncJobQueryTimeout,
  AsyncJobServerError,
  AsyncJobUpdateTimeout,
  OperationNotFoundError,
} from '../../src/client';
import { type Answer, clientOn, grpcError, runningDescription, startRequest } from './fake-temporal';

const OPERATION = 'op-1';

/** Every call of the client that talks to the server, by name. */
const CALLS: Record<string, (client: AsyncJobClient) => Promise<unknown>> = {
  start: (client) => client.start(startRequest(OPERATION), { allowUnservedProvider: true }),
  describeOperation: (client) => client.describeOperation(OPERATION),
  get: (client) => client.get(OPERATION, { timeoutMs: 1_000 }),
  escalation: (client) => client.escalation(OPERATION, { timeoutMs: 1_000 }),
  history: (client) => client.history(OPERATION, { timeoutMs: 1_000 }),
  cancel: (client) =>
    client.cancel(OPERATION, { requestedBy: 'bob', reason: 'not needed' }, { acceptTimeoutMs: 1_000 }),
  decide: (client) =>
    client.decide(OPERATION, { option: 'close', approvedBy: 'bob', reason: 'done' }, { acceptTimeoutMs: 1_000 }),
  signalWebhook: (client) => client.signalWebhook(OPERATION, { eventId: 'evt-1' }),
  result: (client) => client.result(OPERATION, { timeoutMs: 2_000 }),
  watch: (client) => client.watch(OPERATION, { queryTimeoutMs: 1_000 }).next(),
  list: (client) => client.list(),
  listEscalated: (client) => client.listEscalated(),
};
const QUERY_CALLS = ['get', 'escalation', 'history', 'watch'];
const UPDATE_CALLS = ['cancel', 'decide'];
const OPERATION_CALLS = Object.keys(CALLS).filter((name) => !['start', 'list', 'listEscalated'].includes(name));

const fail = (error: unknown) => (): Answer => ({ error });
const answer = (value: unknown) => (): Answer => ({ value });
const systemInfo = answer({ capabilities: {} });

async function rejection(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
  } catch (err) {
    return err;
  }
  throw new Error('the call succeeded');
}

/** grpc-js's error of a NOT_FOUND that carries Temporal's NamespaceNotFoundFailure, as the server sends it. */
function namespaceNotFound(): Error {
  const failure = temporal.api.errordetails.v1.NamespaceNotFoundFailure.encode({ namespace: 'nope' }).finish();
  const details = google.rpc.Status.encode({
    code: status.NOT_FOUND,
    message: 'namespace nope not found',
    details: [
      { type_url: 'type.googleapis.com/temporal.api.errordetails.v1.NamespaceNotFoundFailure', value: failure },
    ],
  }).finish();
  const metadata = new Metadata();
  metadata.set('grpc-status-details-bin', Buffer.from(details));
  return callErrorFromStatus({ code: status.NOT_FOUND, details: 'namespace nope not found', metadata }, '');
}

describe('the server answers a query no worker takes (any of them may come first)', () => {
  it.each([
    [
      'our deadline, after the call reached the server',
      status.DEADLINE_EXCEEDED,
      'Deadline exceeded after 0.157s,time to current attempt start: 0.001s,remote_addr=127.0.0.1:7233',
    ],
    ["the server's own deadline", status.DEADLINE_EXCEEDED, 'context deadline exceeded'],
    ['our deadline between two attempts (the server answers)', status.DEADLINE_EXCEEDED, 'Deadline exceeded'],
    [
      'our deadline before a connection was picked (the server answers)',
      status.DEADLINE_EXCEEDED,
      'Deadline exceeded after 0.500s,waiting for metadata filters',
    ],
    ['a call the server cancelled', status.CANCELLED, 'Call cancelled'],
    [
      'no poller seen lately',
      status.FAILED_PRECONDITION,
      'No poller seen for task queue recently, worker may be down.',
    ],
    ['a connection that dropped while the server stays up', status.UNAVAILABLE, 'Connection dropped'],
  ])('%s: AsyncJobQueryTimeout from every query', async (_label, code, details) => {
    const client = clientOn({
      methods: {
        queryWorkflow: fail(grpcError(code, details)),
        getSystemInfo: systemInfo,
        describeWorkflowExecution: () => runningDescription(OPERATION),
        getWorkflowExecutionHistory: answer({ history: { events: [] }, nextPageToken: Buffer.from('t') }),
      },
      otherwise: fail(new Error('not asked in this test')),
    });
    for (const name of QUERY_CALLS) {
      const err = await rejection(() => CALLS[name]!(client));
      expect(err, name).toBeInstanceOf(AsyncJobQueryTimeout);
      expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_QUERY_TIMEOUT', operationId: OPERATION });
    }
  });

  it.each([
    ["the server's own deadline", status.DEADLINE_EXCEEDED, 'context deadline exceeded'],
    ['a call the server cancelled', status.CANCELLED, 'Call cancelled'],
    ['a connection that dropped while the server stays up', status.UNAVAILABLE, 'Connection dropped'],
  ])('%s, then an answer: the query is asked again within its time and answered', async (_label, code, details) => {
    let asked = 0;
    const client = clientOn({
      methods: {
        queryWorkflow: () =>
          ++asked < 3
            ? { error: grpcError(code, details) }
            : { value: { queryResult: { payloads: [defaultPayloadConverter.toPayload([])] } } },
        getSystemInfo: systemInfo,
      },
      otherwise: fail(new Error('not asked in this test')),
    });
    await expect(client.history(OPERATION, { timeoutMs: 5_000 })).resolves.toEqual([]);
    expect(asked).toBe(3);
  });

  /** A client whose every query the server answers with `error`, counting them. */
  function queriesAnswered(error: Error): { client: AsyncJobClient; asked: () => number } {
    let asked = 0;
    const client = clientOn({
      methods: { queryWorkflow: () => ((asked += 1), { error }) },
      otherwise: fail(new Error('not asked in this test')),
    });
    return { client, asked: () => asked };
  }

  it("the server's word that no worker polls is final: the query is not asked again", async () => {
    const { client, asked } = queriesAnswered(
      grpcError(status.FAILED_PRECONDITION, 'No poller seen for task queue recently.'),
    );
    const err = await rejection(() => client.history(OPERATION, { timeoutMs: 5_000 }));
    expect(err).toBeInstanceOf(AsyncJobQueryTimeout);
    expect((err as Error).message).toMatch(/No poller seen/);
    expect(asked()).toBe(1);
  });

  it('a query the server keeps ending early is AsyncJobQueryTimeout once its time is up, not sooner', async () => {
    const { client, asked } = queriesAnswered(grpcError(status.DEADLINE_EXCEEDED, 'context deadline exceeded'));
    const began = Date.now();
    const err = await rejection(() => client.history(OPERATION, { timeoutMs: 1_500 }));
    expect(err).toBeInstanceOf(AsyncJobQueryTimeout);
    // Asked again until less than a pause and the least useful wait were left, then given up.
    expect(Date.now() - began).toBeGreaterThanOrEqual(1_000);
    expect(asked()).toBeGreaterThan(3);
  });

  it('a handler the worker does not know (QueryNotRegisteredError) is AsyncJobServerError with its gRPC code', async () => {
    const client = clientOn({
      methods: {
        queryWorkflow: fail(grpcError(status.INVALID_ARGUMENT, 'Workflow did not register a handler for state')),
        describeWorkflowExecution: () => runningDescription(OPERATION),
      },
      otherwise: fail(new Error('not asked in this test')),
    });
    const err = await rejection(() => CALLS.get!(client));
    expect(err).toBeInstanceOf(AsyncJobServerError);
    expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_SERVER', grpcCode: status.INVALID_ARGUMENT });
  });
});

describe('the server answers an update no worker accepts in time', () => {
  it.each([
    [
      'our deadline, after the call reached the server',
      status.DEADLINE_EXCEEDED,
      'Deadline exceeded after 1.498s,name resolution: 0.001s,remote_addr=127.0.0.1:7233',
    ],
    ["the server's own deadline", status.DEADLINE_EXCEEDED, 'context deadline exceeded'],
    [
      'our deadline before a connection was picked (the server answers)',
      status.DEADLINE_EXCEEDED,
      'Deadline exceeded after 1.000s,waiting for metadata filters',
    ],
    ['a call the server cancelled', status.CANCELLED, 'Call cancelled'],
    ['a connection that dropped while the server stays up', status.UNAVAILABLE, 'Connection dropped'],
  ])('%s: AsyncJobUpdateTimeout, saying the request may still be applied', async (_label, code, details) => {
    const client = clientOn({
      methods: { updateWorkflowExecution: fail(grpcError(code, details)), getSystemInfo: systemInfo },
      otherwise: fail(new Error('not asked in this test')),
    });
    for (const name of UPDATE_CALLS) {
      const err = await rejection(() => CALLS[name]!(client));
      expect(err, name).toBeInstanceOf(AsyncJobUpdateTimeout);
      expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_UPDATE_TIMEOUT', operationId: OPERATION, timeoutMs: 1_000 });
      expect((err as Error).message).toMatch(/may still be applied/);
    }
  });
});

describe('a server that cannot be reached, or goes away mid-call, is AsyncJobConnectionError for every call', () => {
  it.each([
    [
      'connection refused',
      status.UNAVAILABLE,
      'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1. Resolution note: ',
    ],
    ['the server stopped mid-call', status.UNAVAILABLE, 'Connection dropped'],
    [
      'the stream broken mid-call',
      status.INTERNAL,
      'Received RST_STREAM with code 2 triggered by internal client error: read ECONNRESET',
    ],
    [
      'a deadline before any server was reached',
      status.DEADLINE_EXCEEDED,
      'Deadline exceeded after 0.000s,waiting for metadata filters',
    ],
    [
      'a deadline while waiting for a connection',
      status.DEADLINE_EXCEEDED,
      'Deadline exceeded after 3.001s,name resolution: 0.002s,Waiting for LB pick',
    ],
    ['credentials refused', status.UNAUTHENTICATED, 'invalid API key'],
    ['permission denied', status.PERMISSION_DENIED, 'Request unauthorized.'],
  ])('%s', async (_label, code, details) => {
    const client = clientOn({ otherwise: fail(grpcError(code, details)) });
    for (const name of Object.keys(CALLS)) {
      const err = await rejection(() => CALLS[name]!(client));
      expect(err, name).toBeInstanceOf(AsyncJobConnectionError);
      expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_CONNECTION' });
    }
  });

  it('an unknown namespace (NamespaceNotFoundFailure in the status details)', async () => {
    const client = clientOn({ otherwise: fail(namespaceNotFound()) });
    for (const name of Object.keys(CALLS))
      expect(await rejection(() => CALLS[name]!(client)), name).toBeInstanceOf(AsyncJobConnectionError);
  });
});

describe('an unknown operation (NOT_FOUND) is OperationNotFoundError for every call about one', () => {
  it.each(OPERATION_CALLS)('%s', async (name) => {
    const client = clientOn({
      otherwise: fail(grpcError(status.NOT_FOUND, `workflow not found for ID: ${OPERATION}`)),
    });
    const err = await rejection(() => CALLS[name]!(client));
    expect(err).toBeInstanceOf(OperationNotFoundError);
    expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_NOT_FOUND', operationId: OPERATION });
  });
});

describe('a deadline of a plain call that reached the server, and any other status', () => {
  it.each([
    [
      'a deadline after the call reached the server',
      status.DEADLINE_EXCEEDED,
      'Deadline exceeded after 5.000s,LB pick: 0.001s,remote_addr=127.0.0.1:7233',
    ],
    ['a rate limit', status.RESOURCE_EXHAUSTED, 'namespace rate limit exceeded'],
    ['an internal error of the server', status.INTERNAL, 'unexpected error'],
  ])(
    '%s: AsyncJobServerError with the gRPC code, from every call that is not answered by a worker',
    async (_label, code, details) => {
      const client = clientOn({ otherwise: fail(grpcError(code, details)) });
      // A wait's long polls refused for load are asked again, paced (`history.ts`): `result` is no such call.
      const calls = ['start', 'describeOperation', 'signalWebhook', 'list', 'listEscalated'];
      for (const name of code === status.RESOURCE_EXHAUSTED ? calls : [...calls, 'result']) {
        const err = await rejection(() => CALLS[name]!(client));
        expect(err, name).toBeInstanceOf(AsyncJobServerError);
        expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_SERVER', grpcCode: code });
        expect((err as Error).message).toContain(details);
      }
    },
  );
});

describe('no SDK error passes through, whatever the status', () => {
  const codes = Object.values(status).filter((code): code is number => typeof code === 'number' && code !== 0);
  it.each(codes)('gRPC status %i, the server up or down, from every call', async (code) => {
    for (const serverUp of [true, false]) {
      const client = clientOn({
        methods: serverUp ? { getSystemInfo: systemInfo } : {},
        otherwise: fail(grpcError(code, `status ${code}`)),
      });
      for (const name of Object.keys(CALLS)) {
        const err = await rejection(() => CALLS[name]!(client));
        expect(err, `${name}, server ${serverUp ? 'up' : 'down'}`).toBeInstanceOf(AsyncJobError);
      }
    }
  });
});
