/**
 * The visibility store answers as the Web UI's search does (ListWorkflowExecutions, the same query language): the
 * operations waiting for a human are found by `AsyncJobState = "escalated"`, and the succeeded ones are counted
 * by their state. Visibility is eventually consistent: each query is repeated until it agrees or a minute passes.
 */
import type { Client } from '@temporalio/client';

/** What the run expects the visibility store to say about its task queue. */
export interface ExpectedVisibility {
  /** The operation IDs `AsyncJobState = "escalated"` must list, exactly. */
  escalated?: string[];
  /** How many operations `AsyncJobState = "succeeded"` must count. */
  succeeded?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Returns the disagreements left after a minute of retries (none when the visibility store agrees). */
export async function checkVisibility(
  temporal: Client,
  taskQueue: string,
  expected: ExpectedVisibility,
  timeoutMs = 60_000,
): Promise<string[]> {
  const scope = `TaskQueue = "${taskQueue}"`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const problems: string[] = [];
    if (expected.escalated) {
      const listed: string[] = [];
      for await (const execution of temporal.workflow.list({ query: `AsyncJobState = "escalated" AND ${scope}` }))
        listed.push(execution.workflowId);
      const want = [...expected.escalated].sort().join(',');
      if (listed.sort().join(',') !== want)
        problems.push(`AsyncJobState = "escalated" listed [${listed.join(', ')}], expected [${want}]`);
    }
    if (expected.succeeded !== undefined) {
      const { count } = await temporal.workflow.count(`AsyncJobState = "succeeded" AND ${scope}`);
      if (count !== expected.succeeded)
        problems.push(`AsyncJobState = "succeeded" counted ${count}, the store says ${expected.succeeded}`);
    }
    if (problems.length === 0 || Date.now() > deadline) return problems;
    await sleep(500);
  }
}
