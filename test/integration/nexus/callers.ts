/**
 * The callers of the Nexus integration test: the example's workflows, and one that runs the same operation twice
 * (a join from the same caller).
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
