/**
 * The caller workflow of a load run through Nexus (`npm run soak -- --via nexus`): in a namespace of its own, it
 * runs one operation through the `asyncjob` service's `runJob` and returns the summary as Nexus delivered it,
 * whatever the end, so the run compares it with the operation's own.
 */
import { createNexusServiceClient } from '@temporalio/workflow';
import { asyncJobService, type RunJobInput } from '../../src/nexus/service';
import type { OperationSummary } from '../../src/workflows/messages';

/** Runs `request` through `endpoint` and returns its summary. */
export async function runThroughNexus(request: RunJobInput, endpoint: string): Promise<OperationSummary> {
  const service = createNexusServiceClient({ endpoint, service: asyncJobService });
  return service.executeOperation('runJob', request, { scheduleToCloseTimeout: '1 hour' });
}
