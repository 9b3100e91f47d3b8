import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator';
import { call, obj, pollUntil, TOKEN } from './helpers';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({
    dialect: 'operation-location',
    token: TOKEN,
    scenario: {
      scripts: {
        default: {
          steps: [{ state: 'queued', polls: 1 }, { state: 'running', polls: 1, progress: 60 }, { state: 'succeeded' }],
          retryAfterSeconds: 1,
          result: { kind: 'json', body: { pages: 3 } },
        },
        review: { steps: [{ state: 'manual_review' }] },
        slow: { steps: [{ state: 'running', durationMs: 60_000 }, { state: 'succeeded' }] },
      },
    },
  });
});
afterAll(async () => sim.stop());
beforeEach(() => sim.reset());

const analyze = (body: unknown, id: string) =>
  call(`${sim.url}/v1/analyze`, {
    method: 'POST',
    body,
    headers: { 'repeatability-request-id': id, 'repeatability-first-sent': new Date().toUTCString() },
  });

describe('operation-location dialect', () => {
  it('V5: a create-or-replace PUT answers 201 with Operation-Location and the resource without provisioningState; the monitor says when it is done', async () => {
    const res = await call(`${sim.url}/v1/analyses/invoice-7`, { method: 'PUT', body: { doc: 'a' } });
    expect(res.status).toBe(201);
    const resource = obj(res.json);
    expect(resource).toMatchObject({ id: '/v1/analyses/invoice-7', name: 'invoice-7' });
    expect(JSON.stringify(resource)).not.toContain('provisioningState');
    const loc = String(res.headers['operation-location']);
    expect(loc).toMatch(new RegExp(`^${sim.url}/v1/operations/[0-9a-f-]{36}$`));
    const final = await pollUntil(
      () => call(loc),
      (r) => obj(r.json)['status'] === 'Succeeded',
    );
    expect((await call(String(obj(final.json)['resourceLocation']))).json).toEqual({ pages: 3 });
    expect((await call(`${sim.url}/v1/analyses/invoice-7`, { method: 'POST', body: {} })).status).toBe(404);
  });

  it('H2: analyze answers 202 with Operation-Location and Retry-After; status walks NotStarted, Running, Succeeded', async () => {
    const res = await analyze({ doc: 'a' }, 'rr-1');
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
    expect(res.headers['retry-after']).toBe('1');
    const loc = String(res.headers['operation-location']);
    expect(loc).toMatch(new RegExp(`^${sim.url}/v1/operations/[0-9a-f-]{36}$`));
    const seen: string[] = [];
    const final = await pollUntil(
      async () => {
        const r = await call(loc);
        seen.push(String(obj(r.json)['status']));
        return r;
      },
      (r) => obj(r.json)['status'] === 'Succeeded',
    );
    expect(seen).toEqual(['NotStarted', 'Running', 'Succeeded']);
    expect(final.headers['retry-after']).toBeUndefined();
    const body = obj(final.json);
    expect(body['percentCompleted']).toBe(100);
    const result = await call(String(body['resourceLocation']));
    expect(result.headers['x-ms-content-sha256']).toBe(createHash('sha256').update(result.bytes).digest('base64'));
    expect(result.json).toEqual({ pages: 3 });
  });

  it('I2: a repeat with the same Repeatability-Request-ID answers the same with Repeatability-Result: accepted', async () => {
    const a = await analyze({ doc: 'x' }, 'rr-same');
    const b = await analyze({ doc: 'x' }, 'rr-same');
    expect(b.status).toBe(202);
    expect(b.headers['operation-location']).toBe(a.headers['operation-location']);
    expect(b.headers['repeatability-result']).toBe('accepted');
    expect(sim.jobsByToken('rr-same')).toHaveLength(1);
    const c = await analyze({ doc: 'changed' }, 'rr-same');
    expect(c.status).toBe(409);
    expect(c.headers['repeatability-result']).toBe('rejected');
    expect(sim.createdJobCount()).toBe(1);
  });

  it('X1: DELETE cancels with 202; after the end it answers 409', async () => {
    const loc = String((await analyze({ scenario: 'slow' }, 'rr-del')).headers['operation-location']);
    expect((await call(loc, { method: 'DELETE' })).status).toBe(202);
    const s = await call(loc);
    expect(obj(s.json)['status']).toBe('Canceled');
    expect((await call(loc, { method: 'DELETE' })).status).toBe(409);
  });

  it('P1: an unknown state is shown in PascalCase and keeps Retry-After', async () => {
    const loc = String((await analyze({ scenario: 'review' }, 'rr-rev')).headers['operation-location']);
    const s = await call(loc);
    expect(obj(s.json)['status']).toBe('ManualReview');
    expect(s.headers['retry-after']).toBe('0');
  });

  it('C4: foreign_location puts Operation-Location on another origin', async () => {
    const res = await call(`${sim.url}/v1/analyze`, {
      method: 'POST',
      body: {},
      headers: { 'repeatability-request-id': 'rr-foreign', 'x-sim-fault': 'foreign_location' },
    });
    expect(String(res.headers['operation-location'])).toMatch(/^http:\/\/foreign\.invalid\/v1\/operations\//);
    expect(sim.requests()[0]).toMatchObject({ fault: 'foreign_location', idempotencyKey: 'rr-foreign', status: 202 });
  });
});
