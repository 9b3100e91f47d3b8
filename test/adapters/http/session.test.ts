/**
 * V3 in the HTTP client: a per-call session adds the `Cookie` header for the provider's origin at the last
 * moment and takes every `Set-Cookie` of the answer, and neither value ever appears in the exchange.
 */
import { describe, expect, it } from 'vitest';
import { createHttpClient, ProviderSession, type HttpClient } from '../../../src/adapters/http';
import { parseScenario, ScenarioError, startSimulator, type ScenarioInput } from '../../../src/simulator';
import { type Loopback, loopbackPerTest } from './loopback';

const SESSION_VALUE = 'sess_7f3a9c1e5b2d4086af11';

const { closeLater, netServer, server } = loopbackPerTest();

function client(origin: string): HttpClient {
  const c = createHttpClient({
    allowedOrigin: origin,
    connectTimeoutMs: 300,
    headersTimeoutMs: 2_000,
    bodyTimeoutMs: 2_000,
  });
  closeLater(() => c.close());
  return c;
}

/** A provider that opens a session on POST /jobs and requires it everywhere else. */
function sessionProvider(): Promise<Loopback> {
  return server((req, res) => {
    if (req.method === 'POST') {
      res.writeHead(202, {
        'Content-Type': 'application/json',
        'Set-Cookie': [`sid=${SESSION_VALUE}; Path=/; HttpOnly`, 'lang=en; Path=/'],
      });
      res.end(JSON.stringify({ job_id: 'job_1' }));
      return;
    }
    const ok = String(req.headers.cookie ?? '').includes(`sid=${SESSION_VALUE}`);
    res.writeHead(ok ? 200 : 400, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(ok ? { state: 'running' } : { error: { code: 'session_required' } }));
  });
}

describe('createHttpClient with a session (V3)', () => {
  it('stores Set-Cookie from the answer and sends the cookies on the next call; both headers are redacted in every exchange', async () => {
    const s = await sessionProvider();
    const c = client(s.origin);
    const session = new ProviderSession(s.origin);
    const created = await c.send({ method: 'POST', url: '/jobs', json: {}, traceId: 't', session });
    expect(created.status).toBe(202);
    expect(created.headers['set-cookie']).toBe('[redacted]');
    expect(session.names().sort()).toEqual(['lang', 'sid']);
    const read = await c.send({ method: 'GET', url: '/jobs/job_1', traceId: 't', session });
    expect(read.status).toBe(200);
    expect(s.seen[1]!.headers.cookie).toBe(`sid=${SESSION_VALUE}; lang=en`);
    expect(read.request.headers['cookie']).toBe('[redacted]');
    for (const exchange of [created, read]) expect(JSON.stringify(exchange)).not.toContain(SESSION_VALUE);
    // Without the session the provider refuses: the jar, not the client, holds the session.
    const without = await c.send({ method: 'GET', url: '/jobs/job_1', traceId: 't' });
    expect(without.status).toBe(400);
    expect(s.seen[2]!.headers.cookie).toBeUndefined();
  });

  it('a session never sends its cookies off the provider origin: a foreign URL is refused before anything is sent', async () => {
    const s = await sessionProvider();
    const other = await server((_req, res) => res.end());
    const c = client(s.origin);
    const session = new ProviderSession(s.origin);
    await c.send({ method: 'POST', url: '/jobs', json: {}, traceId: 't', session });
    const ex = await c.send({ method: 'GET', url: `${other.origin}/steal`, traceId: 't', session });
    expect(ex).toMatchObject({ outcome: 'refused', errorCategory: 'foreign_origin' });
    expect(other.seen).toHaveLength(0);
    // A jar made for another origin adds nothing to this provider's requests.
    const foreignJar = new ProviderSession(other.origin);
    foreignJar.receive(new URL('/', other.origin), ['x=1; Path=/']);
    await c.send({ method: 'GET', url: '/jobs/job_1', traceId: 't', session: foreignJar });
    expect(s.seen.at(-1)!.headers.cookie).toBeUndefined();
  });

  it('a request header "cookie" is replaced by the session\'s cookies, never merged with them', async () => {
    const s = await sessionProvider();
    const c = client(s.origin);
    const session = new ProviderSession(s.origin);
    await c.send({ method: 'POST', url: '/jobs', json: {}, traceId: 't', session });
    await c.send({ method: 'GET', url: '/jobs/job_1', headers: { Cookie: 'injected=1' }, traceId: 't', session });
    expect(s.seen.at(-1)!.headers.cookie).toBe(`sid=${SESSION_VALUE}; lang=en`);
  });

  it('a download takes Set-Cookie and sends the session, and redacts both', async () => {
    const s = await server((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Set-Cookie': `sid=${SESSION_VALUE}-2; Path=/` });
      res.end(JSON.stringify({ seen: req.headers.cookie ?? null }));
    });
    const c = client(s.origin);
    const session = ProviderSession.fromJSON(null, s.origin);
    session.receive(new URL('/', s.origin), [`sid=${SESSION_VALUE}; Path=/`]);
    const chunks: Buffer[] = [];
    const ex = await c.download(
      { method: 'GET', url: '/result', traceId: 't', session },
      (chunk) => void chunks.push(Buffer.from(chunk)),
    );
    expect(ex.status).toBe(200);
    expect(s.seen[0]!.headers.cookie).toBe(`sid=${SESSION_VALUE}`);
    expect(session.cookieHeader(new URL('/', s.origin))).toBe(`sid=${SESSION_VALUE}-2`);
    expect(JSON.stringify(ex)).not.toContain(SESSION_VALUE);
  });

  it('takes cookies as soon as the headers arrive, even when the body is then cut off', async () => {
    const s = await netServer((socket) => {
      socket.once('data', () => {
        socket.write(
          `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\nSet-Cookie: sid=${SESSION_VALUE}; Path=/\r\n\r\n{"state":`,
        );
        setTimeout(() => socket.destroy(), 20);
      });
    });
    const session = new ProviderSession(s.origin);
    const ex = await client(s.origin).send({ method: 'GET', url: '/jobs/1', traceId: 't', session });
    expect(ex).toMatchObject({ outcome: 'ambiguous', errorCategory: 'truncated' });
    expect(session.names()).toEqual(['sid']);
    expect(JSON.stringify(ex)).not.toContain(SESSION_VALUE);
  });
});

