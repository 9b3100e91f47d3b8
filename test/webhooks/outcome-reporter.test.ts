/**
 * The receiver's refusals are logged with their reason (a JSON line through the worker's logger, never the body
 * or the signature) and counted per reason (`asyncjob_webhook_requests`), with provider names from the URL
 * counted only when the receiver serves them.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { MetricMeter, MetricTags } from '@temporalio/common';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationStore } from '../../src/adapters/store/operation-store';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { createJsonLogger } from '../../src/logging';
import { WEBHOOK_REQUESTS_METRIC, webhookOutcomeReporter } from '../../src/webhooks/outcome-reporter';
import { startWebhookReceiver, type WebhookReceiver, type WebhookSettings } from '../../src/webhooks/receiver';
import { signWebhook } from '../../src/webhooks/signature';

const SECRET = 'whsec_reporter_test_secret';
const settings: WebhookSettings = {
  signatureHeader: 'X-Signature',
  scheme: 'hmac-sha256-timestamped',
  secret: { secretEnv: 'REPORTER_WEBHOOK_SECRET' },
  toleranceMs: 300_000,
  eventIdField: 'event_id',
  jobIdField: 'job_id',
  stateField: 'state',
};

/** A meter that records what is added to its counters. */
function recordingMeter(): { meter: MetricMeter; counts: { name: string; value: number; tags: MetricTags }[] } {
  const counts: { name: string; value: number; tags: MetricTags }[] = [];
  const counter = (name: string) => {
    const c = {
      name,
      unit: '1',
      description: '',
      kind: 'counter' as const,
      valueType: 'int' as const,
      add: (value: number, tags: MetricTags = {}) => void counts.push({ name, value, tags }),
      withTags: () => c,
    };
    return c;
  };
  const meter = { createCounter: counter } as unknown as MetricMeter;
  return { meter, counts };
}

describe('webhook outcome reporter', () => {
  let store: OperationStore;
  let receiver: WebhookReceiver;
  const lines: string[] = [];
  const { meter, counts } = recordingMeter();

  beforeAll(async () => {
    store = await openSqliteStore({
      path: path.join(await mkdtemp(path.join(tmpdir(), 'webhook-reporter-')), 'store.db'),
    });
    receiver = await startWebhookReceiver({
      store,
      webhookSettings: (provider) => (provider === 'reports' ? settings : undefined),
      signal: async () => undefined,
      env: { REPORTER_WEBHOOK_SECRET: SECRET },
      onOutcome: webhookOutcomeReporter({
        logger: createJsonLogger({ level: 'info', write: (line) => void lines.push(line), secretValues: [SECRET] }),
        meter,
        isKnownProvider: (name) => name === 'reports',
      }),
    });
  });
  afterAll(async () => {
    await receiver?.stop();
    await store?.close();
  });

  const post = async (provider: string, raw: string, header: string | undefined) => {
    const res = await request(`${receiver.url}/webhooks/${provider}`, {
      method: 'POST',
      body: raw,
      headers: { 'content-type': 'application/json', ...(header !== undefined ? { 'x-signature': header } : {}) },
    });
    await res.body.dump();
    return res.statusCode;
  };
  const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

  it('logs each refusal with its reason, at warn, and counts it per reason', async () => {
    const body = JSON.stringify({
      event_id: 'evt-secret-looking-body-1',
      job_id: 'job_1',
      state: 'succeeded',
      note: 'body-marker-7731',
    });
    const badSignature = `t=${Math.floor(Date.now() / 1000)},v1=${'ab'.repeat(32)}`;
    expect(await post('reports', body, badSignature)).toBe(401);
    expect(await post('reports', body, undefined)).toBe(401);
    expect(
      await post(
        'reports',
        body,
        `t=${Math.floor(Date.now() / 1000) - 3600},v1=${signWebhook(SECRET, Math.floor(Date.now() / 1000) - 3600, body)}`,
      ),
    ).toBe(401);

    const refusals = parsed().filter((l) => l.msg === 'webhook refused');
    expect(refusals.map((l) => l.reason)).toEqual(['bad_signature', 'missing_signature', 'stale_timestamp']);
    for (const line of refusals)
      expect(line).toMatchObject({ level: 'warn', provider: 'reports', status: 401, result: 'refused' });
    // Never the body, never the signature.
    const all = lines.join('');
    expect(all).not.toContain('body-marker-7731');
    expect(all).not.toContain('ab'.repeat(32));
    expect(all).not.toContain('x-signature');

    const refusedCounts = counts.filter((c) => c.name === WEBHOOK_REQUESTS_METRIC && c.tags.result === 'refused');
    expect(refusedCounts.map((c) => c.tags.reason)).toEqual(['bad_signature', 'missing_signature', 'stale_timestamp']);
    expect(refusedCounts.every((c) => c.value === 1 && c.tags.provider === 'reports' && c.tags.status === '401')).toBe(
      true,
    );
  });

  it('counts names it does not serve as provider="unknown", so the URL cannot mint metric series', async () => {
    expect(await post('made-up-provider-123', '{}', undefined)).toBe(404);
    const last = counts[counts.length - 1]!;
    expect(last.tags).toMatchObject({
      provider: 'unknown',
      result: 'refused',
      reason: 'provider_has_no_webhooks',
      status: '404',
    });
    // The log line keeps the name asked for (bounded by the route's pattern), for the operator.
    expect(parsed().at(-1)).toMatchObject({
      msg: 'webhook refused',
      provider: 'made-up-provider-123',
      reason: 'provider_has_no_webhooks',
    });
  });

  it('logs an accepted webhook at info with its event, and counts it with reason "none"', async () => {
    const body = JSON.stringify({ event_id: 'evt-ok-1', job_id: 'job_unknown', state: 'running' });
    const t = Math.floor(Date.now() / 1000);
    expect(await post('reports', body, `t=${t},v1=${signWebhook(SECRET, t, body)}`)).toBe(202);
    expect(parsed().at(-1)).toMatchObject({
      level: 'info',
      msg: 'webhook received',
      provider: 'reports',
      result: 'unknown_job',
      eventId: 'evt-ok-1',
      status: 202,
    });
    expect(counts.at(-1)!.tags).toMatchObject({
      provider: 'reports',
      result: 'unknown_job',
      reason: 'none',
      status: '202',
    });
  });

  it('logs a webhook it cannot check (secret unavailable) as failed, at error', async () => {
    const lonely: string[] = [];
    const report = webhookOutcomeReporter({ logger: createJsonLogger({ write: (l) => void lonely.push(l) }) });
    report({ provider: 'reports', status: 500, result: 'error', reason: 'webhook_secret_unavailable' });
    expect(JSON.parse(lonely[0]!)).toMatchObject({
      level: 'error',
      msg: 'webhook failed',
      reason: 'webhook_secret_unavailable',
    });
  });

  it('never throws, whatever the logger or meter do', () => {
    const report = webhookOutcomeReporter({
      logger: {
        info: () => {
          throw new Error('x');
        },
        warn: () => {
          throw new Error('x');
        },
        error: () => {
          throw new Error('x');
        },
      },
    });
    expect(() => report({ provider: 'p', status: 200, result: 'recorded' })).not.toThrow();
  });
});
