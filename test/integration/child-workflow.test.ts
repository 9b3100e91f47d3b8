/**
 * `asyncjob/workflow` on the real dev server: a user's parent workflows (child-workflow/parents.ts) on a worker of
 * their own run operations as children on a real asyncjob worker against the provider simulator (the workflow
 * tests' harness); an escalation is answered with the real `asyncjob decide` bin; the parent's history replays.
 */
import path from 'node:path';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startUserWorkflowWorker, type UserWorkflowWorker, withoutStarter } from './user-workflows';
import { workflowActor } from '../../src/core/actor';
import type { ChildStartRequest } from '../../src/workflow-api';
import { escalationsQuery } from '../../src/workflows/parent-link';
import { runShell } from '../docs/shell';
import { uniqueId, workflowBundle } from '../setup/temporal';
import { startHarness, type Harness } from '../workflows/harness';
import {
  type cancelWithReason,
  handleEscalationQuery,
  type runReportJob,
  type runUncheckedJob,
} from './child-workflow/parents';

describe('asyncjob/workflow: an operation as a child workflow (N1, N2, N3)', () => {
  let h: Harness;
  let parents: UserWorkflowWorker;
  const parentQueue = uniqueId('parents');

  beforeAll(async () => {
    const scripts = {
      quick: { steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }] },
      cancellable: { steps: [{ state: 'running' }], cancel: { afterMs: 50, outcome: 'cancelled' } },
      review_then_done: {
        steps: [{ state: 'running', polls: 1 }, { state: 'manual_review', polls: 1 }, { state: 'succeeded' }],
      },
    };
    h = await startHarness('child', { scenarios: { rest: { scripts } } as never });
    parents = await startUserWorkflowWorker(h.env.nativeConnection, {
      namespace: inject('temporalNamespace'),
      taskQueue: parentQueue,
      workflowsPath: path.join(__dirname, 'child-workflow', 'parents.ts'),
    });
  });
  afterAll(async () => {
    await parents?.stop();
    await h?.stop();
  });

  /** The harness's request for a script, as a parent gives it (no starter: the parent is the starter). */
  const childRequest = (script: string): ChildStartRequest => withoutStarter(h.request('rest', { script }));

  function startParent(request: ChildStartRequest, parentId = uniqueId('parent')) {
    return h.env.client.workflow.start<typeof runReportJob>('runReportJob', {
      taskQueue: parentQueue,
      workflowId: parentId,
      args: [request, { taskQueue: h.taskQueue }],
    });
  }

  /** The parent's failure as the client reads it: the cause of its WorkflowFailedError. */
  async function parentFailure(result: Promise<unknown>): Promise<unknown> {
    const err = await result.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    return (err as WorkflowFailedError).cause;
  }

  it('N1, I1: a parent runs a job as a child to succeeded; the child is the operation ID, its recorded starter is the parent, its token drawn by the worker, started REJECT_DUPLICATE and REQUEST_CANCEL', async () => {
    const request = childRequest('quick');
    const parent = await startParent(request);
    const summary = await parent.result();
    expect(summary).toMatchObject({ operationId: request.operationId, localState: 'succeeded' });
    const record = await h.client.get(request.operationId);
    expect(record.authorisation.startedBy).toBe(workflowActor(inject('temporalNamespace'), parent.workflowId));
    // I1: the parent sent no token; the worker drew 32 random bytes, and the provider's create carried them.
    expect(record.idempotencyToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const creates = h.sims.rest
      .requests({ action: 'create' })
      .filter((r) => r.idempotencyKey === record.idempotencyToken);
    expect(creates).toHaveLength(1);
    const child = await h.env.client.workflow.getHandle(request.operationId).describe();
    expect(child.type).toBe('AsyncJobWorkflow');
    expect(child.parentExecution?.workflowId).toBe(parent.workflowId);
    // The Web UI's details of the run name the parent as its starter.
    expect(await child.staticDetails()).toContain(workflowActor(inject('temporalNamespace'), parent.workflowId));
    // As the parent's history recorded the start: never reused, cancelled (never terminated) if the parent closes.
    const started = (await parent.fetchHistory()).events?.find(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes,
    )?.startChildWorkflowExecutionInitiatedEventAttributes;
    expect(started?.parentClosePolicy).toBe(temporal.api.enums.v1.ParentClosePolicy.PARENT_CLOSE_POLICY_REQUEST_CANCEL);
    expect(started?.workflowIdReusePolicy).toBe(
      temporal.api.enums.v1.WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
    );
  });

  it('N1: an invalid request, or a starter given by the parent code, fails in the parent with a typed failure and no child exists', async () => {
    const request = { ...childRequest('quick'), createDeadline: { afterMs: 0 }, startedBy: 'service:forged' };
    const parent = await h.env.client.workflow.start<typeof runUncheckedJob>('runUncheckedJob', {
      taskQueue: parentQueue,
      workflowId: uniqueId('parent-invalid'),
      args: [request, { taskQueue: h.taskQueue, parentClosePolicy: 'TERMINATE' }],
    });
    const cause = await parentFailure(parent.result());
    expect(cause).toBeInstanceOf(ApplicationFailure);
    const failure = cause as ApplicationFailure;
    expect(failure.type).toBe('ASYNCJOB_ERR_INVALID_INPUT');
    expect(failure.nonRetryable).toBe(true);
    const paths = (failure.details?.[0] as { path: string }[]).map((issue) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(['startedBy', 'parentClosePolicy', 'createDeadline.afterMs']));
    await expect(h.env.client.workflow.getHandle(request.operationId).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );

    // Options the child would refuse only once it exists (its ID used up) are refused in the parent too.
    const valid = childRequest('quick');
    const badOptions = await h.env.client.workflow.start<typeof runUncheckedJob>('runUncheckedJob', {
      taskQueue: parentQueue,
      workflowId: uniqueId('parent-invalid-options'),
      args: [valid, { taskQueue: '', historyEventLimit: 5, cancelReason: ' ' }],
    });
    const optionsFailure = (await parentFailure(badOptions.result())) as ApplicationFailure;
    expect(optionsFailure.type).toBe('ASYNCJOB_ERR_INVALID_INPUT');
    expect((optionsFailure.details?.[0] as { path: string }[]).map((issue) => issue.path)).toEqual([
      'cancelReason',
      'taskQueue',
      'historyEventLimit',
    ]);
    await expect(h.env.client.workflow.getHandle(valid.operationId).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
  });

  it('N2: a cancel from the handle with an empty reason is refused in the parent, typed, and nothing is cancelled', async () => {
    const request = childRequest('quick');
    const parent = await h.env.client.workflow.start<typeof cancelWithReason>('cancelWithReason', {
      taskQueue: parentQueue,
      workflowId: uniqueId('parent-cancel-reason'),
      // ABANDON: the parent fails on the refusal, and its close must not cancel the job either.
      args: [request, { taskQueue: h.taskQueue, parentClosePolicy: 'ABANDON' }, '  '],
    });
    const failure = (await parentFailure(parent.result())) as ApplicationFailure;
    expect(failure.type).toBe('ASYNCJOB_ERR_INVALID_INPUT');
    expect((failure.details?.[0] as { path: string }[]).map((issue) => issue.path)).toEqual(['reason']);
    expect((await h.client.get(request.operationId)).cancel).toBeNull();
  });

  it('N1: a child that ends without a summary (an unknown provider) is one typed failure in the parent, with its code', async () => {
    const request = { ...childRequest('quick'), provider: 'no-such-provider' };
    const parent = await startParent(request);
    const failure = (await parentFailure(parent.result())) as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe('ASYNCJOB_ERR_PROVIDER_UNKNOWN');
    expect(failure.nonRetryable).toBe(true);
  });

  it('N1: an operation ID already used by another starter is refused in the parent (ASYNCJOB_ERR_OPERATION_EXISTS), never joined', async () => {
    const request = childRequest('quick');
    await h.client.start({ ...request, startedBy: 'service:elsewhere' });
    const cause = await parentFailure((await startParent(request)).result());
    expect(cause).toMatchObject({ type: 'ASYNCJOB_ERR_OPERATION_EXISTS', nonRetryable: true });
    const record = await h.client.get(request.operationId);
    expect(record.authorisation.startedBy).toBe('service:elsewhere');
  });

  it("N2: cancelling the parent records the parent's cancel intent, the provider sees exactly one cancel, and the parent ends cancelled", async () => {
    const request = childRequest('cancellable');
    const parent = await startParent(request);
    await expect
      .poll(async () => (await h.client.get(request.operationId).catch(() => null))?.localState, { timeout: 30_000 })
      .toBeOneOf(['accepted', 'observing']);
    await parent.cancel();
    const cause = await parentFailure(parent.result());
    expect(cause).toBeInstanceOf(CancelledFailure);
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('cancelled');
    const record = await h.client.get(request.operationId);
    expect(record.cancel?.requestedBy).toBe(workflowActor(inject('temporalNamespace'), parent.workflowId));
    const cancels = h.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(summary.jobId!));
    expect(cancels).toHaveLength(1);
    // Temporal itself sent the child no cancellation request: ours is the only cancel.
    const childHistory = await h.env.client.workflow.getHandle(request.operationId).fetchHistory();
    expect(childHistory.events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes)).toBe(false);
  });

  it("N3: a child's escalation is visible through the parent's query and handle, answered with asyncjob decide, and the parent then gets the result; the parent's history replays", async () => {
    const request = childRequest('review_then_done');
    const parent = await startParent(request);
    await expect
      .poll(async () => (await parent.query(escalationsQuery)).map((e) => [e.operationId, e.escalation?.reason]), {
        timeout: 30_000,
        interval: 200,
      })
      .toEqual([[request.operationId, 'unknown_state']]);
    expect(await parent.query(handleEscalationQuery)).toMatchObject({ reason: 'unknown_state' });

    const env = { TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace') };
    const decided = await runShell(
      `bin/asyncjob decide ${request.operationId} --option extend --extend 15m --checks 4 --by ops@example.com --reason "reviewed by hand"`,
      { env, timeoutMs: 60_000 },
    );
    expect(decided.code, decided.stdout + decided.stderr).toBe(0);
    expect(await parent.result()).toMatchObject({ operationId: request.operationId, localState: 'succeeded' });
    expect(await parent.query(escalationsQuery)).toEqual([]);
    expect(await parent.query(handleEscalationQuery)).toBeNull();

    // The link: the parent's own history holds the child's signals, the escalation opened and then closed.
    const history = await parent.fetchHistory();
    const notices = (history.events ?? []).filter(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'asyncjob.escalation',
    );
    expect(notices).toHaveLength(2);
    await Worker.runReplayHistory({ workflowBundle: parents.bundle, replayName: 'parent' }, history, parent.workflowId);
    // The child's history (its signals to the parent behind their patch marker) replays on the asyncjob bundle.
    const childHistory = await h.env.client.workflow.getHandle(request.operationId).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, childHistory, request.operationId);
  });
});
