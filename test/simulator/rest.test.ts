import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator';
import { AUTH, call, obj, pollUntil, TOKEN } from './helpers';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({
    dialect: 'rest',
    token: TOKEN,
    scenario: {
      scripts: {
        default: {
          steps: [
            { state: 'queued', durationMs: 30 },
            { state: 'running', durationMs: 30, progress: 50 },
            { state: 'succeeded' },
          ],
          result: { kind: 'json', body: { answer: 42 } },
        },
        polls: { steps: [{ state: 'running', polls: 2 }, { state: 'succeeded' }] },
        slow: { steps: [{ state: 'running', durationMs: 60_000 }, { state: 'succeeded' }], cancel: { afterMs: 60 } },
        review: { steps: [{ state: 'running', polls: 1 }, { state: 'manual_review' }] },
        hints: {
          steps: [
            { state: 'running', polls: 1, pollAfterSeconds: -5, nextCheckAt: 'not-a-date' },
            {
              state: 'running',
              polls: 1,
              pollAfterSeconds: 'soon',
              nextCheckAt: { inMs: 10 * 365 * 24 * 3600 * 1000 },
            },
            { state: 'running', pollAfterSeconds: 2 },
          ],
        },
        expiring: { steps: [{ state: 'succeeded' }], expiresAfterMs: 80 },
        sync: { steps: [{ state: 'succeeded' }], sync: true, result: { kind: 'json', body: { inline: true } } },
        failing: {
          steps: [{ state: 'running', polls: 1 }, { state: 'failed' }],
          error: { code: 'bad_input', message: 'row 3 is invalid' },
        },
        batch: { steps: [{ state: 'succeeded' }], result: { kind: 'batch', items: 5, failedItems: [1, 3] } },
        ndjson: {
          steps: [{ state: 'succeeded' }],
          result: { kind: 'ndjson', records: [{ a: 1 }, { a: 2 }, { a: 3 }] },
        },
        racing: {
          steps: [{ state: 'running', durationMs: 60_000 }, { state: 'succeeded' }],
          cancel: { afterMs: 0, outcome: 'succeeded' },
        },
      },
      match: [{ field: 'options.mode', equals: 'batch', script: 'batch' }],
    },
  });
});
afterAll(async () => sim.stop());
beforeEach(() => sim.reset());

const create = (body: unknown, key?: string, headers: Record<string, string> = {}) =>
  call(`${sim.url}/v1/jobs`, {
    method: 'POST',
    body,
    headers: { ...(key ? { 'idempotency-key': key } : {}), ...headers },
  });

