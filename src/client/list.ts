/**
 * Listing operations from Temporal's visibility store by the search attributes the workflow keeps current
 * (AsyncJobState, AsyncJobProvider, AsyncJobEscalationReason): running and closed ones, no worker needed, newest
 * first. The same queries work in the Web UI. Visibility is eventually consistent (a second or so behind).
 */
import { escalationReasonSchema, type EscalationReason, localStateSchema, type LocalState } from '../core/journal';
import { idPattern, ID_RULE } from '../core/operation';
import { escalationReasonKey, providerJobIdKey, providerKey, stateKey } from '../workflows/search-attributes';
import { call, type ClientContext, WORKFLOW_TYPE } from './context';
import { AsyncJobInputError, type InputIssue } from './errors';

/** Filters of {@link listOperations}; all given ones must match. */
export interface ListOptions {
  /** The local state (`escalated`, `observing`, `succeeded`, ...). */
  state?: LocalState;
  /** The provider's name. */
  provider?: string;
  /** The open escalation's reason (so: escalated operations). */
  reason?: EscalationReason;
  /** At most this many (default 100, at most 10 000). */
  limit?: number;
}

/** An operation as the visibility store lists it. */
export interface OperationListing {
  operationId: string;
  /** The local state last published (search attribute). */
  state: LocalState | null;
  reason: EscalationReason | null;
  provider: string | null;
  jobId: string | null;
  /** Temporal's execution status: `RUNNING` while the operation can still change. */
  executionStatus: string;
  startedAt: string;
}

/** Options for {@link listEscalated}. */
export interface ListEscalatedOptions {
  reason?: EscalationReason;
  /** At most this many (default 100). */
  limit?: number;
}

/** An escalated operation as the visibility store lists it (search attributes, so closed ones are listed too). */
export interface EscalatedOperation {
  operationId: string;
  reason: EscalationReason | null;
  provider: string | null;
  jobId: string | null;
  /** Temporal's execution status: `RUNNING` while a decision can still arrive. */
  executionStatus: string;
}

/** Checks the filters (closed enums and the ID grammar: nothing else reaches the query text). */
function filterIssues(options: ListOptions): InputIssue[] {
  const issues: InputIssue[] = [];
  if (options.state !== undefined && !localStateSchema.safeParse(options.state).success)
    issues.push({ path: 'state', message: `must be one of ${localStateSchema.options.join(', ')}` });
  if (options.provider !== undefined && !idPattern().test(options.provider))
    issues.push({ path: 'provider', message: `must match ${ID_RULE}` });
  if (options.reason !== undefined && !escalationReasonSchema.safeParse(options.reason).success) {
    issues.push({ path: 'reason', message: `must be one of ${escalationReasonSchema.options.join(', ')}` });
  }
  const limit = options.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    issues.push({ path: 'limit', message: 'must be an integer from 1 to 10000' });
  return issues;
}

/** The visibility query of the filters: `WorkflowType = "AsyncJobWorkflow" AND AsyncJobState = "escalated" ...`. */
export function listQuery(options: ListOptions): string {
  return [
    `WorkflowType = "${WORKFLOW_TYPE}"`,
    ...(options.state !== undefined ? [`${stateKey.name} = "${options.state}"`] : []),
    ...(options.provider !== undefined ? [`${providerKey.name} = "${options.provider}"`] : []),
    ...(options.reason !== undefined ? [`${escalationReasonKey.name} = "${options.reason}"`] : []),
  ].join(' AND ');
}

/** Lists operations by state, provider and escalation reason (see the module comment). */
export async function listOperations(ctx: ClientContext, options: ListOptions = {}): Promise<OperationListing[]> {
  const issues = filterIssues(options);
  if (issues.length > 0) throw new AsyncJobInputError(issues);
  const limit = options.limit ?? 100;
  return call(ctx, '(list)', async () => {
    const out: OperationListing[] = [];
    for await (const info of ctx.client.workflow.list({ query: listQuery(options), pageSize: Math.min(limit, 1000) })) {
      const sa = info.typedSearchAttributes;
      out.push({
        operationId: info.workflowId,
        state: (sa.get(stateKey) as LocalState | undefined) ?? null,
        reason: (sa.get(escalationReasonKey) as EscalationReason | undefined) ?? null,
        provider: sa.get(providerKey) ?? null,
        jobId: sa.get(providerJobIdKey) ?? null,
        executionStatus: info.status.name,
        startedAt: info.startTime.toISOString(),
      });
      if (out.length >= limit) break;
    }
    return out;
  });
}

/** Lists escalated operations (`AsyncJobState = "escalated"`, optionally one reason), newest first. */
export async function listEscalated(
  ctx: ClientContext,
  options: ListEscalatedOptions = {},
): Promise<EscalatedOperation[]> {
  const listed = await listOperations(ctx, { state: 'escalated', ...options });
  return listed.map(({ operationId, reason, provider, jobId, executionStatus }) => ({
    operationId,
    reason,
    provider,
    jobId,
    executionStatus,
  }));
}
