/**
 * F4 and W1 end to end: the simulator POSTs signed webhooks (twice, out of order, late, badly signed) to a
 * receiver started here on the store the worker process writes; the receiver signals the workflow through
 * `AsyncJobClient.signalWebhook`. Asserted from the simulator's delivery and request logs and the store's rows.
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../../src/core/operation';
import {
  startWebhookReceiver,
  type WebhookOutcome,
  type WebhookReceiver,
  type WebhookSettings,
} from '../../../src/webhooks/receiver';
import { DIALECTS, startFaultWorld, type FaultWorld, type WorkerProcess } from './fault-harness';

const WEBHOOK_SECRET = `whsec-${randomBytes(16).toString('hex')}`;
const settings: WebhookSettings = {
  signatureHeader: 'X-Signature',
  scheme: 'hmac-sha256-timestamped',
  secret: { secretEnv: 'ASYNCJOB_SIMULATOR_WEBHOOK_SECRET' },
  toleranceMs: 300_000,
  eventIdField: 'event_id',
  jobIdField: 'job_id',
  stateField: 'state',
};
const steps = [{ state: 'running', durationMs: 400 }, { state: 'succeeded' }];
const scripts = {
  twice: { steps, webhook: { mode: 'twice' } },
  out_of_order: { steps, webhook: { mode: 'out_of_order' } },
  bad_signature: { steps, webhook: { mode: 'bad_signature' } },
  late: { steps, webhook: { mode: 'once', delayMs: 1_500 } },
};
type Mode = keyof typeof scripts;
// Slow polling: only a webhook makes the workflow read early.
const slowPolicy = { baseDelayMs: 4_000, maxDelayMs: 4_000, minJitterRatio: 1, notFoundWindowMs: 2_000 };

describe('F4: webhooks twice, out of order, late and badly signed', () => {
  let world: FaultWorld;
  let worker: WorkerProcess;
  let receiver: WebhookReceiver;
  const outcomes: WebhookOutcome[] = [];

  beforeAll(async () => {
    // The receiver starts first (its URL goes into the simulators' scenarios) and reaches the world lazily.
    const ref: { world?: FaultWorld } = {};
    receiver = await startWebhookReceiver({
      store: {
        recordWebhookEvent: (event) => ref.world!.store.recordWebhookEvent(event),
        findByProviderJobId: (provider, jobId) => ref.world!.store.findByProviderJobId(provider, jobId),
      },
      webhookSettings: (provider) =>
        ref.world !== undefined && DIALECTS.some((d) => ref.world!.provider(d) === provider) ? settings : undefined,
      signal: (operationId, hint) => ref.world!.client.signalWebhook(operationId, hint),
      env: { ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: WEBHOOK_SECRET },
      onOutcome: (o) => outcomes.push(o),
    });
    const label = 'webhooks';
    // Provider names are only known once the world exists; the scenario is installed right after.
    world = await startFaultWorld(label);
    ref.world = world;
    for (const d of DIALECTS)
      world.sims[d].setScenario({
        scripts,
        webhook: { url: `${receiver.url}/webhooks/${world.provider(d)}`, secret: WEBHOOK_SECRET },
      } as never);
    worker = world.spawnWorker();
    await worker.ready;
  });
  afterAll(async () => {
    await world?.stop();
    await receiver?.stop();
  });

  function storedEvents(provider: string): { event_id: string; operation_id: string | null }[] {
    const db = new Database(world.storeFile, { readonly: true, fileMustExist: true });
    try {
      return db.prepare('SELECT event_id, operation_id FROM webhook_events WHERE provider = ?').all(provider) as {
        event_id: string;
        operation_id: string | null;
      }[];
    } finally {
      db.close();
    }
  }

  async function run(dialect: (typeof DIALECTS)[number], mode: Mode, policy: Record<string, unknown> = slowPolicy) {
    const request = world.request(dialect, { script: mode, policy });
    await world.client.start(request);
    const summary = await world.client.result(request.operationId);
    const record = (await world.store.getOperation(request.operationId))!.record as unknown as OperationRecord;
    const rawId = world.sims[dialect].job(record.jobId!)!.rawId;
    const deliveries = world.sims[dialect]
      .webhookDeliveries()
      .filter((d) => d.jobId === rawId || d.jobId === record.jobId);
    const reads = world.jobRequests(dialect, record.jobId!, 'status');
    return { request, summary, record, deliveries, reads, rawId };
  }

  it.each(DIALECTS)(
    'F4, W1: %s the same events delivered twice: one stored event per event ID, duplicates have no effect, a status read confirms before success',
    async (dialect) => {
      const { request, summary, deliveries, reads } = await run(dialect, 'twice');
      expect(summary.localState).toBe('succeeded');
      const ids = [...new Set(deliveries.map((d) => d.eventId))];
      expect(deliveries.length).toBe(ids.length * 2);
      const rows = storedEvents(world.provider(dialect)).filter((r) => ids.includes(r.event_id));
      expect(rows.map((r) => r.event_id).sort()).toEqual([...ids].sort());
      expect(rows.every((r) => r.operation_id === request.operationId)).toBe(true);
      expect(
        outcomes.filter((o) => o.eventId !== undefined && ids.includes(o.eventId) && o.result === 'duplicate'),
      ).toHaveLength(ids.length);
      // W1: the workflow read the status after the terminal event arrived and before it declared success.
      const terminal = deliveries.find((d) => /succeeded|SUCCEEDED|Succeeded/.test(d.state))!;
      expect(terminal).toBeDefined();
      expect(reads.at(-1)!.atMs).toBeGreaterThanOrEqual(terminal.atMs);
      // The webhook, not the 2-4 s poll delay, ended the wait: the success was read well before a second planned poll.
      expect(reads.length).toBeLessThanOrEqual(3);
    },
  );

  it('F4, W1: out-of-order delivery (terminal event first): one stored event per ID, final status read, succeeded', async () => {
    const { summary, deliveries, reads } = await run('rest', 'out_of_order');
    expect(summary.localState).toBe('succeeded');
    const ids = new Set(deliveries.map((d) => d.eventId));
    expect(storedEvents(world.provider('rest')).filter((r) => ids.has(r.event_id))).toHaveLength(ids.size);
    const firstTerminal = deliveries.find((d) => d.state === 'succeeded')!;
    expect(reads.at(-1)!.atMs).toBeGreaterThanOrEqual(firstTerminal.atMs);
  });

  it('F4, W1: a badly signed webhook is refused (401), never stored, and the status loop still ends the operation', async () => {
    const { summary, deliveries, reads, record } = await run('rest', 'bad_signature', {
      baseDelayMs: 300,
      maxDelayMs: 300,
      notFoundWindowMs: 2_000,
    });
    expect(summary.localState).toBe('succeeded');
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.every((d) => !d.signedCorrectly && d.status === 401)).toBe(true);
    const ids = new Set(deliveries.map((d) => d.eventId));
    expect(storedEvents(world.provider('rest')).filter((r) => ids.has(r.event_id))).toEqual([]);
    expect(outcomes.filter((o) => o.reason === 'bad_signature').length).toBeGreaterThanOrEqual(deliveries.length);
    expect(reads.length).toBe(record.used.statusRequests);
  });

  it('F4, W1: a late webhook after the operation ended is recorded for the audit and causes no request', async () => {
    const { request, summary, rawId, record } = await run('rest', 'late', {
      baseDelayMs: 50,
      maxDelayMs: 100,
      notFoundWindowMs: 2_000,
    });
    expect(summary.localState).toBe('succeeded');
    const readsAtEnd = world.jobRequests('rest', record.jobId!, 'status').length;
    // Wait for the late delivery to arrive (the job became succeeded ~400 ms in; delivery 1.5 s after that).
    const until = Date.now() + 10_000;
    const delivered = () =>
      world.sims.rest.webhookDeliveries().filter((d) => d.jobId === rawId && d.status !== undefined);
    let late = delivered();
    while (late.length === 0 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      late = delivered();
    }
    expect(late.length).toBeGreaterThan(0);
    expect(late.every((d) => d.status === 200 || d.status === 202)).toBe(true);
    expect(
      storedEvents(world.provider('rest'))
        .filter((r) => late.some((d) => d.eventId === r.event_id))
        .every((r) => r.operation_id === request.operationId),
    ).toBe(true);
    expect(world.jobRequests('rest', record.jobId!, 'status')).toHaveLength(readsAtEnd);
    expect(readsAtEnd).toBe(record.used.statusRequests);
  });
});
