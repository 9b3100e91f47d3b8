import { createHash } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator';
import { AUTH, call, obj, TOKEN } from './helpers';

let sim: Simulator;
let foreign: Simulator;

beforeAll(async () => {
  foreign = await startSimulator({ dialect: 'rest', token: 'foreign-token' });
  sim = await startSimulator({
    dialect: 'rest',
    token: TOKEN,
    foreignBaseUrl: foreign.url,
    scenario: {
      scripts: {
        default: { steps: [{ state: 'succeeded' }], result: { kind: 'ndjson', records: [{ a: 1 }, { a: 2 }] } },
        dropFirst: { steps: [{ state: 'running' }], faults: [{ on: 'create', nth: 1, fault: { kind: 'drop' } }] },
        flakyStatus: {
          steps: [{ state: 'running' }],
          faults: [
            { on: 'status', nth: 1, fault: { kind: 'http_error', status: 503, retryAfterSeconds: 2 } },
            { on: 'status', nth: 2, fault: { kind: 'http_error', status: 429 } },
          ],
        },
        consistency: {
          steps: [{ state: 'running' }],
          faults: [{ on: 'status', fault: { kind: 'not_found_for', ms: 400 } }],
        },
        big: { steps: [{ state: 'succeeded' }], result: { kind: 'generated', sizeBytes: 300_000 } },
        slow: { steps: [{ state: 'running', durationMs: 60_000 }, { state: 'succeeded' }], cancel: { afterMs: 30 } },
      },
    },
  });
});
afterAll(async () => {
  await sim.stop();
  await foreign.stop();
});
beforeEach(() => {
  sim.reset();
  foreign.reset();
});

const create = (body: unknown, key: string, fault?: string) =>
  call(`${sim.url}/v1/jobs`, {
    method: 'POST',
    body,
    headers: { 'idempotency-key': key, ...(fault ? { 'x-sim-fault': fault } : {}) },
  });

async function newJob(key: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await create(body, key);
  return String(obj(res.json)['job_id']);
}

