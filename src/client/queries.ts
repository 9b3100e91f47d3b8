/**
 * Queries of an operation's record. A query is answered by a worker; when the workflow failed before it could
 * register its handlers (a start request it refused), the caller learns why it failed, never the SDK's
 * "did not register a handler".
 */
import { QueryNotRegisteredError } from '@temporalio/client';
import { type ClientContext, query } from './context';
import { describeRaw, workflowFailure } from './describe';
import { AsyncJobServerError, OperationFailedError } from './errors';

/** Runs a query of the operation; see the module comment. Errors are typed (`context.ts`). */
export async function queryOperation<T>(
  ctx: ClientContext,
  operationId: string,
  timeoutMs: number,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await query(ctx, operationId, timeoutMs, fn);
  } catch (err) {
    if (err instanceof AsyncJobServerError && err.cause instanceof QueryNotRegisteredError) {
      const d = await describeRaw(ctx, operationId);
      const failure = await workflowFailure(ctx, operationId, d.runId, d.status.name);
      if (failure) throw new OperationFailedError(operationId, failure.message, { cause: err, failure });
    }
    throw err;
  }
}
