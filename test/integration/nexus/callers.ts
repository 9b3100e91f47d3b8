/**
 * The callers of the Nexus integration tests: the example's workflows, one that runs the same operation twice
 * (a join from the same caller), and one with a short timeout (an endpoint whose worker does not serve the service).
 */
import { createNexusServiceClient } from '@temporalio/workflow';
import { asyncJobService, type OperationSummary, type RunJobInput } from '../../../src/workflow-api';

export * from '../../../examples/nexus-caller/workflows';

/** Runs `runJob` twice with the same input, concurrently, and returns both summaries. */
export async function runJobTwice(input: RunJobInput, endpoint: string): Promise<OperationSummary[]> {
  const service = createNexusServiceClient({ endpoint, service: asyncJobService });
  const run = () => service.executeOperation('runJob', input, { scheduleToCloseTimeout: '10 minutes' });
  return Promise.all([run(), run()]);
}

/**
 * Runs `runJob` once, given at most `scheduleToCloseTimeoutMs` to end: a caller of an endpoint whose worker does
 * not serve the service sees the operation time out instead of waiting an hour.
 */
export async function runJobWithin(
  input: RunJobInput,
  endpoint: string,
  scheduleToCloseTimeoutMs: number,
): Promise<OperationSummary> {
  const service = createNexusServiceClient({ endpoint, service: asyncJobService });
  return service.executeOperation('runJob', input, { scheduleToCloseTimeout: scheduleToCloseTimeoutMs });
}
