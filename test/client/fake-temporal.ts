/**
 * A Temporal client whose gRPC service answers what a test tells it, so the real @temporalio/client 1.24 code turns
 * each answer into the error it throws (ServiceError, WorkflowNotFoundError, QueryNotRegisteredError,
 * WorkflowUpdateRPCTimeoutOrCancelledError, ...) exactly as it does against a server. The gRPC errors are built
 * by grpc-js's own `callErrorFromStatus`, the function that builds them for a real call.
 */
import { Metadata } from '@grpc/grpc-js';
import { callErrorFromStatus } from '@grpc/grpc-js/build/src/call';
import { Client, type ConnectionLike } from '@temporalio/client';
import Long from 'long';
import { AsyncJobClient } from '../../src/client';
import type { StartRequest } from '../../src/core/operation';

/** A gRPC error exactly as grpc-js gives it for a call that ended with this status. */
export function grpcError(code: number, details: string): Error {
  return callErrorFromStatus({ code, details, metadata: new Metadata() }, '');
}

/** What one gRPC method of the fake answers: a value, or an error to reject with. */
export type Answer = { value: unknown } | { error: unknown };

/** The answers of the fake server: per method (`queryWorkflow`, `getSystemInfo`, ...), else `otherwise`. */
export interface FakeServer {
  methods?: Partial<Record<string, () => Answer>>;
  otherwise: () => Answer;
}

/** A valid start request for `operationId` (provider `rest`), as the fake-server tests send it. */
export function startRequest(operationId: string): StartRequest {
  return {
    operationId,
    provider: 'rest',
    payload: { n: 1 },
    startedBy: 'svc:test',
    authorisedBy: 'alice',
    createDeadline: { afterMs: 60_000 },
    resultDeadline: { afterMs: 3_600_000 },
  };
}

/** A running operation as DescribeWorkflowExecution answers it (the fields the SDK reads). */
export function runningDescription(operationId: string): Answer {
  return {
    value: {
      workflowExecutionInfo: {
        execution: { workflowId: operationId, runId: 'run-1' },
        type: { name: 'AsyncJobWorkflow' },
        taskQueue: 'asyncjob',
        status: 1,
        historyLength: Long.fromNumber(3),
        startTime: { seconds: Long.fromNumber(1_800_000_000), nanos: 0 },
      },
    },
  };
}

/** A workflow service whose every method answers as `server` says. */
function fakeService(server: FakeServer): ConnectionLike['workflowService'] {
  return new Proxy({} as ConnectionLike['workflowService'], {
    get(_target, method) {
      if (typeof method !== 'string' || method === 'then') return undefined;
      return async () => {
        const answer = (server.methods?.[method] ?? server.otherwise)();
        if ('error' in answer) throw answer.error;
        return answer.value;
      };
    },
  });
}

/** An AsyncJobClient on the fake server. Deadlines and abort signals are the caller's business: they only run `fn`. */
export function clientOn(server: FakeServer): AsyncJobClient {
  const connection: ConnectionLike = {
    workflowService: fakeService(server),
    operatorService: {} as ConnectionLike['operatorService'],
    plugins: [],
    close: async () => {},
    ensureConnected: async () => {},
    withDeadline: (_deadline, fn) => fn(),
    withMetadata: (_metadata, fn) => fn(),
    withAbortSignal: (_signal, fn) => fn(),
  };
  return new AsyncJobClient({ client: new Client({ connection }), taskQueue: 'asyncjob' });
}