describe("the simulator's session mode, driven through the client and a session", () => {
  const TOKEN = 'sim-token-for-session-tests';

  async function sim(session: NonNullable<ScenarioInput['session']>) {
    const s = await startSimulator({
      dialect: 'rest',
      token: TOKEN,
      scenario: { session, scripts: { slow: { steps: [{ state: 'running', polls: 2 }, { state: 'succeeded' }] } } },
    });
    closeLater(() => s.stop());
    const c = createHttpClient({
      allowedOrigin: s.url,
      authoriser: {
        authorise: async () => ({ headers: { authorization: `Bearer ${TOKEN}` }, secrets: [TOKEN] }),
      },
    });
    closeLater(() => c.close());
    return { s, c };
  }

  it('sets a cookie on create; a status read without it is 400 session_required and not counted; with it, 200', async () => {
    const { s, c } = await sim({ cookie: true });
    const session = new ProviderSession(s.url);
    const created = await c.send({
      method: 'POST',
      url: '/v1/jobs',
      json: { scenario: 'slow' },
      headers: { 'Idempotency-Key': 'k1' },
      traceId: 't',
      session,
    });
    const jobId = (created.bodyJson as { job_id: string }).job_id;
    expect(session.names()).toEqual(['sim_session']);
    const refused = await c.send({ method: 'GET', url: `/v1/jobs/${jobId}`, traceId: 't' });
    expect(refused.status).toBe(400);
    expect(refused.bodyJson).toMatchObject({ error: { code: 'session_required' } });
    expect(s.job(jobId)!.statusReads).toBe(0);
    const read = await c.send({ method: 'GET', url: `/v1/jobs/${jobId}`, traceId: 't', session });
    expect(read.status).toBe(200);
    expect(s.job(jobId)!.statusReads).toBe(1);
    const records = s.requests({ action: 'status' });
    expect(records.map((r) => r.session)).toEqual(['absent', 'valid']);
    const [value] = s.issuedSessions(jobId);
    expect(JSON.stringify(s.requests())).not.toContain(value!);
    // A repeated create (same token) gets the same session; a result download needs none by default.
    await c.send({
      method: 'POST',
      url: '/v1/jobs',
      json: { scenario: 'slow' },
      headers: { 'Idempotency-Key': 'k1' },
      traceId: 't',
    });
    expect(s.issuedSessions(jobId)).toHaveLength(1);
  });

  it('rotate: every accepted read sets a new value and the previous one is refused', async () => {
    const { s, c } = await sim({ cookie: true, rotate: true, name: 'sid' });
    const session = new ProviderSession(s.url);
    const created = await c.send({
      method: 'POST',
      url: '/v1/jobs',
      json: {},
      headers: { 'Idempotency-Key': 'k2' },
      traceId: 't',
      session,
    });
    const jobId = (created.bodyJson as { job_id: string }).job_id;
    const stale = session.toJSON();
    expect((await c.send({ method: 'GET', url: `/v1/jobs/${jobId}`, traceId: 't', session })).status).toBe(200);
    expect(s.issuedSessions(jobId)).toHaveLength(2);
    const old = ProviderSession.fromJSON(stale, s.url);
    const refused = await c.send({ method: 'GET', url: `/v1/jobs/${jobId}`, traceId: 't', session: old });
    expect(refused.status).toBe(400);
    expect(s.requests({ action: 'status' }).at(-1)!.session).toBe('invalid');
    expect((await c.send({ method: 'GET', url: `/v1/jobs/${jobId}`, traceId: 't', session })).status).toBe(200);
  });

  it('the scenario refuses recording credentials or cookies, and unknown session fields', () => {
    expect(() => parseScenario({ recordHeaders: ['Cookie'] })).toThrow(ScenarioError);
    expect(() => parseScenario({ recordHeaders: ['authorization'] })).toThrow(ScenarioError);
    expect(() => parseScenario({ session: { cookie: true, requireOn: ['create'] } })).toThrow(ScenarioError);
    expect(parseScenario({ recordHeaders: ['X-Api-Client'], session: { cookie: true } })).toMatchObject({
      recordHeaders: ['x-api-client'],
      session: { cookie: true, name: 'sim_session', requireOn: ['status'], rotate: false },
    });
  });
});