describe('faults', () => {
  it('F1: a dropped create really created the job; the retry with the same token gets that job, still exactly one', async () => {
    await expect(create({ scenario: 'dropFirst', n: 1 }, 'tok-f1')).rejects.toThrow();
    expect(sim.createdJobCount()).toBe(1);
    const [rec] = sim.requests({ action: 'create' });
    expect(rec).toMatchObject({ fault: 'drop', idempotencyKey: 'tok-f1' });
    expect(rec!.status).toBeUndefined();
    const retry = await create({ scenario: 'dropFirst', n: 1 }, 'tok-f1');
    expect(retry.status).toBe(202);
    expect(obj(retry.json)['job_id']).toBe(sim.jobsByToken('tok-f1')[0]!.jobId);
    expect(sim.jobsByToken('tok-f1')).toHaveLength(1);
  });

  it('F1: the drop rule counts per token: the first attempt of another token drops too', async () => {
    await expect(create({ scenario: 'dropFirst' }, 'tok-a')).rejects.toThrow();
    await expect(create({ scenario: 'dropFirst' }, 'tok-b')).rejects.toThrow();
    expect((await create({ scenario: 'dropFirst' }, 'tok-b')).status).toBe(202);
    expect(sim.createdJobCount()).toBe(2);
  });

  it('U3: the same token answered with a different job ID', async () => {
    const first = await create({ x: 1 }, 'tok-u3');
    const second = await create({ x: 1 }, 'tok-u3', 'different_job_id');
    expect(second.status).toBe(202);
    expect(obj(second.json)['job_id']).not.toBe(obj(first.json)['job_id']);
    expect(sim.jobsByToken('tok-u3')).toHaveLength(2);
  });

  it('H1: 503 with Retry-After in seconds, then 429 without, then the normal answer (scripted per job)', async () => {
    const id = await newJob('tok-h1', { scenario: 'flakyStatus' });
    const a = await call(`${sim.url}/v1/jobs/${id}`);
    expect(a.status).toBe(503);
    expect(a.headers['retry-after']).toBe('2');
    const b = await call(`${sim.url}/v1/jobs/${id}`);
    expect(b.status).toBe(429);
    expect(b.headers['retry-after']).toBeUndefined();
    const c = await call(`${sim.url}/v1/jobs/${id}`);
    expect(c.status).toBe(200);
    expect(sim.requests({ action: 'status' }).map((r) => [r.status, r.fault])).toEqual([
      [503, 'http_error:503'],
      [429, 'http_error:429'],
      [200, undefined],
    ]);
    expect(sim.job(id)!.statusReads).toBe(1);
  });

  it('H1: 429 with Retry-After as an HTTP-date in the future', async () => {
    const id = await newJob('tok-date');
    const res = await call(`${sim.url}/v1/jobs/${id}`, {
      headers: { 'x-sim-fault': 'http_error:status=429,retryAfterDateInSeconds=120' },
    });
    expect(res.status).toBe(429);
    const at = Date.parse(String(res.headers['retry-after']));
    expect(String(res.headers['retry-after'])).toMatch(/GMT$/);
    expect(at - Date.now()).toBeGreaterThan(100_000);
    expect(at - Date.now()).toBeLessThanOrEqual(121_000);
  });

  it('H4: 401 and 403 on request, 500 and 502 answered as scripted', async () => {
    const id = await newJob('tok-h4');
    for (const status of [401, 403, 500, 502]) {
      const res = await call(`${sim.url}/v1/jobs/${id}`, { headers: { 'x-sim-fault': `http_error:status=${status}` } });
      expect(res.status).toBe(status);
    }
  });

  it('H3: 404 for a window after create, then found', async () => {
    const id = await newJob('tok-h3', { scenario: 'consistency' });
    expect((await call(`${sim.url}/v1/jobs/${id}`)).status).toBe(404);
    await new Promise((r) => setTimeout(r, 450));
    expect((await call(`${sim.url}/v1/jobs/${id}`)).status).toBe(200);
  });

  it('H5: a TCP reset is recorded with the fault and no status', async () => {
    const id = await newJob('tok-reset');
    await expect(call(`${sim.url}/v1/jobs/${id}`, { headers: { 'x-sim-fault': 'reset' } })).rejects.toThrow();
    const rec = sim.requests({ action: 'status' })[0]!;
    expect(rec.fault).toBe('reset');
    expect(rec.status).toBeUndefined();
  });

  it('a slow answer passes a client timeout', async () => {
    const id = await newJob('tok-slow');
    await expect(
      call(`${sim.url}/v1/jobs/${id}`, { headers: { 'x-sim-fault': 'delay:ms=400' }, timeoutMs: 80 }),
    ).rejects.toThrow(/abort|timeout/i);
    expect(sim.requests({ action: 'status' })).toHaveLength(0);
    const ok = await call(`${sim.url}/v1/jobs/${id}`, { headers: { 'x-sim-fault': 'delay:ms=20' } });
    expect(ok.status).toBe(200);
    await new Promise((r) => setTimeout(r, 400));
    // The abandoned request is recorded (in arrival order) once its delay ran out, without an answer.
    expect(sim.requests({ action: 'status' }).map((r) => r.status)).toEqual([undefined, 200]);
  });

  it('F8: malformed bodies: non-JSON, an HTML error page, missing fields, wrong types', async () => {
    const id = await newJob('tok-mal');
    const url = `${sim.url}/v1/jobs/${id}`;
    const nonJson = await call(url, { headers: { 'x-sim-fault': 'malformed:body=non_json' } });
    expect(nonJson.status).toBe(200);
    expect(nonJson.json).toBeUndefined();
    const html = await call(url, { headers: { 'x-sim-fault': 'malformed:body=html,status=502' } });
    expect(html.status).toBe(502);
    expect(html.headers['content-type']).toMatch(/text\/html/);
    const missing = obj((await call(url, { headers: { 'x-sim-fault': 'malformed:body=missing_fields' } })).json);
    expect(missing['state']).toBeUndefined();
    expect(missing['job_id']).toBeUndefined();
    expect(missing['updated_at']).toBeDefined();
    const wrong = obj((await call(url, { headers: { 'x-sim-fault': 'malformed:body=wrong_types' } })).json);
    expect(typeof wrong['state']).toBe('number');
    expect(typeof wrong['progress']).toBe('string');
  });

  it('F8: a huge body of N bytes is streamed', async () => {
    const id = await newJob('tok-huge');
    const res = await request(`${sim.url}/v1/jobs/${id}`, {
      headers: { ...AUTH, 'x-sim-fault': 'malformed:body=huge,sizeBytes=3000000' },
    });
    let received = 0;
    for await (const chunk of res.body) received += (chunk as Buffer).length;
    expect(received).toBe(3_000_000);
  });

  it('F3: a cancel accepted but the job finishes succeeded', async () => {
    const id = await newJob('tok-race', { scenario: 'slow' });
    const c = await call(`${sim.url}/v1/jobs/${id}/cancel`, {
      method: 'POST',
      headers: { 'x-sim-fault': 'cancel_race' },
    });
    expect(c.status).toBe(202);
    await new Promise((r) => setTimeout(r, 60));
    expect(obj((await call(`${sim.url}/v1/jobs/${id}`)).json)['state']).toBe('succeeded');
    expect(sim.job(id)!.cancelRequested).toBe(true);
  });

  it('R2: result checksum, count and size mismatches', async () => {
    const id = await newJob('tok-mm');
    const url = `${sim.url}/v1/jobs/${id}/result`;
    const good = await call(url);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(good.headers['x-content-sha256']).toBe(sha(good.bytes));
    const badSum = await call(url, { headers: { 'x-sim-fault': 'result_mismatch:field=checksum' } });
    expect(badSum.headers['x-content-sha256']).not.toBe(sha(badSum.bytes));
    expect(badSum.bytes.equals(good.bytes)).toBe(true);
    const badCount = await call(url, { headers: { 'x-sim-fault': 'result_mismatch:field=count' } });
    expect(badCount.headers['x-record-count']).toBe('3');
    const badSize = await call(url, { headers: { 'x-sim-fault': 'result_mismatch:field=size' } });
    expect(badSize.bytes.length).toBe(good.bytes.length + 1);
    expect(badSize.headers['x-content-sha256']).toBe(sha(good.bytes));
  });

  it('R4: a truncated download announces the full Content-Length, sends less and closes', async () => {
    const id = await newJob('tok-trunc', { scenario: 'big' });
    const res = await request(`${sim.url}/v1/jobs/${id}/result`, { headers: { ...AUTH, 'x-sim-fault': 'truncated' } });
    expect(res.headers['content-length']).toBe('300000');
    await expect(res.body.arrayBuffer()).rejects.toThrow();
    expect(sim.requests({ action: 'result' })[0]!.fault).toBe('truncated');
  });

  it('C4: foreign_location puts Location and status_url on another origin, which sees no credentials from the simulator', async () => {
    const res = await create({}, 'tok-foreign', 'foreign_location');
    expect(res.headers['location']).toBe(`${foreign.url}/v1/jobs/${String(obj(res.json)['job_id'])}`);
    expect(String(obj(res.json)['status_url']).startsWith(foreign.url)).toBe(true);
    const s = await call(`${sim.url}/v1/jobs/${String(obj(res.json)['job_id'])}`, {
      headers: { 'x-sim-fault': 'foreign_location' },
    });
    expect(String(obj(s.json)['result_url']).startsWith(foreign.url)).toBe(true);
    // A well-behaved client refuses to follow; a careless one would be visible in the foreign accounting.
    await call(String(obj(res.json)['status_url']));
    expect(foreign.requests().map((r) => r.authorization)).toEqual(['invalid']);
  });

  it('scenario-wide rules apply on the nth occurrence only', async () => {
    sim.setScenario({ faults: [{ on: 'status', nth: 2, fault: { kind: 'http_error', status: 502 } }] });
    try {
      const id = await newJob('tok-nth');
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(`${sim.url}/v1/jobs/${id}`)).status);
      expect(statuses).toEqual([200, 502, 200]);
    } finally {
      sim.setScenario({});
    }
  });

  it('a malformed X-Sim-Fault header answers 400 naming the field', async () => {
    const res = await call(`${sim.url}/v1/jobs`, {
      method: 'POST',
      body: {},
      headers: { 'x-sim-fault': 'http_error:status=abc' },
    });
    expect(res.status).toBe(400);
    expect(String(obj(obj(res.json)['error'])['message'])).toContain('fault.status');
    expect(sim.createdJobCount()).toBe(0);
  });
});

describe('stopping', () => {
  it('stop() releases a request held by a long delay fault at once', async () => {
    const s = await startSimulator({ token: TOKEN });
    const pending = call(`${s.url}/v1/jobs/job_x`, { headers: { 'x-sim-fault': 'delay:ms=600000' } }).then(
      () => 'answered',
      () => 'failed',
    );
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await s.stop();
    expect(await pending).toBe('failed');
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(s.requests()[0]!.fault).toBe('delay');
    expect(s.requests()[0]!.status).toBeUndefined();
  });
});