describe('rest dialect', () => {
  it('H2: create answers 202 with a relative Location, an absolute status_url, and the job runs to success by time', async () => {
    const res = await create({ input: 'a' }, 'key-1');
    expect(res.status).toBe(202);
    const body = obj(res.json);
    expect(body['state']).toBe('queued');
    expect(res.headers['location']).toBe(`/v1/jobs/${String(body['job_id'])}`);
    expect(body['status_url']).toBe(`${sim.url}/v1/jobs/${String(body['job_id'])}`);
    expect(typeof res.headers['x-request-id']).toBe('string');
    const final = await pollUntil(
      () => call(String(body['status_url'])),
      (r) => obj(r.json)['state'] === 'succeeded',
    );
    const status = obj(final.json);
    expect(status['progress']).toBe(100);
    expect(status['result_url']).toBe(`${sim.url}/v1/jobs/${String(body['job_id'])}/result`);
    expect(Date.parse(String(status['updated_at']))).not.toBeNaN();
    const states = sim.job(String(body['job_id']))!.history.map((h) => h.state);
    expect(states).toEqual(['queued', 'running', 'succeeded']);
  });

  it('R2: the result carries Content-Type, Content-Length, X-Content-SHA256 and X-Record-Count that match the bytes', async () => {
    const { json } = await create({ scenario: 'ndjson' }, 'key-r');
    const id = String(obj(json)['job_id']);
    const res = await call(`${sim.url}/v1/jobs/${id}/result`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    expect(Number(res.headers['content-length'])).toBe(res.bytes.length);
    expect(res.headers['x-content-sha256']).toBe(createHash('sha256').update(res.bytes).digest('hex'));
    expect(res.headers['x-record-count']).toBe('3');
    expect(res.text.trim().split('\n')).toHaveLength(3);
  });

  it('R3: a batch result lists its failed items; a payload matcher selects the script', async () => {
    const { json } = await create({ options: { mode: 'batch' } }, 'key-b');
    const id = String(obj(json)['job_id']);
    expect(sim.job(id)!.scriptName).toBe('batch');
    const res = await call(`${sim.url}/v1/jobs/${id}/result`);
    const items = obj(res.json)['items'] as { id: string; status: string }[];
    expect(items).toHaveLength(5);
    expect(items.filter((i) => i.status === 'failed').map((i) => i.id)).toEqual(['item-1', 'item-3']);
    expect(res.headers['x-record-count']).toBe('5');
  });

  it('I2: the same Idempotency-Key with the same body returns the original job; exactly one job exists', async () => {
    const first = await create({ input: 'same', n: 1 }, 'key-same');
    const second = await create({ n: 1, input: 'same' }, 'key-same');
    expect(second.status).toBe(202);
    expect(obj(second.json)['job_id']).toBe(obj(first.json)['job_id']);
    expect(sim.jobsByToken('key-same')).toHaveLength(1);
    expect(sim.createdJobCount()).toBe(1);
    expect(sim.requests({ action: 'create' }).map((r) => r.idempotencyKey)).toEqual(['key-same', 'key-same']);
  });

  it('I2: the same Idempotency-Key with a changed body answers 422 idempotency_key_reused and creates nothing', async () => {
    await create({ input: 'one' }, 'key-changed');
    const res = await create({ input: 'two' }, 'key-changed');
    expect(res.status).toBe(422);
    expect(obj(obj(res.json)['error'])['code']).toBe('idempotency_key_reused');
    expect(sim.createdJobCount()).toBe(1);
  });

  it('poll-based lifecycle: running for the first 2 status reads, succeeded on the 3rd', async () => {
    const { json } = await create({ scenario: 'polls' }, 'key-polls');
    const url = String(obj(json)['status_url']);
    const states: unknown[] = [];
    for (let i = 0; i < 4; i++) states.push(obj((await call(url)).json)['state']);
    expect(states).toEqual(['running', 'running', 'succeeded', 'succeeded']);
    expect(sim.requests({ action: 'status' })).toHaveLength(4);
  });

  it('P1: an unknown state (manual_review) is reported as is', async () => {
    const { json } = await create({ scenario: 'review' }, 'key-review');
    const url = String(obj(json)['status_url']);
    await call(url);
    expect(obj((await call(url)).json)['state']).toBe('manual_review');
  });

  it('P3: hints are served as scripted, including negative, garbage and far-future ones', async () => {
    const { json } = await create({ scenario: 'hints' }, 'key-hints');
    const url = String(obj(json)['status_url']);
    const a = obj((await call(url)).json);
    expect(a['poll_after_seconds']).toBe(-5);
    expect(a['next_check_at']).toBe('not-a-date');
    const b = obj((await call(url)).json);
    expect(b['poll_after_seconds']).toBe('soon');
    expect(Date.parse(String(b['next_check_at'])) - Date.now()).toBeGreaterThan(9 * 365 * 24 * 3600 * 1000);
    const c = obj((await call(url)).json);
    expect(c['poll_after_seconds']).toBe(2);
    expect(c['next_check_at']).toBeUndefined();
  });

  it('P7: expires_at is reported; after it the job reads expired and the result answers 410', async () => {
    const { json } = await create({ scenario: 'expiring' }, 'key-exp');
    const id = String(obj(json)['job_id']);
    const first = obj((await call(`${sim.url}/v1/jobs/${id}`)).json);
    expect(first['state']).toBe('succeeded');
    expect(Date.parse(String(first['expires_at']))).toBe(Date.parse(sim.job(id)!.createdAt) + 80);
    const later = await pollUntil(
      () => call(`${sim.url}/v1/jobs/${id}`),
      (r) => obj(r.json)['state'] === 'expired',
    );
    expect(obj(later.json)['state']).toBe('expired');
    expect((await call(`${sim.url}/v1/jobs/${id}/result`)).status).toBe(410);
  });

  it('C3: a synchronous job answers 200 with the result inline', async () => {
    const res = await create({ scenario: 'sync' }, 'key-sync');
    expect(res.status).toBe(200);
    expect(obj(res.json)).toMatchObject({ state: 'succeeded', result: { inline: true } });
  });

  it('P1: a failed job reports the provider error', async () => {
    const { json } = await create({ scenario: 'failing' }, 'key-fail');
    const url = String(obj(json)['status_url']);
    await call(url);
    const s = obj((await call(url)).json);
    expect(s).toMatchObject({ state: 'failed', error: { code: 'bad_input', message: 'row 3 is invalid' } });
  });

  it('the result before success answers 409 not_ready', async () => {
    const { json } = await create({ scenario: 'slow' }, 'key-nr');
    const res = await call(`${sim.url}/v1/jobs/${String(obj(json)['job_id'])}/result`);
    expect(res.status).toBe(409);
  });

  it('X1/X2: cancel answers 202 cancelling, is idempotent, the job ends cancelled; a cancel after the end answers 409', async () => {
    const { json } = await create({ scenario: 'slow' }, 'key-cancel');
    const id = String(obj(json)['job_id']);
    const c1 = await call(`${sim.url}/v1/jobs/${id}/cancel`, { method: 'POST' });
    expect(c1.status).toBe(202);
    expect(obj(c1.json)).toEqual({ job_id: id, state: 'cancelling' });
    expect((await call(`${sim.url}/v1/jobs/${id}/cancel`, { method: 'POST' })).status).toBe(202);
    const end = await pollUntil(
      () => call(`${sim.url}/v1/jobs/${id}`),
      (r) => obj(r.json)['state'] !== 'running',
    );
    expect(obj(end.json)['state']).toBe('cancelled');
    const late = await call(`${sim.url}/v1/jobs/${id}/cancel`, { method: 'POST' });
    expect(late.status).toBe(409);
    expect(obj(late.json)).toMatchObject({ error: { code: 'already_terminal' }, state: 'cancelled' });
    expect(sim.requests({ action: 'cancel', jobId: id }).map((r) => r.status)).toEqual([202, 202, 409]);
    expect(sim.job(id)!.cancelRequested).toBe(true);
  });

  it('X2: a script whose cancel loses the race ends succeeded after an accepted cancel', async () => {
    const { json } = await create({ scenario: 'racing' }, 'key-race');
    const id = String(obj(json)['job_id']);
    expect((await call(`${sim.url}/v1/jobs/${id}/cancel`, { method: 'POST' })).status).toBe(202);
    expect(obj((await call(`${sim.url}/v1/jobs/${id}`)).json)['state']).toBe('succeeded');
  });

  it('U2: reconcile lists the jobs created with a client_reference', async () => {
    await create({ client_reference: 'op-77', x: 1 }, 'key-ref');
    await create({ client_reference: 'op-other' }, 'key-ref2');
    const res = await call(`${sim.url}/v1/jobs?client_reference=op-77`);
    expect(res.status).toBe(200);
    const jobs = obj(res.json)['jobs'] as { job_id: string; state: string; created_at: string }[];
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.job_id).toBe(sim.jobsByToken('key-ref')[0]!.jobId);
  });

  it('U2: a lookup by client reference answers the job, or 404 when there is none', async () => {
    await create({ client_reference: 'op:78' }, 'key-lookup');
    const found = await call(`${sim.url}/v1/jobs/by-reference/${encodeURIComponent('op:78')}`);
    expect(found.status).toBe(200);
    expect(obj(found.json)).toMatchObject({ job_id: sim.jobsByToken('key-lookup')[0]!.jobId });
    const none = await call(`${sim.url}/v1/jobs/by-reference/op-none`);
    expect(none.status).toBe(404);
    expect(obj(none.json)).toMatchObject({ error: { code: 'not_found' } });
    expect(
      sim
        .requests({ action: 'reconcile' })
        .slice(-2)
        .map((r) => r.status),
    ).toEqual([200, 404]);
  });

  it('H4/T4: a missing or wrong bearer token answers 401; the token is recorded as present/valid, never stored', async () => {
    const none = await call(`${sim.url}/v1/jobs`, { method: 'POST', body: {}, auth: false });
    expect(none.status).toBe(401);
    expect(obj(none.json)).toEqual({ error: { code: 'unauthenticated' } });
    const wrong = await call(`${sim.url}/v1/jobs`, {
      method: 'POST',
      body: {},
      auth: false,
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);
    await create({}, 'key-auth');
    expect(sim.requests().map((r) => r.authorization)).toEqual(['absent', 'invalid', 'valid']);
    expect(sim.createdJobCount()).toBe(1);
    expect(JSON.stringify(sim.requests())).not.toContain(TOKEN);
  });

  it('T1: trace headers and the idempotency key are recorded per request', async () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const { json } = await create({}, 'key-trace', { 'x-trace-id': 'trace-abc', traceparent: tp });
    await call(String(obj(json)['status_url']), { headers: { 'x-trace-id': 'trace-abc' } });
    const [c, s] = sim.requests();
    expect(c).toMatchObject({
      action: 'create',
      idempotencyKey: 'key-trace',
      traceId: 'trace-abc',
      traceparent: tp,
      status: 202,
      method: 'POST',
      path: '/v1/jobs',
    });
    expect(c!.jobId).toBe(obj(json)['job_id']);
    expect(s).toMatchObject({ action: 'status', traceId: 'trace-abc', jobId: obj(json)['job_id'], status: 200 });
    expect(s!.traceparent).toBeUndefined();
  });

  it('the /_sim endpoints need no token and expose requests, jobs and reset', async () => {
    await create({}, 'key-sim');
    const reqs = await call(`${sim.url}/_sim/requests?action=create`, { auth: false });
    expect(obj(reqs.json)['requests']).toHaveLength(1);
    const jobs = await call(`${sim.url}/_sim/jobs`, { auth: false });
    expect((obj(jobs.json)['jobs'] as { idempotencyKey: string }[])[0]!.idempotencyKey).toBe('key-sim');
    expect((await call(`${sim.url}/_sim/reset`, { method: 'POST', auth: false })).status).toBe(200);
    expect(sim.createdJobCount()).toBe(0);
    expect(sim.requests()).toHaveLength(1);
  });

  it('an unknown job answers 404; an unknown path answers 404', async () => {
    expect((await call(`${sim.url}/v1/jobs/job_nope`)).status).toBe(404);
    expect((await call(`${sim.url}/v2/other`, { headers: AUTH })).status).toBe(404);
  });
});
