/**
 * An operation as Temporal itself describes it (execution status, search attributes, memo) and, for a workflow
 * that closed without a summary, why: no query, so no worker is needed and closed operations are described too.
 */
import { WorkflowFailedError, type WorkflowExecutionDescription } from '@temporalio/client';
import type { EscalationReason, LocalState } from '../core/journal';
import {
  escalationReasonKey,
  providerJobIdKey,
  providerKey,
  resultDeadlineKey,
  stateKey,
} from '../workflows/search-attributes';
import { call, type ClientContext, workflowHandle } from './context';
import type { WorkflowFailure } from './errors';
import { workflowFailureOf } from './translate';

/** Temporal's execution statuses of a workflow that closed without a summary. */
export const FAILED_EXECUTION_STATUSES: readonly string[] = ['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED'];

/** An operation as Temporal describes it: no query, so it works without a worker and for closed ones. */
export interface OperationDescription {
  operationId: string;
  runId: string;
  /** Temporal's execution status (`RUNNING`, `COMPLETED`, `FAILED`, `TERMINATED`, ...). */
  executionStatus: string;
  startedAt: string;
  closedAt: string | null;
  /** From the search attributes the workflow keeps current. */
  localState: LocalState | null;
  provider: string | null;
  jobId: string | null;
  escalationReason: EscalationReason | null;
  resultDeadlineAt: string | null;
  /** From the memo written at start (I2). */
  requestFingerprint: string | null;
  traceId: string | null;
  /** Why the workflow closed without a summary (failed, terminated, timed out, cancelled); null otherwise. */
  failure: { type: string | null; message: string } | null;
}

/** A memo entry that is a string, or null. */
export function memoString(description: WorkflowExecutionDescription, key: string): string | null {
  const value = description.memo?.[key];
  return typeof value === 'string' ? value : null;
}

/** Temporal's own description of the operation's latest run. */
export function describeRaw(ctx: ClientContext, operationId: string): Promise<WorkflowExecutionDescription> {
  return call(ctx, operationId, () => workflowHandle(ctx, operationId).describe());
}

/**
 * Why a closed run failed: its failure's type and message, read from its close event (the SDK decodes it).
 * Null when the run completed (or is still running).
 */
export async function workflowFailure(
  ctx: ClientContext,
  operationId: string,
  runId: string,
  executionStatus: string,
): Promise<WorkflowFailure | null> {
  if (!FAILED_EXECUTION_STATUSES.includes(executionStatus)) return null;
  // The run's failure is the answer here, not an error: read before the call's errors are translated.
  return call(ctx, operationId, async () => {
    try {
      await workflowHandle(ctx, operationId, runId).result();
      return null;
    } catch (err) {
      if (!(err instanceof WorkflowFailedError)) throw err;
      return workflowFailureOf(err, executionStatus);
    }
  });
}

/** The description of the operation's latest run, with the failure of a run that closed without a summary. */
export async function describeOperation(ctx: ClientContext, operationId: string): Promise<OperationDescription> {
  const d = await describeRaw(ctx, operationId);
  const sa = d.typedSearchAttributes;
  const failure = await workflowFailure(ctx, operationId, d.runId, d.status.name);
  return {
    operationId: d.workflowId,
    runId: d.runId,
    executionStatus: d.status.name,
    startedAt: d.startTime.toISOString(),
    closedAt: d.closeTime ? d.closeTime.toISOString() : null,
    localState: (sa.get(stateKey) as LocalState | undefined) ?? null,
    provider: sa.get(providerKey) ?? null,
    jobId: sa.get(providerJobIdKey) ?? null,
    escalationReason: (sa.get(escalationReasonKey) as EscalationReason | undefined) ?? null,
    resultDeadlineAt: sa.get(resultDeadlineKey)?.toISOString() ?? null,
    requestFingerprint: memoString(d, 'requestFingerprint'),
    traceId: memoString(d, 'traceId'),
    failure: failure ? { type: failure.type, message: failure.message } : null,
  };
}
