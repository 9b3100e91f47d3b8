/**
 * The `asyncjob` Nexus service: its name, its operations and their input and output types, shared by the handler
 * (`handler.ts`) and by callers' workflows (`createNexusServiceClient({ endpoint, service: asyncJobService })`).
 * Workflow-safe: it imports nexus-rpc's definition helpers and types only, so a caller's workflow bundle can
 * import it. Callers in other languages type the same operations from the JSON Schemas in `schema/nexus/`.
 */
import * as nexus from 'nexus-rpc';
import type { StartRequest } from '../core/operation';
import type { MessageAnswer, OperationSummary } from '../workflows/messages';

/** The service's name, as callers name it beside their endpoint. */
export const ASYNCJOB_SERVICE_NAME = 'asyncjob';

/**
 * `runJob`'s input: a start request whose `startedBy` is optional. A calling workflow is the starter (its
 * `workflow:<namespace>/<workflow ID>`, read from the Nexus request's links); `startedBy` is needed only when the
 * request names no calling workflow, and must name that workflow when it does.
 */
export type RunJobInput = Omit<StartRequest, 'startedBy'> & { startedBy?: StartRequest['startedBy'] };

/** `getOperation`'s input. */
export interface GetOperationInput {
  operationId: string;
}

/**
 * `requestCancel`'s input: the cancel intent (X1). `requestedBy` is the calling workflow when the request names
 * one (then it may be left out); needed otherwise.
 */
export interface RequestCancelInput {
  operationId: string;
  reason: string;
  expectedEffect?: string;
  requestedBy?: string;
}

/**
 * The `asyncjob` service. `runJob` starts (or joins) an operation and completes with its final summary (every
 * final state: read `localState`); `getOperation` answers the operation's current summary (its open escalation
 * with the text that says how to decide); `requestCancel` records a cancel intent and answers at once.
 */
export const asyncJobService = nexus.service(ASYNCJOB_SERVICE_NAME, {
  runJob: nexus.operation<RunJobInput, OperationSummary>(),
  getOperation: nexus.operation<GetOperationInput, OperationSummary>(),
  requestCancel: nexus.operation<RequestCancelInput, MessageAnswer>(),
});
