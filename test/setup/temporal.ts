/**
 * Helpers for integration tests: a TestWorkflowEnvironment on the run's shared dev server, and the workflow
 * bundle built once per test file.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, Runtime, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { inject } from 'vitest';
import { WORKFLOW_BUNDLER_OPTIONS, workflowsPath } from '../../src/worker';

let runtimeInstalled = false;
/** Keeps worker logs to warnings so test output stays readable. */
function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed in this process by another file: keep it.
  }
}

/** Connects to the dev server the global setup started. */
export async function connectTestEnvironment(): Promise<TestWorkflowEnvironment> {
  installQuietRuntime();
  return TestWorkflowEnvironment.createFromExistingServer({
    address: inject('temporalAddress'),
    namespace: inject('temporalNamespace'),
  });
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
/** Bundles the workflows once per test file. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  // As a worker bundles them (`createWorkers`): the stateless libraries loaded once per V8 context.
  bundle ??= bundleWorkflowCode({ workflowsPath, ...WORKFLOW_BUNDLER_OPTIONS, logger: quietLogger });
  return bundle;
}

const noop = (): void => {};
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error };

/** A unique ID per test so tests never share an operation. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** A short weekly-report start request for a worker-process test: fast polls, generous deadlines. */
export function weeklyReportRequest(operationId: string, provider: string) {
  return {
    operationId,
    provider,
    payload: { report: 'weekly' },
    startedBy: 'service:test',
    authorisedBy: 'policy:test',
    createDeadline: { afterMs: 30_000 },
    resultDeadline: { afterMs: 60_000 },
    policy: { baseDelayMs: 20, maxDelayMs: 100 },
  };
}

/**
 * The history events of every run of a workflow, oldest run first. A slow operation can continue as new (the test
 * server suggests it at 200 events), so an event a test looks for may be in an earlier run than the current one:
 * each run's first event names the run it continued, which is followed back to the first.
 */
export async function eventsOfEveryRun(
  client: Client,
  workflowId: string,
): Promise<temporal.api.history.v1.IHistoryEvent[]> {
  const runs: temporal.api.history.v1.IHistoryEvent[][] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history: temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    runs.unshift(events);
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return runs.flat();
}
