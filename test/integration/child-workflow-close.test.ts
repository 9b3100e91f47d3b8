/**
 * The parent-close policy of `asyncjob/workflow` at run time (N1, X1): a user's parent workflows
 * (child-workflow/closing-parents.ts) on a worker of their own start an operation as a child on a real asyncjob
 * worker against the provider simulator, then close without waiting (return, or an operator's terminate); what
 * Temporal does to the child is read from the operation's record, the child's history and the simulator's accounting.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { WorkflowFailedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startUserWorkflowWorker, type UserWorkflowWorker, withoutStarter } from './user-workflows';
import type { ChildStartRequest } from '../../src/workflow-api';
import { TEMPORAL_CANCEL_REQUEST } from '../../src/workflows/message-steps';
import { uniqueId } from '../setup/temporal';
import { startDocumentWorker } from '../workflows/document-worker';
import { SIM_TOKEN, startHarness, type Harness } from '../workflows/harness';
import {
  closeSignal,
  type closeAfterStart,
  type closeWhenSignalled,
  type closeWithUncheckedOptions,
  type waitUntilTerminated,
} from './child-workflow/closing-parents';

/** The parent workflows, by workflow type. */
interface ClosingParents {
  closeAfterStart: typeof closeAfterStart;
  closeWhenSignalled: typeof closeWhenSignalled;
  waitUntilTerminated: typeof waitUntilTerminated;
  closeWithUncheckedOptions: typeof closeWithUncheckedOptions;
}

