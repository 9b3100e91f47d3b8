import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationStore } from '../../src/adapters/store/operation-store';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { onStatusLoopWake } from '../../src/activities/loop-wake';
import { startWebhookReceiver, type WebhookReceiver, type WebhookSettings } from '../../src/webhooks/receiver';
import { signWebhook } from '../../src/webhooks/signature';
import type { WebhookHint } from '../../src/workflows/messages';
import { TRAVERSAL_CORPUS } from '../security/traversal-corpus';

const SECRET = 'whsec_receiver_test';
const settings: WebhookSettings = {
  signatureHeader: 'X-Signature',
  scheme: 'hmac-sha256-timestamped',
  secret: { secretEnv: 'TEST_WEBHOOK_SECRET' },
  toleranceMs: 300_000,
  eventIdField: 'event_id',
  jobIdField: 'job_id',
  stateField: 'state',
};

describe('webhook receiver (W1, F4)', () => {
  let store: OperationStore;
  let receiver: WebhookReceiver;
  const signals: { operationId: string; hint: WebhookHint }[] = [];

  beforeAll(async () => {
    store = await openSqliteStore({ path: path.join(await mkdtemp(path.join(tmpdir(), 'webhooks-')), 'store.db') });
    // The job is linked to its operation the way the activities link it: through a snapshot naming the job.
    await store.putOperation({
      operationId: 'op-webhook-1',
      provider: 'rest',
      localState: 'observing',
      remoteJobIds: ['job_42'],
      escalationReason: null,
      resultDeadlineAt: null,
      updatedAt: new Date().toISOString(),
      version: 3,
      record: {},
    });
    receiver = await startWebhookReceiver({
      store,
      webhookSettings: (provider) => (provider === 'rest' ? settings : undefined),
      signal: async (operationId, hint) => void signals.push({ operationId, hint }),
      env: { TEST_WEBHOOK_SECRET: SECRET },
    });
  });
  afterAll(async () => {
    await receiver?.stop();
    await store?.close();
  });

  const post = async (
    body: object,
    options: { t?: number; secret?: string; header?: string; provider?: string } = {},
  ) => {
    const raw = JSON.stringify(body);
    const t = options.t ?? Math.floor(Date.now() / 1000);
    const header = options.header ?? `t=${t},v1=${signWebhook(options.secret ?? SECRET, t, raw)}`;
    const res = await request(`${receiver.url}/webhooks/${options.provider ?? 'rest'}`, {
      method: 'POST',
      body: raw,
      headers: { 'content-type': 'application/json', 'x-signature': header },
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };

  it('W1: a genuine event is recorded, then the operation is signalled once, its status loop in this process woken', async () => {
    const before = signals.length;
    let woken = 0;
    const stopListening = onStatusLoopWake('op-webhook-1', (wake) => void (woken += wake === 'webhook' ? 1 : 0));
    const answer = await post({
      event_id: 'evt-1',
      job_id: 'job_42',
      state: 'succeeded',
      occurred_at: '2026-11-29T10:00:00Z',
    });
    expect(answer).toEqual({ status: 200, body: { status: 'recorded', operation: 'op-webhook-1', signalled: true } });
    expect(signals.slice(before)).toEqual([
      {
        operationId: 'op-webhook-1',
        hint: {
          eventId: 'evt-1',
          remoteJobId: 'job_42',
          state: 'succeeded',
          occurredAt: '2026-11-29T10:00:00Z',
          receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
      },
    ]);
    stopListening();
    expect(woken).toBe(1);
  });

  it('F4: the same event twice has one effect (deduplicated by provider and event ID)', async () => {
    const before = signals.length;
    expect((await post({ event_id: 'evt-2', job_id: 'job_42', state: 'running' })).body.status).toBe('recorded');
    expect(await post({ event_id: 'evt-2', job_id: 'job_42', state: 'running' })).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    });
    expect(signals.length - before).toBe(1);
  });

  it.each([
    ['a bad signature', { secret: 'wrong-secret' }, 'bad_signature'],
    ['a stale timestamp (replay)', { t: Math.floor(Date.now() / 1000) - 3600 }, 'stale_timestamp'],
    ['a missing signature', { header: '' }, 'missing_signature'],
  ])('W1: refuses %s with 401 and records nothing', async (_name, options, reason) => {
    const before = signals.length;
    expect(await post({ event_id: `evt-bad-${reason}`, job_id: 'job_42', state: 'succeeded' }, options)).toEqual({
      status: 401,
      body: { error: reason },
    });
    expect(signals.length).toBe(before);
    // Not recorded: the same event ID with a good signature is still new.
    expect((await post({ event_id: `evt-bad-${reason}`, job_id: 'job_42', state: 'succeeded' })).body.status).toBe(
      'recorded',
    );
  });

  it('answers 400 for an event without its fields, 404 for a provider without webhooks', async () => {
    expect(await post({ job_id: 'job_42' })).toEqual({ status: 400, body: { error: 'missing_or_invalid_event_id' } });
    expect((await post({ event_id: 'e', job_id: 'job_42' }, { provider: 'lro' })).status).toBe(404);
  });

  it.each(TRAVERSAL_CORPUS.map((id) => [JSON.stringify(id).slice(0, 30), id]))(
    'R6: a provider segment that could name a path (%s) is answered 404, and nothing is signalled',
    async (_label, provider) => {
      const before = signals.length;
      const answer = await post(
        { event_id: 'e-traversal', job_id: 'job_42' },
        { provider: encodeURIComponent(provider) },
      );
      expect(answer.status).toBe(404);
      expect(signals.length).toBe(before);
    },
  );

  it('F4: an event for a job no operation follows is recorded (202) without a signal', async () => {
    const before = signals.length;
    expect(await post({ event_id: 'evt-3', job_id: 'job_unknown', state: 'succeeded' })).toEqual({
      status: 202,
      body: { status: 'recorded', operation: null },
    });
    expect(signals.length).toBe(before);
  });
});
