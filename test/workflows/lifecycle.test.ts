import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARRIVAL_LAG_MS, DIALECTS, startHarness, type Harness } from './harness';

const running = (polls: number) => ({
  steps: [{ state: 'queued', polls: 1 }, { state: 'running', polls }, { state: 'succeeded' }],
});

describe('AsyncJobWorkflow lifecycle on a real server', () => {
  let h: Harness;

  beforeAll(async () => {
    const scripts = {
      three_polls: running(1),
      forever: { steps: [{ state: 'running' }] },
      fails: {
        steps: [{ state: 'running', polls: 1 }, { state: 'failed' }],
        error: { code: 'quota', message: 'quota exceeded' },
      },
      review: { steps: [{ state: 'running', polls: 1 }, { state: 'manual_review' }] },
      sync: { sync: true, steps: [{ state: 'succeeded' }] },
      batch: {
        steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }],
        result: { kind: 'batch', items: 5, failedItems: [2, 4] },
      },
      flaky_status: {
        steps: [{ state: 'running' }],
        faults: [{ on: 'status', nth: 'every', fault: { kind: 'http_error', status: 500 } }],
      },
      retry_after: {
        steps: [{ state: 'running', polls: 2 }, { state: 'succeeded' }],
        faults: [{ on: 'status', nth: 1, fault: { kind: 'http_error', status: 503, retryAfterSeconds: 1 } }],
      },
    };
    h = await startHarness('lifecycle', {
      scenarios: { rest: { scripts }, lro: { scripts }, 'operation-location': { scripts } } as never,
    });
  });
  afterAll(async () => h?.stop());

  it.each(DIALECTS)(
    'S1: %s happy path ends succeeded with a verified result, one provider job, a verifiable record',
    async (dialect) => {
      const request = h.request(dialect, { script: 'three_polls' });
      await h.client.start(request);
      const summary = await h.client.result(request.operationId);
      expect(summary.localState).toBe('succeeded');
      expect(summary.result).toMatchObject({ validation: 'valid' });
      expect(summary.result?.sha256).toMatch(/^[0-9a-f]{64}$/);
      const record = await h.client.get(request.operationId);
      // The Web UI's search attributes end on the final state, the job and the record's exact result deadline.
      expect(await h.client.describeOperation(request.operationId)).toMatchObject({
        localState: 'succeeded',
        jobId: record.jobId,
        resultDeadlineAt: new Date(record.deadlines.resultDeadlineMs).toISOString(),
      });
      expect(h.sims[dialect].jobsByToken(record.idempotencyToken)).toHaveLength(1);
      expect(h.sims[dialect].requests({ action: 'create', idempotencyKey: record.idempotencyToken })).toHaveLength(1);
      const verification = await h.store.verifyChains({ operationId: request.operationId });
      expect(verification.breaks).toEqual([]);
      const entries = (await h.store.entries(request.operationId)).map((e) => e.entry);
      expect(entries[0]?.body.kind).toBe('intent');
      expect(entries.map((e) => e.sequence)).toEqual(entries.map((_, i) => i + 1));
    },
  );

  it('C3: a synchronous success is collected under the same operation', async () => {
    const request = h.request('rest', { script: 'sync' });
    await h.client.start(request);
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('succeeded');
    expect(h.statusReads('rest', summary.jobId)).toHaveLength(0);
  });

  it('R3: a batch result is counted per item with the failed item references', async () => {
    const request = h.request('rest', { script: 'batch' });
    await h.client.start(request);
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('succeeded');
    expect(summary.result).toMatchObject({ recordCount: 5, failedItemCount: 2, failedItems: ['item-2', 'item-4'] });
  });

  it('S2: a provider failure ends failed and keeps the provider error', async () => {
    const request = h.request('lro', { script: 'fails' });
    await h.client.start(request);
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('failed');
  });

  it('S3: the deadline stops polling with deadline_exceeded, and no request is sent after it', async () => {
    const request = h.request('rest', {
      script: 'forever',
      // A create is never written after its deadline (I3): all of the window, for a loaded machine.
      createDeadline: { afterMs: 1_500 },
      resultDeadline: { afterMs: 1_500 },
      policy: { baseDelayMs: 100, maxDelayMs: 200, decisionDeadlineMs: 300 },
    });
    await h.client.start(request);
    const summary = await h.client.result(request.operationId);
    expect(summary.escalation?.reason).toBe('deadline_exceeded');
    const record = await h.client.get(request.operationId);
    const statusReads = h.statusReads('rest', record.jobId);
    // B2: every read was reserved first; a reservation made just before the deadline may stay unused.
    expect(statusReads.length).toBeGreaterThan(0);
    expect(record.used.statusRequests - statusReads.length).toBeGreaterThanOrEqual(0);
    expect(record.used.statusRequests - statusReads.length).toBeLessThanOrEqual(1);
    for (const read of statusReads) expect(read.atMs).toBeLessThan(record.deadlines.resultDeadlineMs + ARRIVAL_LAG_MS);
  });

  it('S4: the request budget is never exceeded: exactly maxStatusRequests reads, then request_budget_exhausted', async () => {
    const request = h.request('operation-location', {
      script: 'forever',
      policy: { baseDelayMs: 10, maxDelayMs: 20, maxStatusRequests: 4, decisionDeadlineMs: 300 },
    });
    await h.client.start(request);
    const summary = await h.client.result(request.operationId);
    expect(summary.escalation?.reason).toBe('request_budget_exhausted');
    expect(h.statusReads('operation-location', summary.jobId)).toHaveLength(4);
  });

  it('S5: the transport-failure budget stops with provider_failure after exactly that many failures', async () => {
    const request = h.request('rest', {
      script: 'flaky_status',
      policy: { baseDelayMs: 10, maxDelayMs: 20, maxTransportFailures: 3, decisionDeadlineMs: 300 },
    });
    await h.client.start(request);
    const summary = await h.client.result(request.operationId);
    expect(summary.escalation?.reason).toBe('provider_failure');
    expect(h.statusReads('rest', summary.jobId)).toHaveLength(3);
  });

  it('P1: an unknown state escalates unknown_state and sends no further request', async () => {
    const request = h.request('rest', {
      script: 'review',
      policy: { baseDelayMs: 10, maxDelayMs: 20, decisionDeadlineMs: 500 },
    });
    await h.client.start(request);
    const summary = await h.client.result(request.operationId);
    expect(summary.escalation?.reason).toBe('unknown_state');
    expect(summary.remoteState).toBe('manual_review');
    // One read saw running, the next saw manual_review; nothing after it.
    expect(h.statusReads('rest', summary.jobId)).toHaveLength(2);
    expect(summary.statusRequestsUsed).toBe(2);
  });

  it('H1, P3: a 503 with Retry-After 1 s delays the next status read by at least 1 s (measured at the provider)', async () => {
    const request = h.request('rest', { script: 'retry_after' });
    await h.client.start(request);
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('succeeded');
    const reads = h.statusReads('rest', summary.jobId);
    const refused = reads.findIndex((r) => r.status === 503);
    expect(refused).toBeGreaterThanOrEqual(0);
    expect(reads[refused + 1]!.atMs - reads[refused]!.atMs).toBeGreaterThanOrEqual(1_000);
  });
});
