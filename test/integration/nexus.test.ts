/**
 * The `asyncjob` Nexus service on the run's dev server, set up as a user would (the Temporal CLI creates a second
 * namespace for the callers and an endpoint targeting the asyncjob worker's namespace and task queue): the
 * callers' workflows of examples/nexus-caller, on a worker in that namespace, run operations through the endpoint
 * against a real asyncjob worker serving the service and the provider simulator.
 */
import path from 'node:path';
import { Client, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure, NexusOperationFailure } from '@temporalio/common';
import { HandlerError } from 'nexus-rpc';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startUserWorkflowWorker, type UserWorkflowWorker, withoutStarter } from './user-workflows';
import { renderStory } from '../../src/audit/story';
import { workflowActor } from '../../src/core/actor';
import { ensureNexusSetup } from '../../src/dev/nexus-setup';
import type { RunJobInput } from '../../src/nexus/service';
import type { inspectThenCancel, runJobTwice, runReportThroughNexus } from './nexus/callers';
import { uniqueId } from '../setup/temporal';
import { startHarness, type Harness } from '../workflows/harness';

describe('the asyncjob Nexus service (N4, N2)', () => {
  let h: Harness;
  let callers: Client;
  let callerWorker: UserWorkflowWorker;
  const callerNamespace = uniqueId('callers').toLowerCase();
  const callerQueue = uniqueId('nexus-callers');
  const endpoint = uniqueId('asyncjob').replace(/[^A-Za-z0-9-]/g, '-');

  beforeAll(async () => {
    const scripts = {
      quick: { steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }] },
      cancellable: { steps: [{ state: 'running' }], cancel: { afterMs: 50, outcome: 'cancelled' } },
    };
    h = await startHarness('nexus', { scenarios: { rest: { scripts } } as never, nexus: true });
    await ensureNexusSetup({
      address: inject('temporalAddress'),
      callerNamespace,
      endpoint,
      targetNamespace: inject('temporalNamespace'),
      targetTaskQueue: h.taskQueue,
    });
    callerWorker = await startUserWorkflowWorker(h.env.nativeConnection, {
      namespace: callerNamespace,
      taskQueue: callerQueue,
      workflowsPath: path.join(__dirname, 'nexus', 'callers.ts'),
    });
    callers = new Client({ connection: h.env.connection, namespace: callerNamespace });
  });
  afterAll(async () => {
    await callerWorker?.stop();
    await h?.stop();
  });

  /** The harness's request for a script, as a caller gives it: no starter (the calling workflow is the starter). */
  const runJobInput = (script: string): RunJobInput => withoutStarter(h.request('rest', { script }));

  function startCaller(input: RunJobInput, callerId = uniqueId('caller')) {
    return callers.workflow.start<typeof runReportThroughNexus>('runReportThroughNexus', {
      taskQueue: callerQueue,
      workflowId: callerId,
      args: [input, endpoint],
    });
  }

  /** The failure chain of a caller that failed on its Nexus operation: NexusOperationFailure, then its cause. */
  async function nexusFailure(result: Promise<unknown>): Promise<NexusOperationFailure> {
    const err = await result.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(NexusOperationFailure);
    return cause as NexusOperationFailure;
  }

  it('N4: a caller workflow in another namespace runs runJob to succeeded; the calling workflow is the recorded starter and the audit story names it', async () => {
    const input = runJobInput('quick');
    const caller = await startCaller(input);
    const summary = await caller.result();
    expect(summary).toMatchObject({ operationId: input.operationId, localState: 'succeeded' });
    const starter = workflowActor(callerNamespace, caller.workflowId);
    expect((await h.client.get(input.operationId)).authorisation.startedBy).toBe(starter);
    const story = renderStory((await h.store.entries(input.operationId)).map((stored) => stored.entry)).map(
      (line) => line.text,
    );
    expect(story.find((text) => text.startsWith('intent recorded'))).toContain(`started by ${starter}`);
    // The operation's run carries the caller's completion callback and a link back to the caller's history.
    const run = await h.env.client.workflow.getHandle(input.operationId).describe();
    expect(run.raw.callbacks?.length ?? 0).toBeGreaterThan(0);
    // The Web UI's details of the run name the caller as its starter.
    expect(await run.staticDetails()).toContain(starter);
  });

  it('N4: runJob joins as the client does: the same caller twice gets one operation and both its end; another caller is CONFLICT naming the starter', async () => {
    const input = runJobInput('quick');
    const twice = await callers.workflow.execute<typeof runJobTwice>('runJobTwice', {
      taskQueue: callerQueue,
      workflowId: uniqueId('caller-twice'),
      args: [input, endpoint],
    });
    expect(twice.map((s) => s.localState)).toEqual(['succeeded', 'succeeded']);
    // One operation, one provider job: a single create carried its token.
    const record = await h.client.get(input.operationId);
    expect(
      h.sims.rest.requests({ action: 'create' }).filter((r) => r.idempotencyKey === record.idempotencyToken),
    ).toHaveLength(1);

    const other = await nexusFailure((await startCaller(input)).result());
    expect((other.cause as HandlerError).type).toBe('CONFLICT');
    const cause = (other.cause as HandlerError).cause as ApplicationFailure;
    expect(cause.type).toBe('ASYNCJOB_ERR_JOIN_MISMATCH');
    expect(cause.message).toContain('startedBy');
    expect((await h.client.get(input.operationId)).authorisation.startedBy).toBe(record.authorisation.startedBy);
  });

  it('N4, C5: an invalid input, a starter other than the calling workflow or an undeclared variable is a BAD_REQUEST naming every field, and nothing is created', async () => {
    const input = { ...runJobInput('quick'), createDeadline: { afterMs: 0 }, startedBy: 'service:forged' };
    const failure = await nexusFailure((await startCaller(input)).result());
    expect(failure.cause).toBeInstanceOf(HandlerError);
    expect((failure.cause as HandlerError).type).toBe('BAD_REQUEST');
    const cause = (failure.cause as HandlerError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe('ASYNCJOB_ERR_INVALID_INPUT');
    const paths = ((cause as ApplicationFailure).details as { path: string }[]).map((issue) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(['startedBy', 'createDeadline.afterMs']));
    await expect(h.env.client.workflow.getHandle(input.operationId).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );

    // A variable the provider's adapter does not declare (C5) is refused by the worker's handler, before any run.
    const undeclared = { ...runJobInput('quick'), variables: { region: 'eu-west-1' } };
    const refused = await nexusFailure((await startCaller(undeclared)).result());
    expect((refused.cause as HandlerError).type).toBe('BAD_REQUEST');
    expect(((refused.cause as HandlerError).cause as ApplicationFailure).type).toBe('ASYNCJOB_ERR_INVALID_VARIABLE');
    await expect(h.env.client.workflow.getHandle(undeclared.operationId).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
  });

  it("N2: cancelling the caller workflow reaches the provider exactly once, as the caller's recorded cancel intent, never Temporal's bare cancel", async () => {
    const input = runJobInput('cancellable');
    const caller = await startCaller(input);
    await expect
      .poll(async () => (await h.client.get(input.operationId).catch(() => null))?.localState, { timeout: 30_000 })
      .toBeOneOf(['accepted', 'observing']);
    await caller.cancel();
    // The caller waited for the operation's end and reads it as the typed failure of its code.
    const ended = await caller.result().then(
      () => null,
      (err: unknown) => (err instanceof WorkflowFailedError ? err.cause : err),
    );
    expect(ended).toMatchObject({ type: 'ASYNCJOB_ERR_OPERATION_CANCELLED', nonRetryable: true });
    const summary = await h.client.result(input.operationId);
    expect(summary.localState).toBe('cancelled');
    const record = await h.client.get(input.operationId);
    expect(record.cancel?.requestedBy).toBe(workflowActor(callerNamespace, caller.workflowId));
    const cancels = h.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(summary.jobId!));
    expect(cancels).toHaveLength(1);
    const history = await h.env.client.workflow.getHandle(input.operationId).fetchHistory();
    expect(history.events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes)).toBe(false);
  });

  it('N4, N2: getOperation answers the summary and requestCancel records the calling workflow as the requester', async () => {
    const input = runJobInput('cancellable');
    await startCaller(input);
    await expect
      .poll(async () => (await h.client.get(input.operationId).catch(() => null))?.localState, { timeout: 30_000 })
      .toBeOneOf(['accepted', 'observing']);
    const inspector = await callers.workflow.start<typeof inspectThenCancel>('inspectThenCancel', {
      taskQueue: callerQueue,
      workflowId: uniqueId('inspector'),
      args: [input.operationId, endpoint],
    });
    const { before, answer } = await inspector.result();
    expect(before).toMatchObject({ operationId: input.operationId, escalation: null });
    expect(before.localState).toBeOneOf(['accepted', 'observing']);
    expect(answer).toMatchObject({ accepted: true });
    expect((await h.client.result(input.operationId)).localState).toBe('cancelled');
    const record = await h.client.get(input.operationId);
    expect(record.cancel?.requestedBy).toBe(workflowActor(callerNamespace, inspector.workflowId));
  });
});
