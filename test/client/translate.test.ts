/**
 * Every error a call to Temporal can end with reaches the caller as one of the client's typed errors,
 * whichever of the server's answers comes first. The SDK's and gRPC's errors are built here as they arrive.
 */
import { status as grpcStatus, Metadata } from '@grpc/grpc-js';
import {
  ApplicationFailure,
  CancelledFailure,
  NamespaceNotFoundError,
  QueryNotRegisteredError,
  ServiceError,
  TerminatedFailure,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { RetryState } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  AsyncJobError,
  AsyncJobConnectionError,
  AsyncJobInputError,
  AsyncJobQueryTimeout,
  AsyncJobServerError,
  AsyncJobUpdateTimeout,
  OperationFailedError,
  OperationNotFoundError,
} from '../../src/client';
import { translateError } from '../../src/client/translate';

/** A gRPC error as grpc-js gives it, wrapped in the SDK's ServiceError as the SDK throws it. */
function grpc(code: number, details: string): ServiceError {
  const inner = Object.assign(new Error(`${code} ${details}`), { code, details, metadata: new Metadata() });
  return new ServiceError('Failed to query Workflow', { cause: inner });
}

const query = { operationId: 'op-1', address: '127.0.0.1:7233', kind: 'query' as const, timeoutMs: 5_000 };
const call = { ...query, kind: 'call' as const };

describe('translateError', () => {
  it.each([
    [
      'our deadline, after the call reached the server',
      grpc(grpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.299s,LB pick: 0.001s,remote_addr=127.0.0.1:7233'),
    ],
    ['a call cancelled on the way', grpc(grpcStatus.CANCELLED, 'Call cancelled')],
    [
      "the server's own query timeout",
      grpc(grpcStatus.DEADLINE_EXCEEDED, 'query timed out before a worker could process it'),
    ],
    [
      "the server's answer when no worker polled lately",
      grpc(grpcStatus.FAILED_PRECONDITION, 'no poller seen for task queue recently, worker may be down'),
    ],
  ])('a query no worker answers is AsyncJobQueryTimeout: %s', (_label, err) => {
    const typed = translateError(err, query);
    expect(typed).toBeInstanceOf(AsyncJobQueryTimeout);
    expect(typed).toMatchObject({ code: 'ASYNCJOB_ERR_QUERY_TIMEOUT', timeoutMs: 5_000, operationId: 'op-1' });
    expect((typed as Error).message).toMatch(/^operation op-1: no worker answered /);
  });

  it.each([
    ['unavailable', grpc(grpcStatus.UNAVAILABLE, 'No connection established. Last error: connect ECONNREFUSED')],
    [
      'a deadline before any server was reached',
      grpc(grpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.000s,waiting for metadata filters'),
    ],
    ['unauthenticated', grpc(grpcStatus.UNAUTHENTICATED, 'bad API key')],
    ['permission denied', grpc(grpcStatus.PERMISSION_DENIED, 'not allowed')],
    ['an unknown namespace', new NamespaceNotFoundError('nope')],
  ])('a server that cannot be reached as ourselves is AsyncJobConnectionError: %s', (_label, err) => {
    for (const ctx of [query, call]) expect(translateError(err, ctx)).toBeInstanceOf(AsyncJobConnectionError);
  });

  it('a missing workflow is OperationNotFoundError, however the SDK says it', () => {
    expect(translateError(new WorkflowNotFoundError('workflow not found', 'op-1', undefined), call)).toBeInstanceOf(
      OperationNotFoundError,
    );
    expect(translateError(grpc(grpcStatus.NOT_FOUND, 'workflow not found for ID: op-1'), call)).toBeInstanceOf(
      OperationNotFoundError,
    );
  });

  it('any other answer of the server is AsyncJobServerError with its gRPC code; nothing of the SDK passes through', () => {
    const typed = translateError(grpc(grpcStatus.RESOURCE_EXHAUSTED, 'namespace rate limit exceeded'), call);
    expect(typed).toBeInstanceOf(AsyncJobServerError);
    expect(typed).toMatchObject({ code: 'ASYNCJOB_ERR_SERVER', grpcCode: grpcStatus.RESOURCE_EXHAUSTED });
    expect((typed as Error).message).toContain('namespace rate limit exceeded');
    expect(
      translateError(
        new QueryNotRegisteredError('Workflow did not register a handler for state', grpcStatus.INVALID_ARGUMENT),
        query,
      ),
    ).toBeInstanceOf(AsyncJobServerError);
    expect(
      translateError(grpc(grpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded after 3s,remote_addr=127.0.0.1:7233'), call),
    ).toBeInstanceOf(AsyncJobServerError);
  });

  it('an update the SDK gave up on without a gRPC status (a CancelledFailure) is AsyncJobUpdateTimeout', () => {
    const err = new WorkflowUpdateRPCTimeoutOrCancelledError('Workflow update call timeout or cancelled', {
      cause: new CancelledFailure('cancelled'),
    });
    expect(translateError(err, { ...call, kind: 'update' })).toBeInstanceOf(AsyncJobUpdateTimeout);
  });

  it.each([
    ['TERMINATED', new TerminatedFailure('test cleanup'), null, 'test cleanup'],
    [
      'FAILED',
      ApplicationFailure.create({ type: 'ASYNCJOB_ERR_INVALID_INPUT', message: 'provider: bad' }),
      'ASYNCJOB_ERR_INVALID_INPUT',
      'provider: bad',
    ],
  ])('a workflow that closed %s is OperationFailedError with its failure', (executionStatus, cause, type, message) => {
    const typed = translateError(
      new WorkflowFailedError('Workflow execution failed', cause, RetryState.NON_RETRYABLE_FAILURE),
      call,
    );
    expect(typed).toBeInstanceOf(OperationFailedError);
    expect((typed as OperationFailedError).failure).toEqual({ executionStatus, type, message });
  });

  it('our own errors pass through unchanged, and so does a bug of ours', () => {
    const ours = new AsyncJobInputError([{ path: 'a', message: 'b' }]);
    expect(translateError(ours, call)).toBe(ours);
    const bug = new TypeError('x is undefined');
    expect(translateError(bug, call)).toBe(bug);
    expect(ours).toBeInstanceOf(AsyncJobError);
  });
});
