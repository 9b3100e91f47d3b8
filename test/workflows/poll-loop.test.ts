/**
 * Status reads inside one heartbeating activity (`pollStatus`, core/poll-loop.ts, and the create's own for its first
 * 2 s) on a real server: the budget and the deadline reached inside the loop, a cancel and a webhook arriving while
 * it waits. Asserted from the
 * simulator's request log, the store's journal and the workflow's history, never from the workflow's opinion.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../../src/webhooks/receiver';
import { startHarness, type Harness } from './harness';
import {
  expectBudgetStop,
  expectDeadlineStop,
  journal,
  localActivityResults,
  scheduledActivities,
  untilReadsCounted,
} from './status-loop-checks';

const WEBHOOK_SECRET = `whsec-${randomBytes(16).toString('hex')}`;

describe('status reads inside one activity (P4, B2)', () => {
  let h: Harness;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    const scripts = {
      forever: { steps: [{ state: 'running' }] },
      cancellable: { steps: [{ state: 'running' }], cancel: { afterMs: 50, outcome: 'cancelled' } },
      two_reads: { steps: [{ state: 'running', polls: 2 }, { state: 'succeeded' }], webhook: { mode: 'none' } },
      slow_create: {
        steps: [{ state: 'running' }],
        cancel: { afterMs: 50, outcome: 'cancelled' },
        faults: [{ on: 'create', nth: 1, fault: { kind: 'delay', ms: 1_500 } }],
      },
    };
    const ref: { h?: Harness } = {};
    receiver = await startWebhookReceiver({
      store: {
        recordWebhookEvent: (event) => ref.h!.store.recordWebhookEvent(event),
        findByProviderJobId: (provider, jobId) => ref.h!.store.findByProviderJobId(provider, jobId),
      },
      webhookSettings: (provider) =>
        provider === ref.h?.provider('rest')
          ? {
              signatureHeader: 'X-Signature',
              scheme: 'hmac-sha256-timestamped',
              secret: { secretEnv: 'WEBHOOK_SECRET' },
              toleranceMs: 300_000,
              eventIdField: 'event_id',
              jobIdField: 'job_id',
              stateField: 'state',
            }
          : undefined,
      signal: (operationId, hint) => ref.h!.client.signalWebhook(operationId, hint),
      env: { WEBHOOK_SECRET },
    });
    h = await startHarness('poll-loop', { scenarios: { rest: { scripts } } as never });
    ref.h = h;
    h.sims.rest.setScenario({
      scripts,
      webhook: { url: `${receiver.url}/webhooks/${h.provider('rest')}`, secret: WEBHOOK_SECRET },
    } as never);
  });
  afterAll(async () => {
    await h?.stop();
    await receiver?.stop();
  });

  it('S4, B2: the budget is reached inside the loop: exactly maxStatusRequests reads from two activities, the stop recorded by the worker', async () => {
    const request = h.request('rest', {
      script: 'forever',
      policy: { baseDelayMs: 400, maxDelayMs: 400, minJitterRatio: 1, maxStatusRequests: 8, decisionDeadlineMs: 300 },
    });
    await h.client.start(request);
    await expectBudgetStop(h, request.operationId, 8);
    // The create's activity reads for its first 2 s (P4), the status loop reads on to the budget: the first read
    // leaves `accepted`, which the workflow is shown at its next turn (P8), so the loop is one activity.
    expect(await scheduledActivities(h, request.operationId)).toEqual(['createJob', 'pollStatus']);
  });

  it('S4, B2: a budget reached while the create reads on is stopped there: one activity made every read', async () => {
    const request = h.request('rest', {
      script: 'forever',
      policy: { baseDelayMs: 50, maxDelayMs: 50, maxStatusRequests: 8, decisionDeadlineMs: 300 },
    });
    await h.client.start(request);
    await expectBudgetStop(h, request.operationId, 8);
    expect(await scheduledActivities(h, request.operationId)).toEqual(['createJob']);
  });

  it('S3, B2: the deadline is reached inside the loop: no read at or after it, every counted read sent or unused', async () => {
    const request = h.request('rest', {
      script: 'forever',
      // A create is never written after its deadline (I3): all of the window, for a loaded machine.
      createDeadline: { afterMs: 3_000 },
      resultDeadline: { afterMs: 3_000 },
      policy: { baseDelayMs: 150, maxDelayMs: 150, decisionDeadlineMs: 300 },
    });
    await h.client.start(request);
    const reads = await expectDeadlineStop(h, request.operationId);
    const pollActivities = (await scheduledActivities(h, request.operationId)).filter((name) => name === 'pollStatus');
    expect(pollActivities.length).toBeLessThan(reads.length / 2);
  });

  it('X1, B2: a cancel arriving while the loop waits takes the operation back: the cancel sent once, every counted read accounted for', async () => {
    // Reads 800 ms apart: the first two by the create's activity (its first 2 s), the third by the status loop.
    const request = h.request('rest', {
      script: 'cancellable',
      policy: { baseDelayMs: 800, maxDelayMs: 800, minJitterRatio: 1, cancelDeadlineMs: 10_000 },
    });
    await h.client.start(request);
    await untilReadsCounted(h, request.operationId, 3);
    const answer = await h.client.cancel(request.operationId, {
      requestedBy: 'alice@example.com',
      reason: 'no longer needed',
      expectedEffect: 'the report is not produced',
    });
    expect(answer).toMatchObject({ accepted: true, localState: 'cancel_requested' });
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('cancelled');
    const record = await h.client.get(request.operationId);
    expect(h.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(summary.jobId!))).toHaveLength(1);
    // Every status request counted reached the provider: the loop reads nothing after handing the operation back.
    expect(h.statusReads('rest', record.jobId)).toHaveLength(record.used.statusRequests);
    const history = await h.env.client.workflow.getHandle(request.operationId).fetchHistory();
    expect(history.events?.some((event) => event.activityTaskCancelRequestedEventAttributes)).toBe(true);
  });

  it("P4, X1, B2: a cancel arriving while the loop waits in the workflow worker's process is taken there at once: woken in process, the cancel sent once", async () => {
    const request = h.request('rest', {
      script: 'cancellable',
      // Reads 2 s, 2 s, then 4 s apart (inside the loop's 30 s): the loop waits when the cancel comes after read 2.
      policy: { baseDelayMs: 2_000, maxDelayMs: 20_000, minJitterRatio: 1, cancelDeadlineMs: 10_000 },
    });
    await h.client.start(request);
    await untilReadsCounted(h, request.operationId, 2);
    await h.client.cancel(request.operationId, {
      requestedBy: 'alice@example.com',
      reason: 'no longer needed',
      expectedEffect: 'the report is not produced',
    });
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('cancelled');
    expect(h.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(summary.jobId!))).toHaveLength(1);
    const record = await h.client.get(request.operationId);
    expect(h.statusReads('rest', record.jobId)).toHaveLength(record.used.statusRequests);
    // The workflow's local activity found the loop waiting in this process and woke it (a later message, the
    // provider's webhook for the cancelled job, may find no loop running).
    expect((await localActivityResults(h, request.operationId, 'wakeStatusLoop'))[0]).toEqual({ loopsWoken: 1 });
  });

  it('X1, B2: a cancel arriving while the create is at the provider asks it back by the wake alone: the create sent and recorded once, never cancelled, the cancel sent once', async () => {
    const request = h.request('rest', { script: 'slow_create', policy: { cancelDeadlineMs: 10_000 } });
    await h.client.start(request);
    const handle = h.env.client.workflow.getHandle(request.operationId);
    // The create's activity has started: its request is held 1.5 s at the provider.
    const end = Date.now() + 30_000;
    for (;;) {
      const { raw } = await handle.describe();
      const create = raw.pendingActivities?.find((a) => a.activityType?.name === 'createJob');
      if (create?.state === 2 /* PENDING_ACTIVITY_STATE_STARTED */) break;
      if (Date.now() > end) throw new Error('the create never started');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await h.client.cancel(request.operationId, { requestedBy: 'alice@example.com', reason: 'no longer needed' });
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('cancelled');
    const record = await h.client.get(request.operationId);
    expect(record.used.createAttempts).toBe(1);
    const creates = (await journal(h, request.operationId)).filter(
      (entry) => entry.body.kind === 'observation' && entry.body.action === 'create',
    );
    expect(creates.map((entry) => (entry.body as { transport?: string }).transport)).toEqual(['response']);
    expect(h.sims.rest.requests({ action: 'create', idempotencyKey: record.idempotencyToken })).toHaveLength(1);
    expect(h.sims.rest.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(summary.jobId!))).toHaveLength(1);
    const history = await handle.fetchHistory();
    expect(history.events?.some((event) => event.activityTaskCancelRequestedEventAttributes)).toBe(false);
  });

  it('W1: a webhook arriving while the loop waits is confirmed by one status read sent at once, not a second one from its signal', async () => {
    // Reads 4 s apart (inside the loop's 30 s); the job succeeds on its third read, whenever that is.
    const request = h.request('rest', {
      script: 'two_reads',
      policy: { baseDelayMs: 4_000, maxDelayMs: 4_000, minJitterRatio: 1 },
    });
    await h.client.start(request);
    // Read 1 moves the operation to observing (shown to the workflow at its next turn, P8); read 2 follows in the same loop,
    // which then waits.
    await untilReadsCounted(h, request.operationId, 2);
    const jobId = (await h.client.get(request.operationId)).jobId!;
    await h.sims.rest.deliverWebhook(jobId);
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('succeeded');
    const entries = await journal(h, request.operationId);
    const hint = entries.find((entry) => entry.body.kind === 'observation' && entry.body.action === 'webhook');
    expect(hint?.body).toMatchObject({ decision: 'noted', note: expect.stringContaining('already confirmed') });
    const reads = h.statusReads('rest', summary.jobId);
    expect(reads).toHaveLength(3);
    const second = entries.filter((entry) => entry.body.kind === 'observation' && entry.body.action === 'status')[1]!;
    const plannedAtMs = Date.parse((second.body as { nextPollAt: string }).nextPollAt);
    expect(reads[2]!.atMs).toBeLessThan(plannedAtMs);
    // The third read came from the waiting loop itself, not from a new activity scheduled for the signal.
    expect((await scheduledActivities(h, request.operationId)).filter((name) => name === 'pollStatus')).toHaveLength(1);
  });
});
