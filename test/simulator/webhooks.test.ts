import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator';
import { call, obj, pollUntil, TOKEN } from './helpers';

const SECRET = 'whsec-test-secret';
interface Received {
  signature: string;
  raw: string;
  event: { event_id: string; job_id: string; state: string; occurred_at: string };
}
let received: Received[] = [];
let receiver: Server;
let sim: Simulator;

/** Verifies `X-Signature: t=..,v1=..` as a receiver following docs/dialects.md would. */
function verify(secret: string, header: string, raw: string): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const expected = createHmac('sha256', secret).update(`${parts['t']}.${raw}`).digest();
  const given = Buffer.from(parts['v1'] ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      received.push({
        signature: String(req.headers['x-signature']),
        raw,
        event: JSON.parse(raw) as Received['event'],
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  sim = await startSimulator({
    dialect: 'rest',
    token: TOKEN,
    webhook: { url, secret: SECRET },
    scenario: {
      scripts: {
        default: {
          steps: [{ state: 'queued', durationMs: 20 }, { state: 'running', durationMs: 20 }, { state: 'succeeded' }],
        },
        twice: { steps: [{ state: 'running', durationMs: 20 }, { state: 'succeeded' }], webhook: { mode: 'twice' } },
        bad: {
          steps: [{ state: 'running', durationMs: 20 }, { state: 'succeeded' }],
          webhook: { mode: 'bad_signature' },
        },
        shuffled: {
          steps: [{ state: 'queued', durationMs: 20 }, { state: 'running', durationMs: 20 }, { state: 'succeeded' }],
          webhook: { mode: 'out_of_order' },
        },
        late: { steps: [{ state: 'succeeded', durationMs: 0 }], webhook: { mode: 'once', delayMs: 150 } },
        silent: { steps: [{ state: 'running', durationMs: 20 }, { state: 'succeeded' }], webhook: { mode: 'none' } },
      },
    },
  });
});
afterAll(async () => {
  await sim.stop();
  await new Promise<void>((r) => receiver.close(() => r()));
});
beforeEach(() => {
  sim.reset();
  received = [];
});

async function createJob(script: string, key: string): Promise<string> {
  const res = await call(`${sim.url}/v1/jobs`, {
    method: 'POST',
    body: { scenario: script },
    headers: { 'idempotency-key': key },
  });
  return String(obj(res.json)['job_id']);
}

/** Deliveries for one job (deliveries of earlier tests may still be in flight after a reset). */
const forJob = (id: string) => received.filter((r) => r.event.job_id === id);
const waitFor = (id: string, n: number) =>
  pollUntil(
    async () => forJob(id),
    (list) => list.length >= n,
    300,
    10,
  );

describe('webhooks', () => {
  it('W1: each state change is delivered once, signed with HMAC-SHA256 over "<t>.<body>", without any status read', async () => {
    const id = await createJob('default', 'wh-1');
    const got = await waitFor(id, 2);
    expect(got.map((r) => r.event.state)).toEqual(['running', 'succeeded']);
    for (const r of got) {
      expect(r.event.job_id).toBe(id);
      expect(verify(SECRET, r.signature, r.raw)).toBe(true);
      expect(verify('another-secret', r.signature, r.raw)).toBe(false);
    }
    expect(new Set(got.map((r) => r.event.event_id)).size).toBe(2);
    expect(sim.requests({ action: 'status' })).toHaveLength(0);
    // Recorded once our answer reached the simulator: wait for both records, then check each.
    const deliveries = await pollUntil(
      async () => sim.webhookDeliveries().filter((d) => d.jobId === id),
      (list) => list.length >= 2,
      300,
      10,
    );
    expect(deliveries).toHaveLength(2);
    expect(deliveries.every((d) => d.status === 204 && d.signedCorrectly)).toBe(true);
  });

  it('F4: delivered twice with the same event_id', async () => {
    const id = await createJob('twice', 'wh-2');
    const got = await waitFor(id, 2);
    expect(got).toHaveLength(2);
    expect(got[0]!.event.event_id).toBe(got[1]!.event.event_id);
  });

  it('W1: a bad signature does not verify with the shared secret', async () => {
    const id = await createJob('bad', 'wh-3');
    const [got] = await waitFor(id, 1);
    expect(verify(SECRET, got!.signature, got!.raw)).toBe(false);
    // The simulator records a delivery once our answer reached it, which can be after the receiver saw the body.
    const delivery = await pollUntil(
      async () => sim.webhookDeliveries().find((d) => d.jobId === id),
      (found) => found !== undefined,
      300,
      10,
    );
    expect(delivery?.signedCorrectly).toBe(false);
  });

  it('F4: out of order: the terminal event arrives before the earlier ones', async () => {
    const id = await createJob('shuffled', 'wh-4');
    const got = await waitFor(id, 2);
    expect(got.map((r) => r.event.state)).toEqual(['succeeded', 'running']);
  });

  it('late delivery waits delayMs; mode none sends nothing; deliverWebhook sends on demand', async () => {
    const lateId = await createJob('late', 'wh-5');
    const silentId = await createJob('silent', 'wh-6');
    await new Promise((r) => setTimeout(r, 60));
    expect(forJob(lateId)).toHaveLength(0);
    expect(await waitFor(lateId, 1)).toHaveLength(1);
    expect(forJob(silentId)).toHaveLength(0);
    const rec = await sim.deliverWebhook(silentId, { state: 'succeeded', eventId: 'evt-manual' });
    expect(rec.status).toBe(204);
    expect(received.at(-1)!.event).toMatchObject({ event_id: 'evt-manual', job_id: silentId, state: 'succeeded' });
    expect(verify(SECRET, received.at(-1)!.signature, received.at(-1)!.raw)).toBe(true);
  });
});
