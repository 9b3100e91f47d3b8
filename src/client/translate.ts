/**
 * Every error a call to Temporal can end with, as one of the client's typed errors (src/client/errors.ts), so a
 * caller matches on `code` and never on an SDK class or a gRPC status. Which answer the server gives first to a
 * query no worker takes (a deadline of ours, its own query timeout, a cancelled call, "no poller seen for task
 * queue recently") does not change the error the caller sees.
 */
import {
  isGrpcServiceError,
  NamespaceNotFoundError,
  QueryNotRegisteredError,
  QueryRejectedError,
  ServiceError,
  WorkflowNotFoundError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import {
  AsyncJobClientError,
  AsyncJobConnectionError,
  AsyncJobQueryTimeout,
  AsyncJobServerError,
  OperationNotFoundError,
} from './errors';

/** The gRPC status codes the client tells apart. */
export const GRPC = {
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  FAILED_PRECONDITION: 9,
  PERMISSION_DENIED: 7,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** gRPC status codes that mean "we could not talk to the server as ourselves". */
const CONNECTION_CODES: ReadonlySet<number> = new Set([GRPC.UNAVAILABLE, GRPC.UNAUTHENTICATED, GRPC.PERMISSION_DENIED]);

/** What the failed call was: a query is answered by a worker, so its timeouts mean "no worker answered". */
export interface CallContext {
  operationId: string;
  /** The server's address, for connection errors. */
  address: string;
  kind: 'call' | 'query';
  /** The query's time limit (for {@link AsyncJobQueryTimeout}). */
  timeoutMs?: number;
}

/** The first gRPC status code in the error or its causes, or null. */
export function grpcCodeOf(err: unknown): number | null {
  for (
    let e: unknown = err, depth = 0;
    e !== undefined && e !== null && depth < 6;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (isGrpcServiceError(e)) return e.code;
  }
  return null;
}

function messageOf(err: unknown): string {
  const details = (err as { cause?: { details?: unknown } } | null)?.cause?.details;
  const own = err instanceof Error ? err.message : String(err);
  return typeof details === 'string' && details.length > 0 ? `${own}: ${details}` : own;
}

/** The gRPC details of the error or its causes ('' when none). */
function grpcDetails(err: unknown): string {
  for (
    let e: unknown = err, depth = 0;
    e !== undefined && e !== null && depth < 6;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (isGrpcServiceError(e)) return e.details ?? '';
  }
  return '';
}

/**
 * True for what a query ends with when no worker answers in time, whichever side gave up first: the server's own
 * query timeout, a call it cancelled, or our deadline after the call reached the server (grpc-js names the
 * server's address then; a deadline before any server was reached is a connection problem).
 */
function isQueryTimeout(err: unknown, code: number | null): boolean {
  if (/query timed out/i.test(messageOf(err)) || code === GRPC.CANCELLED) return true;
  return code === GRPC.DEADLINE_EXCEEDED && /remote_addr=/.test(grpcDetails(err));
}

/**
 * Maps an error of the SDK or the server to a typed client error. Errors that are already ours pass through;
 * anything that is neither ours nor the server's (a bug) passes through too.
 */
export function translateError(err: unknown, ctx: CallContext): unknown {
  if (err instanceof AsyncJobClientError) return err;
  if (err instanceof WorkflowNotFoundError) return new OperationNotFoundError(ctx.operationId);
  if (err instanceof NamespaceNotFoundError) return new AsyncJobConnectionError(ctx.address, { cause: err });
  const code = grpcCodeOf(err);
  if (code !== null && CONNECTION_CODES.has(code)) return new AsyncJobConnectionError(ctx.address, { cause: err });
  if (ctx.kind === 'query' && isQueryTimeout(err, code))
    return new AsyncJobQueryTimeout(ctx.operationId, ctx.timeoutMs ?? 0, { cause: err });
  // The server's answer when no worker polled the queue lately: at once, instead of waiting for one.
  if (ctx.kind === 'query' && code === GRPC.FAILED_PRECONDITION && /no poller/i.test(grpcDetails(err))) {
    return new AsyncJobQueryTimeout(ctx.operationId, ctx.timeoutMs ?? 0, { cause: err, detail: grpcDetails(err) });
  }
  if (code === GRPC.DEADLINE_EXCEEDED && !/remote_addr=/.test(grpcDetails(err)))
    return new AsyncJobConnectionError(ctx.address, { cause: err });
  if (code === GRPC.NOT_FOUND) return new OperationNotFoundError(ctx.operationId);
  if (
    err instanceof QueryNotRegisteredError ||
    err instanceof QueryRejectedError ||
    err instanceof WorkflowUpdateRPCTimeoutOrCancelledError
  ) {
    return new AsyncJobServerError(ctx.operationId, code, messageOf(err), { cause: err });
  }
  if (code !== null || err instanceof ServiceError)
    return new AsyncJobServerError(ctx.operationId, code, messageOf(err), { cause: err });
  return err;
}
