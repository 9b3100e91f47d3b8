import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator';
import { call, obj, pollUntil, TOKEN } from './helpers';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({
    dialect: 'lro',
    token: TOKEN,
    seed: 7,
    scenario: {
      scripts: {
        default: {
          steps: [
            { state: 'queued', durationMs: 20 },
            { state: 'running', durationMs: { min: 20, max: 40 }, progress: 40 },
            { state: 'succeeded' },
          ],
          result: { kind: 'batch', items: 4, failedItems: [2] },
        },
        slow: { steps: [{ state: 'running', durationMs: 60_000 }, { state: 'succeeded' }], cancel: { afterMs: 0 } },
        review: { steps: [{ state: 'manual_review' }] },
        failing: { steps: [{ state: 'failed' }], error: { code: 'quota', message: 'quota exceeded' } },
        sync: { steps: [{ state: 'succeeded' }], sync: true },
      },
    },
  });
});
afterAll(async () => sim.stop());
beforeEach(() => sim.reset());

const start = (body: Record<string, unknown>) => call(`${sim.url}/v1/operations:start`, { method: 'POST', body });

describe('lro dialect', () => {
  it('H2: start answers 200 with a pending operation; it finishes done with a response whose result_uri serves matching bytes', async () => {
    const res = await start({ input: 1, request_id: 'req-1' });
    expect(res.status).toBe(200);
    const op = obj(res.json);
    expect(op['done']).toBe(false);
    expect(String(op['name'])).toMatch(/^operations\/[0-9a-f]{32}$/);
    expect(obj(op['metadata'])).toMatchObject({ state: 'PENDING', progress_percent: 0 });
    const final = await pollUntil(
      () => call(`${sim.url}/v1/${String(op['name'])}`),
      (r) => obj(r.json)['done'] === true,
    );
    const done = obj(final.json);
    expect(obj(done['metadata'])['state']).toBe('SUCCEEDED');
    const response = obj(done['response']);
    expect(String(response['result_uri']).startsWith(`${sim.url}/v1/results/`)).toBe(true);
    const result = await call(String(response['result_uri']));
    expect(result.status).toBe(200);
    expect(response['sha256']).toBe(createHash('sha256').update(result.bytes).digest('hex'));
    expect(response['size_bytes']).toBe(result.bytes.length);
    expect(response['record_count']).toBe(4);
    expect(sim.requests({ action: 'status' })[0]!.jobId).toBe(op['name']);
  });

  it('I2: the same request_id returns the same operation; a changed body answers 409 ABORTED', async () => {
    const a = await start({ input: 1, request_id: 'req-same' });
    const b = await start({ input: 1, request_id: 'req-same' });
    expect(obj(b.json)['name']).toBe(obj(a.json)['name']);
    const c = await start({ input: 2, request_id: 'req-same' });
    expect(c.status).toBe(409);
    expect(obj(obj(c.json)['error'])).toMatchObject({ code: 409, status: 'ABORTED' });
    expect(sim.jobsByToken('req-same')).toHaveLength(1);
    expect(sim.requests({ action: 'create' }).map((r) => r.idempotencyKey)).toEqual([
      'req-same',
      'req-same',
      'req-same',
    ]);
  });

  it('X2: cancel answers 200 {} (idempotent) and the operation ends done with error code 1', async () => {
    const op = obj((await start({ scenario: 'slow', request_id: 'req-c' })).json);
    const c1 = await call(`${sim.url}/v1/${String(op['name'])}:cancel`, { method: 'POST' });
    expect(c1.status).toBe(200);
    expect(c1.json).toEqual({});
    expect((await call(`${sim.url}/v1/${String(op['name'])}:cancel`, { method: 'POST' })).status).toBe(200);
    const s = obj((await call(`${sim.url}/v1/${String(op['name'])}`)).json);
    expect(s['done']).toBe(true);
    expect(obj(s['metadata'])['state']).toBe('CANCELLED');
    expect(obj(s['error'])['code']).toBe(1);
  });

  it('P1: unknown states are passed through in upper case; failures carry the error', async () => {
    const r = obj((await start({ scenario: 'review', request_id: 'req-r' })).json);
    expect(r['done']).toBe(false);
    expect(obj(r['metadata'])['state']).toBe('MANUAL_REVIEW');
    const f = obj((await start({ scenario: 'failing', request_id: 'req-f' })).json);
    expect(f['done']).toBe(true);
    expect(obj(f['error'])['message']).toBe('quota exceeded');
  });

  it('C3: a synchronous operation is done in the start answer', async () => {
    const s = obj((await start({ scenario: 'sync', request_id: 'req-s' })).json);
    expect(s['done']).toBe(true);
    expect(obj(s['response'])['result_uri']).toBeDefined();
  });

  it('U2: reconcile by request_id lists the operation', async () => {
    const op = obj((await start({ request_id: 'req-rec' })).json);
    const res = await call(`${sim.url}/v1/operations?request_id=req-rec`);
    const ops = obj(res.json)['operations'] as { name: string }[];
    expect(ops.map((o) => o.name)).toEqual([op['name']]);
    expect(sim.requests({ action: 'reconcile' })[0]!.idempotencyKey).toBe('req-rec');
  });

  it('a seed makes job IDs reproducible across simulators; a reset never reuses an ID', async () => {
    const twins = await Promise.all([
      startSimulator({ dialect: 'lro', token: TOKEN, seed: 99 }),
      startSimulator({ dialect: 'lro', token: TOKEN, seed: 99 }),
    ]);
    try {
      const names = await Promise.all(
        twins.map(
          async (t) =>
            obj((await call(`${t.url}/v1/operations:start`, { method: 'POST', body: { request_id: 'seed-1' } })).json)[
              'name'
            ],
        ),
      );
      expect(names[0]).toBe(names[1]);
      twins[0]!.reset();
      const again = obj(
        (await call(`${twins[0]!.url}/v1/operations:start`, { method: 'POST', body: { request_id: 'seed-1' } })).json,
      )['name'];
      expect(again).not.toBe(names[0]);
    } finally {
      await Promise.all(twins.map((t) => t.stop()));
    }
  });

  it('F1: a dropped start created the operation; the same request_id then returns it', async () => {
    await expect(
      call(`${sim.url}/v1/operations:start`, {
        method: 'POST',
        body: { request_id: 'req-drop' },
        headers: { 'x-sim-fault': 'drop' },
      }),
    ).rejects.toThrow();
    expect(sim.jobsByToken('req-drop')).toHaveLength(1);
    const again = await start({ request_id: 'req-drop' });
    expect(obj(again.json)['name']).toBe(sim.jobsByToken('req-drop')[0]!.jobId);
    expect(sim.createdJobCount()).toBe(1);
  });

  it('R2: result_mismatch on a status read advertises a checksum and count the bytes do not have', async () => {
    const op = obj((await start({ scenario: 'sync', request_id: 'req-mm' })).json);
    const s = obj(
      (
        await call(`${sim.url}/v1/${String(op['name'])}`, {
          headers: { 'x-sim-fault': 'result_mismatch:field=checksum' },
        })
      ).json,
    );
    const response = obj(s['response']);
    const bytes = (await call(String(response['result_uri']))).bytes;
    expect(response['sha256']).not.toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(response['size_bytes']).toBe(bytes.length);
  });
});
