/**
 * Every error a call to Temporal can end with, as one of the client's typed errors (src/client/errors.ts), so a
 * caller matches on `code` and never on an SDK class or a gRPC status. The one table every call of the client goes
 * through (`context.ts`). Which answer the server gives first to a query or an update no worker takes (our
 * deadline, its own, a cancelled call, "no poller seen for task queue recently", a dropped connection) does not
 * change the error the caller sees.
 *
 * The shapes, as @temporalio/client 1.24 throws them: its own classes (WorkflowNotFoundError for NOT_FOUND,
 * NamespaceNotFoundError, QueryNotRegisteredError for a query's INVALID_ARGUMENT, QueryRejectedError,
 * WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError for an update's DEADLINE_EXCEEDED or
 * CANCELLED, WorkflowFailedError), a `ServiceError` whose `cause` is grpc-js's error (`code`, `details`,
 * `metadata`) for any other status, and grpc-js's error itself from direct `workflowService` calls.
 */
import {
  CancelledFailure,
  isGrpcServiceError,
  NamespaceNotFoundError,
  QueryNotRegisteredError,
  QueryRejectedError,
  ServiceError,
  TerminatedFailure,
  TimeoutFailure,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import {
  AsyncJobConnectionError,
  AsyncJobError,
  AsyncJobQueryTimeout,
  AsyncJobRequestRefused,
  AsyncJobServerError,
  AsyncJobUpdateTimeout,
  OperationFailedError,
  OperationNotFoundError,
  type WorkflowFailure,
} from './errors';
import { updateRefusal } from './refusal';

/** The gRPC status codes the client tells apart (grpc-js `status`). */
const GRPC = {
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** What the failed call was. A query is answered by a worker, and so is an update until it is accepted. */
type CallKind = 'call' | 'query' | 'update';

/** The call that failed, for the error it becomes. */
export interface CallContext {
  operationId: string;
  /** The server's address, for connection errors. */
  address: string;
  kind: CallKind;
  /** The time a worker had to answer (a query, an update's acceptance). */
  timeoutMs?: number;
}

/** A gRPC status found in an error or its causes. */
interface GrpcStatus {
  code: number;
  details: string;
}

/** The first gRPC status in the error or its causes (grpc-js's error, or the SDK's QueryNotRegisteredError), or null. */
function grpcStatusOf(err: unknown): GrpcStatus | null {
  for (
    let e: unknown = err, depth = 0;
    e !== undefined && e !== null && depth < 6;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (isGrpcServiceError(e)) return { code: e.code, details: e.details ?? '' };
    if (e instanceof QueryNotRegisteredError) return { code: Number(e.code), details: e.message };
  }
  return null;
}

function messageOf(err: unknown, status: GrpcStatus | null): string {
  const own = err instanceof Error ? err.message : String(err);
  return status && status.details.length > 0 && !own.includes(status.details) ? `${own}: ${status.details}` : own;
}

/**
 * True when a DEADLINE_EXCEEDED came after the call reached the server: grpc-js then names the server's address
 * (`remote_addr=`), and a status the server sent itself has its own text. grpc-js's own expiry before any server
 * was reached reads `Deadline exceeded ...` without an address (resolving-call.js, load-balancing-call.js).
 */
function deadlineReachedServer(details: string): boolean {
  return /remote_addr=/.test(details) || !/^deadline exceeded/i.test(details);
}

/**
 * True for grpc-js's INTERNAL statuses of a broken stream (the server went away mid-call); the SDK's retry
 * interceptor treats the same texts as transient (grpc-retry.js `isRetryableError`).
 */
function brokenStream(status: GrpcStatus): boolean {
  return status.code === GRPC.INTERNAL && /RST_STREAM|Call ended without gRPC status/i.test(status.details);
}

/** The error of a query or an update that no worker took in time; `detail` is the server's own reason. */
export function noWorkerAnswer(err: unknown, ctx: CallContext, detail?: string): AsyncJobError {
  const options = { cause: err, ...(detail !== undefined && detail.length > 0 ? { detail } : {}) };
  return ctx.kind === 'update'
    ? new AsyncJobUpdateTimeout(ctx.operationId, ctx.timeoutMs ?? 0, options)
    : new AsyncJobQueryTimeout(ctx.operationId, ctx.timeoutMs ?? 0, options);
}

/**
 * True when the failure cannot tell a server that was never reached from a worker that never answered
 * (a deadline before any address was named, an unavailable or dropped connection): asking the server decides.
 */
export function reachabilityUnknown(err: unknown): boolean {
  const status = grpcStatusOf(err);
  return status !== null && (status.code === GRPC.DEADLINE_EXCEEDED || status.code === GRPC.UNAVAILABLE);
}

/** True for the server's NOT_FOUND, which a raw call (not the SDK's own) leaves untold: namespace or workflow. */
export function notFound(err: unknown): boolean {
  return grpcStatusOf(err)?.code === GRPC.NOT_FOUND;
}

/**
 * True when the server refused the call for load (RESOURCE_EXHAUSTED): a limit of the namespace, such as its
 * concurrent long polls (`frontend.namespaceCount`, 1,200 per frontend by default), or its request rate.
 */
export function serverBusy(err: unknown): boolean {
  return grpcStatusOf(err)?.code === GRPC.RESOURCE_EXHAUSTED;
}

/** Temporal's execution status of a run that ended with this failure (as the SDK's `result()` builds them). */
function executionStatusOf(err: WorkflowFailedError): string {
  if (err.cause instanceof TerminatedFailure) return 'TERMINATED';
  if (err.cause instanceof TimeoutFailure) return 'TIMED_OUT';
  if (err.cause instanceof CancelledFailure) return 'CANCELLED';
  return 'FAILED';
}

/** The type of the first failure in the chain that has one (our stable code, when the failure is ours). */
function failureType(err: unknown): string | null {
  for (
    let e: unknown = err, depth = 0;
    e !== undefined && e !== null && depth < 6;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && type.length > 0) return type;
  }
  return null;
}

/** Why a run closed without a summary, from the SDK's WorkflowFailedError; `executionStatus` as Temporal gives it. */
export function workflowFailureOf(err: WorkflowFailedError, executionStatus = executionStatusOf(err)): WorkflowFailure {
  return { executionStatus, type: failureType(err.cause), message: err.cause?.message || err.message };
}

/** The server answered a query or an update in a way that means no worker took it (see {@link translateError}). */
function unanswered(status: GrpcStatus, ctx: CallContext): boolean {
  if (ctx.kind === 'call') return false;
  if (status.code === GRPC.DEADLINE_EXCEEDED) return deadlineReachedServer(status.details);
  // CANCELLED: the server gave up on the call (a caller's own abort ends a wait before it gets here).
  // FAILED_PRECONDITION on a query: no poller seen recently, or the workflow task not scheduled yet.
  return status.code === GRPC.CANCELLED || (ctx.kind === 'query' && status.code === GRPC.FAILED_PRECONDITION);
}

/** The typed error of a gRPC status (the SDK's wrapper is kept as the cause). */
function fromStatus(err: unknown, status: GrpcStatus, ctx: CallContext): AsyncJobError {
  const connection = (): AsyncJobConnectionError => new AsyncJobConnectionError(ctx.address, { cause: err });
  if (status.code === GRPC.NOT_FOUND) return new OperationNotFoundError(ctx.operationId);
  if (status.code === GRPC.UNAUTHENTICATED || status.code === GRPC.PERMISSION_DENIED) return connection();
  if (unanswered(status, ctx))
    return noWorkerAnswer(err, ctx, status.code === GRPC.FAILED_PRECONDITION ? status.details : undefined);
  if (status.code === GRPC.UNAVAILABLE || brokenStream(status)) return connection();
  if (status.code === GRPC.DEADLINE_EXCEEDED && !deadlineReachedServer(status.details)) return connection();
  return new AsyncJobServerError(ctx.operationId, status.code, messageOf(err, status), { cause: err });
}

/**
 * Maps an error of the SDK or the server to a typed client error. Pure: a deadline or a dropped connection that
 * cannot tell an unreachable server from a silent worker is a connection error here, and the caller that can ask
 * the server (`context.ts`) turns it into {@link noWorkerAnswer} when the server answers. Errors that are already
 * ours pass through; anything that is neither ours nor the SDK's (a bug) passes through too.
 *
 * | shape | typed error |
 * |---|---|
 * | WorkflowUpdateFailedError | AsyncJobRequestRefused, the code from the failure's `type` (`refusal.ts`) |
 * | WorkflowFailedError | OperationFailedError with the failure |
 * | WorkflowNotFoundError, NOT_FOUND | OperationNotFoundError |
 * | NamespaceNotFoundError, UNAUTHENTICATED, PERMISSION_DENIED, UNAVAILABLE, a broken stream | AsyncJobConnectionError |
 * | query or update: DEADLINE_EXCEEDED at the server, CANCELLED; query: FAILED_PRECONDITION | AsyncJobQueryTimeout / AsyncJobUpdateTimeout |
 * | DEADLINE_EXCEEDED before any server was reached | AsyncJobConnectionError |
 * | update: its RPC cancelled without a status (CancelledFailure) | AsyncJobUpdateTimeout |
 * | any other status, QueryRejectedError, ServiceError | AsyncJobServerError with the gRPC code |
 */
export function translateError(err: unknown, ctx: CallContext): unknown {
  if (err instanceof AsyncJobError) return err;
  if (err instanceof WorkflowUpdateFailedError) {
    const refusal = updateRefusal(err);
    return new AsyncJobRequestRefused(ctx.operationId, refusal.code, refusal.message);
  }
  if (err instanceof WorkflowFailedError) {
    const failure = workflowFailureOf(err);
    return new OperationFailedError(ctx.operationId, failure.message, { cause: err, failure });
  }
  if (err instanceof WorkflowNotFoundError) return new OperationNotFoundError(ctx.operationId);
  if (err instanceof NamespaceNotFoundError) return new AsyncJobConnectionError(ctx.address, { cause: err });
  const status = grpcStatusOf(err);
  if (status !== null) return fromStatus(err, status, ctx);
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return noWorkerAnswer(err, { ...ctx, kind: 'update' });
  if (err instanceof QueryRejectedError || err instanceof ServiceError)
    return new AsyncJobServerError(ctx.operationId, null, messageOf(err, null), { cause: err });
  return err;
}
