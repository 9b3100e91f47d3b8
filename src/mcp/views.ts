/**
 * What an agent is shown of an operation, as zod schemas (the tools' declared output schemas) and the builders
 * that fill them from the record. Only facts an agent can act on: states, counters, the next poll time and its
 * delay source, the escalation with its text, the cancel intent, people's approvals, the result summary. Never
 * the idempotency token, never the artifact's location on the server, never a credential (G3, T4). Pure.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { operationView } from '../cli/view';
import { renderEscalation } from '../core/escalation';
import type { OperationRecord, ResultSummary } from '../core/operation';
import type { VariableDeclarations } from '../core/operation-variables';

const nullableString = z.string().nullable();

/** The result summary an agent sees (no location on the server). */
export const resultSummaryViewSchema = z.object({
  validation: z.enum(['valid', 'invalid', 'not_checked']).describe('valid: the result passed every check'),
  sha256: nullableString,
  sizeBytes: z.number().int().nullable(),
  recordCount: z.number().int().nullable(),
  failedItemCount: z.number().int().nullable(),
  failedItems: z.array(z.string()),
  problems: z.array(z.string()),
  acceptedBy: nullableString.describe('a person who accepted a result that failed validation'),
});
/** A result summary as shown to an agent. */
export type ResultSummaryView = z.infer<typeof resultSummaryViewSchema>;

/** The operation as shown to an agent (`get_operation`, `wait_for_change`, the operation resource). */
export const agentOperationSchema = z.object({
  operationId: z.string(),
  provider: z.string(),
  startedBy: z.string().describe('the agent that started it'),
  localState: z.string().describe("asyncjob's state: create_pending, observing, escalated, succeeded, failed, ..."),
  final: z.boolean().describe('true when nothing more will happen (succeeded, failed, cancelled, closed)'),
  jobId: nullableString,
  remote: z.object({
    state: nullableString.describe("the provider's own state, verbatim"),
    category: nullableString,
    progress: z.number().nullable().describe('0..1 as the provider reported it; never proof of completion'),
    observedAt: nullableString,
  }),
  nextPollAt: nullableString,
  delaySource: nullableString.describe('why the next poll is then: provider_retry_after, local_backoff, ...'),
  statusRequests: z.object({ used: z.number().int(), allowed: z.number().int() }),
  deadlines: z.object({ createAt: z.string(), resultAt: z.string(), cancelAt: nullableString }),
  escalation: z
    .object({
      reason: z.string(),
      text: z.string(),
      options: z.array(z.object({ option: z.string(), label: z.string() })),
      raisedAt: z.string(),
      decisionDeadlineAt: z.string(),
    })
    .nullable()
    .describe('set while a person must decide; agents cannot decide, only wait_for_change'),
  cancel: z
    .object({ requestedBy: z.string(), reason: z.string(), requestedAt: z.string(), sentAt: nullableString })
    .nullable(),
  approvals: z
    .array(
      z.object({
        at: z.string(),
        approvedBy: z.string(),
        option: z.string(),
        reason: z.string(),
        bounds: z.record(z.string(), z.union([z.number(), z.string()])),
      }),
    )
    .describe("people's decisions on this operation, oldest first"),
  result: resultSummaryViewSchema.nullable(),
  variables: z
    .record(z.string(), z.string())
    .describe("the operation variables as recorded, with the adapter's defaults applied"),
  refusal: z
    .object({ code: z.string(), issues: z.array(z.object({ path: z.string(), message: z.string() })) })
    .nullable()
    .describe(
      'why the operation was refused before anything was sent (e.g. ASYNCJOB_ERR_INVALID_VARIABLE), each variable named',
    ),
  changeToken: z.string().describe('pass to wait_for_change as sinceChangeToken to wait for the next change'),
});
/** An operation as shown to an agent. */
export type AgentOperation = z.infer<typeof agentOperationSchema>;

const iso = (ms: number): string => new Date(ms).toISOString();

/** The summary without its location, absent values as null. */
export function resultSummaryView(result: ResultSummary): ResultSummaryView {
  return {
    validation: result.validation,
    sha256: result.sha256 ?? null,
    sizeBytes: result.sizeBytes ?? null,
    recordCount: result.recordCount ?? null,
    failedItemCount: result.failedItemCount ?? null,
    failedItems: result.failedItems ?? [],
    problems: result.problems ?? [],
    acceptedBy: result.acceptedBy ?? null,
  };
}

/**
 * A short digest of what an agent would act on: states, job, progress, escalation, cancel, approvals, result. A
 * poll that changes only counters does not change it, so `wait_for_change` wakes for news, not for every read.
 */
export function changeToken(record: OperationRecord): string {
  const facts = {
    localState: record.localState,
    jobId: record.jobId ?? null,
    remote: [record.remote.state ?? null, record.remote.category ?? null, record.remote.progress ?? null],
    escalation: record.escalation ? [record.escalation.reason, record.escalation.raisedAtMs] : null,
    cancel: record.cancel ? [record.cancel.requestedAtMs, record.cancel.sentAtMs ?? null] : null,
    approvals: record.authorisation.approvals.length,
    result: record.result
      ? [record.result.validation, record.result.sha256 ?? null, record.result.acceptedBy ?? null]
      : null,
  };
  return createHash('sha256').update(JSON.stringify(facts)).digest('hex').slice(0, 16);
}

/** The operation as shown to an agent. */
export function agentOperation(record: OperationRecord): AgentOperation {
  const view = operationView(record);
  return {
    operationId: view.operationId,
    provider: view.provider,
    startedBy: record.authorisation.startedBy,
    localState: view.localState,
    final: view.final,
    jobId: view.jobId,
    remote: view.remote,
    nextPollAt: view.nextPollAt,
    delaySource: view.delaySource,
    statusRequests: view.statusRequests,
    deadlines: view.deadlines,
    escalation: record.escalation
      ? {
          reason: record.escalation.reason,
          text: renderEscalation(record.escalation),
          options: record.escalation.options.map((o) => ({ option: o.option, label: o.label })),
          raisedAt: iso(record.escalation.raisedAtMs),
          decisionDeadlineAt: iso(record.escalation.decisionDeadlineMs),
        }
      : null,
    cancel: view.cancel,
    approvals: record.authorisation.approvals.map((a) => ({
      at: iso(a.atMs),
      approvedBy: a.approvedBy,
      option: a.option,
      reason: a.reason,
      bounds: a.bounds ?? {},
    })),
    result: record.result ? resultSummaryView(record.result) : null,
    variables: view.variables,
    refusal: view.refusal,
    changeToken: changeToken(record),
  };
}

/** A provider's declared operation variables as an agent reads them (what start_operation's variables take). */
export function variableViews(declared: VariableDeclarations) {
  return Object.entries(declared).map(([name, d]) => ({
    name,
    ...(d.description === undefined ? {} : { description: d.description }),
    type: d.type,
    required: d.required === true,
    ...(d.default === undefined ? {} : { default: d.default }),
    ...(d.pattern === undefined ? {} : { pattern: d.pattern }),
    maxLength: d.maxLength,
    mayHoldSlash: d.reserved,
  }));
}
