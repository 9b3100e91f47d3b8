import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideSignal } from '../../src/workflows/messages';
import { eventsOfEveryRun } from '../setup/temporal';
import { startHarness, type Harness } from './harness';

/** Polls a condition on the workflow's record through the state query (no sleeping test: it waits for a fact). */
async function until(
  h: Harness,
  operationId: string,
  check: (state: string) => boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const state = await h.client.get(operationId).then(
      (r) => r.localState,
      () => 'unknown',
    );
    if (check(state)) return;
    if (Date.now() > end) throw new Error(`operation ${operationId} still ${state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('AsyncJobWorkflow messages: cancel, decisions, webhooks, joins', () => {
  let h: Harness;
  const cancelBy = {
    requestedBy: 'alice@example.com',
    reason: 'no longer needed',
    expectedEffect: 'the report is not produced',
  };

  beforeAll(async () => {
    const scripts = {
      cancellable: { steps: [{ state: 'running' }], cancel: { afterMs: 50, outcome: 'cancelled' } },
      race: { steps: [{ state: 'running' }], cancel: { afterMs: 100, outcome: 'succeeded' } },
      stubborn: { steps: [{ state: 'running' }], cancel: { afterMs: 3_600_000, outcome: 'cancelled' } },
      forever: { steps: [{ state: 'running' }] },
      review_then_done: {
        steps: [{ state: 'running', polls: 1 }, { state: 'manual_review', polls: 1 }, { state: 'succeeded' }],
      },
      unavailable: {
        steps: [{ state: 'running' }],
        faults: [{ on: 'create', nth: 'every', fault: { kind: 'http_error', status: 503, retryAfterSeconds: 1 } }],
      },
      slow_finish: { steps: [{ state: 'running', durationMs: 300 }, { state: 'succeeded' }] },
    };
    h = await startHarness('messages', { scenarios: { rest: { scripts } } as never });
  });
  afterAll(async () => h?.stop());

  it('X1, X2: a cancel while observing records the intent, calls cancel once, and ends cancelled as the provider reports', async () => {
    const request = h.request('rest', { script: 'cancellable' });
    await h.client.start(request);
    await until(h, request.operationId, (s) => s === 'accepted' || s === 'observing');
    expect(await h.client.cancel(request.operationId, cancelBy)).toMatchObject({
      accepted: true,
      localState: 'cancel_requested',
    });
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('cancelled');
    expect(h.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(summary.jobId!))).toHaveLength(1);
    const transitions = (await h.store.entries(request.operationId))
      .map((e) => e.entry.body)
      .filter((b) => b.kind === 'transition')
      .map((b) => (b.kind === 'transition' ? b.to : ''));
    expect(transitions.slice(-3)).toEqual(['cancel_requested', 'cancelling', 'cancelled']);
  });

  it('X1: a Temporal "Request Cancellation" (Web UI, temporal workflow cancel) is a recorded cancel intent handled by the cancel rules', async () => {
    const request = h.request('rest', { script: 'cancellable' });
    await h.client.start(request);
    await until(h, request.operationId, (s) => s === 'accepted' || s === 'observing');
    await h.env.client.workflow.getHandle(request.operationId).cancel();
    const summary = await h.client.result(request.operationId);
    // Not a bare workflow cancellation: the provider was asked once and said so.
    expect(summary.localState).toBe('cancelled');
    const record = await h.client.get(request.operationId);
    expect(record.cancel).toMatchObject({
      requestedBy: 'temporal:request-cancellation',
      reason: expect.stringContaining('WorkflowExecutionCancelRequested'),
    });
    expect(h.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(summary.jobId!))).toHaveLength(1);
    const described = await h.env.client.workflow.getHandle(request.operationId).describe();
    expect(described.status.name).toBe('COMPLETED');
    // The timers say what they wait for (the Web UI shows their summaries); how many ran depends on timing.
    const summaries = (await eventsOfEveryRun(h.env.client, request.operationId))
      .filter((e) => e.timerStartedEventAttributes)
      .map((e) => e.userMetadata?.summary?.data);
    expect(summaries.every((data) => data !== undefined && data !== null)).toBe(true);
  });

  it('X1: a Temporal cancellation request the cancel rules refuse (an escalated operation) is journalled as refused, and the operation goes on', async () => {
    const request = h.request('rest', { script: 'review_then_done' });
    await h.client.start(request);
    await until(h, request.operationId, (s) => s === 'escalated');
    await h.env.client.workflow.getHandle(request.operationId).cancel();
    const refusedEntry = async () =>
      (await h.store.entries(request.operationId))
        .map((e) => e.entry.body)
        .find((b) => b.kind === 'decision' && b.decision === 'cancel');
    for (let i = 0; i < 100 && (await refusedEntry()) === undefined; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await refusedEntry()).toMatchObject({
      approvedBy: 'temporal:request-cancellation',
      accepted: false,
      rejectionReason: expect.stringContaining('ASYNCJOB_ERR_CANCEL'),
    });
    expect((await h.client.get(request.operationId)).localState).toBe('escalated');
    const escalation = await h.client.escalation(request.operationId);
    await h.client.decide(request.operationId, {
      option: 'close',
      approvedBy: 'bob@example.com',
      reason: 'done with it',
    });
    expect(escalation?.reason).toBe('unknown_state');
  });

  it('F3, X2: a success that crosses the cancel is collected and reported as succeeded, in order', async () => {
    const request = h.request('rest', { script: 'race' });
    await h.client.start(request);
    await until(h, request.operationId, (s) => s === 'accepted' || s === 'observing');
    await h.client.cancel(request.operationId, cancelBy);
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('succeeded');
    expect(summary.result?.validation).toBe('valid');
    const transitions = (await h.store.entries(request.operationId))
      .map((e) => e.entry.body)
      .flatMap((b) => (b.kind === 'transition' ? [b.to] : []));
    expect(transitions.slice(-3)).toEqual(['cancel_requested', 'cancelling', 'succeeded']);
  });

  it('X3: a cancel the provider never confirms ends in cancellation_unconfirmed, escalated, with the cancel sent once', async () => {
    const request = h.request('rest', {
      script: 'stubborn',
      policy: { baseDelayMs: 50, maxDelayMs: 100, cancelDeadlineMs: 600, decisionDeadlineMs: 300 },
    });
    await h.client.start(request);
    await until(h, request.operationId, (s) => s === 'accepted' || s === 'observing');
    await h.client.cancel(request.operationId, cancelBy);
    const summary = await h.client.result(request.operationId);
    expect(summary.escalation?.reason).toBe('cancellation_unconfirmed');
    expect(h.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(summary.jobId!))).toHaveLength(1);
    expect(summary.escalation?.text).toContain(summary.jobId);
  });

  it('X5: a cancel before the provider accepted the job is held; when no job ever comes, no cancel is recorded or sent', async () => {
    const request = h.request('rest', {
      script: 'unavailable',
      createDeadline: { afterMs: 4_000 },
      resultDeadline: { afterMs: 5_000 },
      policy: { decisionDeadlineMs: 200 },
    });
    await h.client.start(request);
    // A 503 on create proves nothing (U1): the operation reconciles, with no job to cancel yet.
    await until(h, request.operationId, (s) => s === 'reconciliation');
    await expect(h.client.cancel(request.operationId, cancelBy)).resolves.toMatchObject({
      accepted: true,
      localState: 'reconciliation',
    });
    const summary = await h.client.result(request.operationId, { untilFinal: true });
    expect(summary.localState).not.toBe('cancelled');
    const recorded = (await h.store.entries(request.operationId)).filter(
      (e) => e.entry.body.kind === 'transition' && e.entry.body.to === 'cancel_requested',
    );
    expect(recorded).toHaveLength(0);
    // No job: nothing to send a cancel for, and none was recorded as sent.
    expect(summary.jobId).toBeUndefined();
    expect((await h.client.get(request.operationId)).cancel).toBeNull();
  });

  it('A1, A2: an escalation waits for a human; an extension by update adds bounded checks and the operation finishes', async () => {
    const request = h.request('rest', { script: 'review_then_done' });
    await h.client.start(request);
    await until(h, request.operationId, (s) => s === 'escalated');
    const escalation = await h.client.escalation(request.operationId);
    expect(escalation?.reason).toBe('unknown_state');
    expect(escalation?.text).not.toMatch(/continue\?/i);
    const extend = escalation!.options.find((o) => o.option === 'extend')!;
    // E2: the Web UI's current details end with the exact commands that answer it.
    const metadata = await h.env.client.workflow
      .getHandle(request.operationId)
      .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toContain(`asyncjob decide ${request.operationId} --option extend --extend `);
    expect(metadata.currentDetails).toContain(`--checks ${extend.extraStatusRequests} --by YOU --reason "WHY"`);
    // An escalation always waits on its decision deadline, on a timer that says so.
    const timerSummaries = async () =>
      ((await h.env.client.workflow.getHandle(request.operationId).fetchHistory()).events ?? [])
        .filter((e) => e.timerStartedEventAttributes)
        .map((e) => Buffer.from(e.userMetadata?.summary?.data ?? new Uint8Array()).toString('utf8'));
    for (let i = 0; i < 100 && !(await timerSummaries()).includes('"decision deadline"'); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await timerSummaries()).toContain('"decision deadline"');
    const usedBefore = (await h.client.get(request.operationId)).used.statusRequests;
    // Out of bounds: more checks than offered.
    await expect(
      h.client.decide(request.operationId, {
        option: 'extend',
        approvedBy: 'bob@example.com',
        reason: 'give it time',
        extendMs: extend.extendMs!,
        extraStatusRequests: extend.extraStatusRequests! + 100,
      }),
    ).rejects.toMatchObject({ refusalCode: 'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS' });
    const answer = await h.client.decide(request.operationId, {
      option: 'extend',
      approvedBy: 'bob@example.com',
      reason: 'reviewed in the provider console',
      extendMs: extend.extendMs!,
      extraStatusRequests: extend.extraStatusRequests!,
    });
    expect(answer.accepted).toBe(true);
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('succeeded');
    const record = await h.client.get(request.operationId);
    expect(record.used.statusRequests).toBeGreaterThan(usedBefore);
    expect(record.authorisation.approvals.at(-1)).toMatchObject({ approvedBy: 'bob@example.com', option: 'extend' });
  });

  it('G2, D4: an extension request escalates for a human; a second joins it, journalled; no requester can approve it; a human extends and polling goes on', async () => {
    const request = h.request('rest', { script: 'cancellable' });
    const operationId = request.operationId;
    await h.client.start(request);
    await until(h, operationId, (s) => s === 'accepted' || s === 'observing');
    const agent = 'agent:report-bot';
    const ask = { requestedBy: agent, reason: 'the report covers three years', extendMs: 600_000 };
    expect(await h.client.requestExtension(operationId, ask)).toMatchObject({
      accepted: true,
      localState: 'escalated',
    });
    const escalation = await h.client.escalation(operationId);
    expect(escalation?.reason).toBe('extension_requested');
    expect(escalation?.text).toContain('the report covers three years');
    // Another agent asks while the escalation is open: the request joins it, and the journal says so.
    const helper = 'agent:helper-bot';
    expect(
      await h.client.requestExtension(operationId, { ...ask, requestedBy: helper, reason: 'me too' }),
    ).toMatchObject({ accepted: true, localState: 'escalated' });
    const bodies = (await h.store.entries(operationId)).map((e) => e.entry.body);
    const raised = bodies.findIndex((b) => b.kind === 'escalation');
    expect(bodies.filter((b) => b.kind === 'escalation_joined')).toEqual([
      {
        kind: 'escalation_joined',
        escalation: raised + 1,
        requestedBy: helper,
        request: `${helper} asks for 600 s more: me too`,
      },
    ]);
    const extend = escalation!.options.find((o) => o.option === 'extend')!;
    const decision = {
      option: 'extend' as const,
      reason: 'three years of data take long',
      extendMs: extend.extendMs!,
      extraStatusRequests: extend.extraStatusRequests!,
    };
    for (const requester of [agent, helper])
      await expect(h.client.decide(operationId, { ...decision, approvedBy: requester })).rejects.toMatchObject({
        refusalCode: 'ASYNCJOB_ERR_SELF_APPROVAL',
      });
    const before = await h.client.get(operationId);
    const granted = await h.client.decide(operationId, { ...decision, approvedBy: 'alice@example.com' });
    expect(granted).toMatchObject({ accepted: true, localState: 'observing' });
    const after = await h.client.get(operationId);
    expect(after.budgets.maxStatusRequests).toBe(before.budgets.maxStatusRequests + extend.extraStatusRequests!);
    expect(after.authorisation.approvals.at(-1)).toMatchObject({ approvedBy: 'alice@example.com', option: 'extend' });
    await h.client.cancel(operationId, cancelBy);
    expect((await h.client.result(operationId)).localState).toBe('cancelled');
  });

  it('A2: a decision by signal is applied; an invalid one is rejected and recorded with its reason', async () => {
    const request = h.request('rest', { script: 'review_then_done' });
    await h.client.start(request);
    await until(h, request.operationId, (s) => s === 'escalated');
    const handle = h.env.client.workflow.getHandle(request.operationId);
    await handle.signal(decideSignal, {
      option: 'retry_collect',
      approvedBy: 'mallory@example.com',
      reason: 'not offered here',
    });
    const escalation = await h.client.escalation(request.operationId);
    const extend = escalation!.options.find((o) => o.option === 'extend')!;
    await handle.signal(decideSignal, {
      option: 'extend',
      approvedBy: 'bob@example.com',
      reason: 'approved',
      extendMs: extend.extendMs!,
      extraStatusRequests: extend.extraStatusRequests!,
    });
    // A signal is not waited on: without `untilFinal` the wait could return at the escalation still open.
    expect((await h.client.result(request.operationId, { untilFinal: true })).localState).toBe('succeeded');
    const decisions = (await h.store.entries(request.operationId))
      .map((e) => e.entry.body)
      .filter((b) => b.kind === 'decision');
    expect(decisions).toEqual([
      expect.objectContaining({
        decision: 'retry_collect',
        approvedBy: 'mallory@example.com',
        accepted: false,
        rejectionReason: expect.stringContaining('ASYNCJOB_ERR_OPTION_NOT_OFFERED'),
      }),
      expect.objectContaining({ decision: 'extend', approvedBy: 'bob@example.com', accepted: true }),
    ]);
  });

  it('W1: a webhook makes the operation finish long before its next poll, and only after a final status read', async () => {
    const request = h.request('rest', { script: 'slow_finish', policy: { baseDelayMs: 30_000, maxDelayMs: 60_000 } });
    await h.client.start(request);
    await until(h, request.operationId, (s) => s === 'accepted');
    const record = await h.client.get(request.operationId);
    const nextPollAtMs = record.schedule.nextPollAtMs!;
    // The provider job finishes 300 ms after its creation (the simulator's script); deliver the hint after that.
    const createdAtMs = Date.parse(h.sims.rest.jobsByToken(record.idempotencyToken)[0]!.createdAt);
    await new Promise((r) => setTimeout(r, Math.max(0, createdAtMs + 350 - Date.now())));
    await h.client.signalWebhook(request.operationId, {
      eventId: 'evt-w1',
      remoteJobId: record.jobId!,
      state: 'succeeded',
    });
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('succeeded');
    expect(Date.now()).toBeLessThan(nextPollAtMs);
    // The webhook alone proved nothing: exactly one status read, sent after it, confirmed the success.
    expect(h.statusReads('rest', record.jobId)).toHaveLength(1);
  });

  it('I2: starting the same operation twice joins it; a changed request under the same ID is refused', async () => {
    const request = h.request('rest', { script: 'slow_finish' });
    const first = await h.client.start(request);
    const second = await h.client.start(request);
    expect(second.operationId).toBe(first.operationId);
    await expect(h.client.start({ ...request, payload: { report: 'another' } })).rejects.toMatchObject({
      code: 'ASYNCJOB_ERR_FINGERPRINT_MISMATCH',
    });
    expect((await h.client.result(request.operationId)).localState).toBe('succeeded');
    const record = await h.client.get(request.operationId);
    expect(h.sims.rest.jobsByToken(record.idempotencyToken)).toHaveLength(1);
  });
});