describe('asyncjob/workflow: the parent-close policy at run time (N1, X1)', () => {
  let h: Harness;
  let parents: UserWorkflowWorker;
  const parentQueue = uniqueId('closing-parents');

  beforeAll(async () => {
    const scripts = {
      // Runs until cancelled; the provider reports the cancel 50 ms after it.
      cancellable: { steps: [{ state: 'running' }], cancel: { afterMs: 50, outcome: 'cancelled' } },
      // Runs for a few reads, then succeeds; a cancel would end it cancelled.
      slow_success: {
        steps: [{ state: 'running', polls: 6 }, { state: 'succeeded' }],
        cancel: { afterMs: 50, outcome: 'cancelled' },
      },
    };
    h = await startHarness('child-close', { scenarios: { rest: { scripts } } as never });
    parents = await startUserWorkflowWorker(h.env.nativeConnection, {
      namespace: inject('temporalNamespace'),
      taskQueue: parentQueue,
      workflowsPath: path.join(__dirname, 'child-workflow', 'closing-parents.ts'),
    });
  });
  afterAll(async () => {
    await parents?.stop();
    await h?.stop();
  });

  /** The harness's request for a script, as a parent gives it (no starter: the parent is the starter). */
  const childRequest = (script: string): ChildStartRequest => withoutStarter(h.request('rest', { script }));

  /** Starts a parent on its own worker, with the asyncjob workers' task queue and `options` for the child. */
  function startParent(
    workflow: keyof ClosingParents,
    request: ChildStartRequest,
    options: object = {},
  ): Promise<WorkflowHandle> {
    return h.env.client.workflow.start(workflow, {
      taskQueue: parentQueue,
      workflowId: uniqueId('parent'),
      args: [request, { taskQueue: h.taskQueue, ...options }],
    });
  }

  /** Until the job is created and polled (`observing` is shown at the copy's refresh, P8). */
  async function untilPolling(operationId: string): Promise<void> {
    await expect
      .poll(async () => (await h.client.get(operationId).catch(() => null))?.localState, { timeout: 30_000 })
      .toBeOneOf(['accepted', 'observing']);
  }

  /** The provider's cancel requests for the operation's job (the simulator may show a prefixed public ID). */
  function cancelsSent(jobId: string | undefined): number {
    return h.sims.rest.requests({ action: 'cancel' }).filter((r) => jobId !== undefined && r.jobId?.endsWith(jobId))
      .length;
  }

  /** The child's history holds Temporal's cancel request (the parent-close policy), never a termination. */
  async function childCancelRequested(operationId: string): Promise<boolean> {
    const events = (await h.env.client.workflow.getHandle(operationId).fetchHistory()).events ?? [];
    expect(events.some((e) => e.workflowExecutionTerminatedEventAttributes)).toBe(false);
    return events.some((e) => e.workflowExecutionCancelRequestedEventAttributes);
  }

  /** REQUEST_CANCEL's outcome (X1): Temporal's request is the recorded intent, one cancel sent, ended cancelled. */
  async function expectCancelledThroughRequest(operationId: string): Promise<void> {
    const summary = await h.client.result(operationId);
    expect(summary.localState).toBe('cancelled');
    const record = await h.client.get(operationId);
    expect(record.cancel).toMatchObject({
      requestedBy: TEMPORAL_CANCEL_REQUEST.requestedBy,
      reason: TEMPORAL_CANCEL_REQUEST.reason,
    });
    expect(cancelsSent(summary.jobId)).toBe(1);
    expect(await childCancelRequested(operationId)).toBe(true);
  }

  it('N1, X1: a parent that returns while its job runs (REQUEST_CANCEL, the default) leaves a Temporal cancel request, recorded as the cancel intent; the provider sees one cancel and the operation ends cancelled', async () => {
    const request = childRequest('cancellable');
    const parent = await startParent('closeWhenSignalled', request, {});
    await untilPolling(request.operationId);
    await parent.signal(closeSignal);
    expect(await parent.result()).toBe(request.operationId);
    await expectCancelledThroughRequest(request.operationId);
  });

  it('N1, X5: a parent that returns before the provider accepted the job (REQUEST_CANCEL) leaves a cancel request held until the job exists, then sent once: the operation ends cancelled', async () => {
    // The asyncjob worker for this queue starts only once Temporal's cancel request is in the child's history, so the
    // operation sees the request before its create (a busy worker picking the child up late).
    const late = uniqueId('wf-late');
    const request = childRequest('cancellable');
    const parent = await startParent('closeAfterStart', request, { taskQueue: late });
    expect(await parent.result()).toBe(request.operationId);
    await expect.poll(() => childCancelRequested(request.operationId), { timeout: 30_000 }).toBe(true);
    const dataDir = path.join(h.dataDir, late);
    await mkdir(dataDir);
    const worker = await startDocumentWorker({
      taskQueue: late,
      dataDir,
      providers: [{ name: request.provider, path: 'rest' }],
      baseUrls: { [request.provider]: h.sims.rest.url },
      env: { ASYNCJOB_SIMULATOR_TOKEN: SIM_TOKEN },
      forbiddenValues: [SIM_TOKEN],
    });
    try {
      const summary = await worker.client.result(request.operationId);
      expect(summary.localState).toBe('cancelled');
      expect((await worker.client.get(request.operationId)).cancel).toMatchObject({
        requestedBy: TEMPORAL_CANCEL_REQUEST.requestedBy,
      });
      expect(cancelsSent(summary.jobId)).toBe(1);
      // The create came first: the cancel was sent for the job the provider accepted, after it accepted it.
      const states = (await worker.store.entries(request.operationId))
        .map((e) => e.entry.body)
        .filter((body) => body.kind === 'transition')
        .map((body) => body.to);
      expect(states.indexOf('accepted')).toBeGreaterThanOrEqual(0);
      expect(states.indexOf('cancel_requested')).toBeGreaterThan(states.indexOf('accepted'));
    } finally {
      await worker.stop();
    }
  });

  it('N1, X1: a parent terminated by an operator while its job runs (REQUEST_CANCEL) leaves the job cancelled the same way', async () => {
    const request = childRequest('cancellable');
    const parent = await startParent('waitUntilTerminated', request);
    await untilPolling(request.operationId);
    await parent.terminate('operator: stop the order');
    await expectCancelledThroughRequest(request.operationId);
  });

  it('N1: a parent that returns with ABANDON leaves its job running to succeeded, and no cancel is requested or sent', async () => {
    const request = childRequest('slow_success');
    const parent = await startParent('closeAfterStart', request, {
      parentClosePolicy: 'ABANDON',
    });
    expect(await parent.result()).toBe(request.operationId);
    const child = await h.env.client.workflow.getHandle(request.operationId).describe();
    expect(child.parentExecution?.workflowId).toBe(parent.workflowId);
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('succeeded');
    expect((await h.client.get(request.operationId)).cancel).toBeNull();
    expect(cancelsSent(summary.jobId)).toBe(0);
    expect(await childCancelRequested(request.operationId)).toBe(false);
    const started = (await parent.fetchHistory()).events?.find(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes,
    )?.startChildWorkflowExecutionInitiatedEventAttributes;
    expect(started?.parentClosePolicy).toBe(temporal.api.enums.v1.ParentClosePolicy.PARENT_CLOSE_POLICY_ABANDON);
  });

  it("N1: parentClosePolicy 'TERMINATE' given at run time to an otherwise valid request is refused in the parent (ASYNCJOB_ERR_INVALID_INPUT naming only that option) and no child exists", async () => {
    const request = childRequest('cancellable');
    const parent = await startParent('closeWithUncheckedOptions', request, {
      parentClosePolicy: 'TERMINATE',
    });
    const err = await parent.result().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const failure = (err as WorkflowFailedError).cause;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'ASYNCJOB_ERR_INVALID_INPUT', nonRetryable: true });
    const issues = (failure as ApplicationFailure).details?.[0] as { path: string }[];
    expect(issues.map((issue) => issue.path)).toEqual(['parentClosePolicy']);
    await expect(h.env.client.workflow.getHandle(request.operationId).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
    await expect(h.client.get(request.operationId)).rejects.toThrow();
  });
});
