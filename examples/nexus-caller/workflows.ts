/**
 * A caller's workflows, in a namespace of their own, that run asyncjob operations through the `asyncjob` Nexus
 * service (docs/nexus.md). The endpoint is the only thing they know of asyncjob's deployment: its namespace and
 * task queue are the endpoint's business. `run.ts` runs `runReportThroughNexus` against `npm start`'s dev server;
 * test/integration/nexus.test.ts runs all three against a real asyncjob worker.
 */
import { ApplicationFailure, createNexusServiceClient } from '@temporalio/workflow';
// In your service: from 'asyncjob/workflow'.
import {
  asyncJobService,
  type MessageAnswer,
  type OperationSummary,
  outcomeFailure,
  type RunJobInput,
} from '../../src/workflow-api';

/** The asyncjob service behind `endpoint`. */
function asyncjob(endpoint: string) {
  return createNexusServiceClient({ endpoint, service: asyncJobService });
}

/**
 * Runs one operation to its end through Nexus and returns its summary when it succeeded; any other end is a typed
 * `ApplicationFailure` whose `type` is asyncjob's code (`ASYNCJOB_ERR_OPERATION_CANCELLED`, ...), its details the
 * summary. No `startedBy`: this workflow is the starter asyncjob records. Cancelling this workflow cancels the
 * operation at the provider as this workflow's recorded cancel intent, and waits for the operation's end.
 */
export async function runReportThroughNexus(request: RunJobInput, endpoint: string): Promise<OperationSummary> {
  const summary = await asyncjob(endpoint).executeOperation('runJob', request, {
    scheduleToCloseTimeout: '1 hour',
  });
  const failure = outcomeFailure(summary);
  if (failure !== null) throw ApplicationFailure.create(failure);
  return summary;
}

/** What {@link inspectThenCancel} saw and was answered. */
export interface InspectThenCancel {
  before: OperationSummary;
  answer: MessageAnswer;
}

/**
 * Reads an operation's summary (`getOperation`: its state, and an open escalation with the text that says how to
 * decide it) and asks for its cancellation (`requestCancel`) as this workflow.
 */
export async function inspectThenCancel(operationId: string, endpoint: string): Promise<InspectThenCancel> {
  const service = asyncjob(endpoint);
  const before = await service.executeOperation('getOperation', { operationId });
  const answer = await service.executeOperation('requestCancel', {
    operationId,
    reason: 'the order this report was for was withdrawn',
  });
  return { before, answer };
}
