/**
 * The request authoriser on a real loopback server: it sees the request exactly as it goes on the wire, what it
 * adds is sent and never recorded, and a 401 to a request that is safe to resend renews the credential and resends
 * it once, the first answer kept on the exchange.
 */
import { describe, expect, it } from 'vitest';
import {
  CredentialUnavailableError,
  ProviderSession,
  createHttpClient,
  type Authorisation,
  type HttpClient,
  type OutgoingRequest,
  type RequestAuthoriser,
} from '../../../src/adapters/http';
import { loopbackPerTest } from './loopback';

const KEY = 'qk_distinctive_7d41e0c2b9';

const { closeLater, server } = loopbackPerTest();

function client(origin: string, authoriser: RequestAuthoriser): HttpClient {
  const c = createHttpClient({ allowedOrigin: origin, headersTimeoutMs: 2_000, authoriser });
  closeLater(() => c.close());
  return c;
}

/** An authoriser handing out `token-1`, `token-2`... and counting its renewals. */
function rotatingTokens(): RequestAuthoriser & { renewals: number; seen: OutgoingRequest[] } {
  let current = 1;
  const issued = new WeakMap<Authorisation, number>();
  const authoriser = {
    renewals: 0,
    seen: [] as OutgoingRequest[],
    async authorise(request: OutgoingRequest): Promise<Authorisation> {
      authoriser.seen.push(request);
      const token = `token-${current}-${KEY}`;
      const authorisation = { headers: { authorization: `Bearer ${token}` }, secrets: [token] };
      issued.set(authorisation, current);
      return authorisation;
    },
    async renew(rejected: Authorisation): Promise<boolean> {
      authoriser.renewals += 1;
      if (issued.get(rejected) === current) current += 1;
      return true;
    },
  };
  return authoriser;
}

describe('the request authoriser (T4)', () => {
  it('T4: sees the request as sent (method, final URL, headers with host and cookies, body bytes) before anything is written', async () => {
    const s = await server((_req, res) => {
      res.setHeader('Set-Cookie', 'sid=abc123; Path=/');
      res.end('{}');
    });
    const seen: OutgoingRequest[] = [];
    const c = client(s.origin, {
      authorise: async (request) => {
        seen.push(request);
        return { headers: { 'X-Signature': `sig-${KEY}` }, secrets: [`sig-${KEY}`] };
      },
    });
    const session = new ProviderSession(s.origin);
    await c.send({ method: 'GET', url: '/first', traceId: 't', session });
    await c.send({ method: 'POST', url: '/jobs?x=1', json: { a: 'é' }, traceId: 't', session });
    const [, post] = seen;
    expect(post!.method).toBe('POST');
    expect(post!.url.toString()).toBe(`${s.origin}/jobs?x=1`);
    expect(post!.headers).toMatchObject({
      host: `127.0.0.1:${s.port}`,
      cookie: 'sid=abc123',
      'content-type': 'application/json',
      'user-agent': 'asyncjob/0.1',
    });
    expect(Buffer.from(post!.body!).toString('utf8')).toBe(s.seen[1]!.body);
    expect(seen[0]!.body).toBeUndefined();
    expect(s.seen[1]!.headers['x-signature']).toBe(`sig-${KEY}`);
  });

  it('T4: a query parameter is added at the last moment, replaces one of the same name, and is recorded [redacted]', async () => {
    const s = await server((req, res) => {
      res.setHeader('Location', `/echo${req.url}`);
      res.end(JSON.stringify({ url: req.url }));
    });
    const c = client(s.origin, {
      authorise: async () => ({ query: { name: 'api_key', value: `${KEY}/+` }, secrets: [`${KEY}/+`] }),
    });
    const ex = await c.send({ method: 'GET', url: '/jobs/1?api_key=stale&page=2', traceId: 't' });
    const sent = `/jobs/1?page=2&api_key=${encodeURIComponent(`${KEY}/+`)}`;
    expect(s.seen[0]!.url).toBe(sent);
    expect(ex.request.url).toBe(`${s.origin}/jobs/1?page=2&api_key=[redacted]`);
    expect(JSON.stringify(ex)).not.toContain(KEY);
  });

  it('T4: a 401 to a request that is safe to resend renews the credential and resends it once; both answers are kept', async () => {
    const s = await server((req, res) => {
      const fresh = String(req.headers.authorization).startsWith('Bearer token-2');
      res.writeHead(fresh ? 200 : 401, {
        'Content-Type': 'application/json',
        'X-Request-Id': `req-${s.seen.length}`,
        ...(fresh ? {} : { 'WWW-Authenticate': 'Bearer error="invalid_token"' }),
      });
      res.end(JSON.stringify({ state: 'running', seen: req.headers.authorization }));
    });
    const authoriser = rotatingTokens();
    const ex = await client(s.origin, authoriser).send({
      method: 'GET',
      url: '/jobs/1',
      traceId: 't',
      safeToResend: true,
    });
    expect(s.seen.map((r) => r.headers.authorization)).toEqual([`Bearer token-1-${KEY}`, `Bearer token-2-${KEY}`]);
    expect(authoriser.renewals).toBe(1);
    expect(ex).toMatchObject({ outcome: 'response', status: 200, providerRequestId: 'req-2' });
    expect(ex.rejectedAttempt).toMatchObject({
      status: 401,
      providerRequestId: 'req-1',
      headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
    });
    expect(JSON.stringify(ex)).not.toContain(KEY);
  });

  it('T4: a second 401 is not resent again, and a request not safe to resend is never resent', async () => {
    const s = await server((_req, res) => {
      res.statusCode = 401;
      res.end();
    });
    const authoriser = rotatingTokens();
    const c = client(s.origin, authoriser);
    const twice = await c.send({ method: 'GET', url: '/jobs/1', traceId: 't', safeToResend: true });
    expect(s.seen).toHaveLength(2);
    expect(twice).toMatchObject({ status: 401, rejectedAttempt: { status: 401 } });
    const create = await c.send({ method: 'POST', url: '/jobs', json: {}, traceId: 't' });
    expect(s.seen).toHaveLength(3);
    expect(create.status).toBe(401);
    expect(create.rejectedAttempt).toBeUndefined();
    expect(authoriser.renewals).toBe(1);
  });

  it('T4: nothing is resent when the authoriser cannot renew, or when the renewed credential cannot be had', async () => {
    const s = await server((_req, res) => {
      res.statusCode = 401;
      res.end();
    });
    const unrenewable = client(s.origin, { authorise: async () => ({ headers: { 'x-key': KEY }, secrets: [KEY] }) });
    expect((await unrenewable.send({ method: 'GET', url: '/a', traceId: 't', safeToResend: true })).status).toBe(401);
    expect(s.seen).toHaveLength(1);
    let calls = 0;
    const failing = client(s.origin, {
      authorise: async () => {
        calls += 1;
        if (calls > 1)
          throw new CredentialUnavailableError('the token endpoint https://idp.example/token answered 503');
        return { headers: { authorization: `Bearer ${KEY}` }, secrets: [KEY] };
      },
      renew: async () => true,
    });
    const ex = await failing.send({ method: 'GET', url: '/b', traceId: 't', safeToResend: true });
    expect(s.seen).toHaveLength(2);
    expect(ex).toMatchObject({ outcome: 'response', status: 401 });
    expect(ex.rejectedAttempt).toBeUndefined();
  });

  it('T4: an authoriser refusal (CredentialUnavailableError) is recorded with its message; nothing is sent', async () => {
    const s = await server((_req, res) => res.end());
    const c = client(s.origin, {
      authorise: async () => {
        throw new CredentialUnavailableError(
          'the token endpoint https://idp.example/token answered 400 (invalid_client)',
        );
      },
    });
    const ex = await c.send({ method: 'GET', url: '/jobs/1', traceId: 't' });
    expect(ex).toMatchObject({
      outcome: 'refused',
      errorCategory: 'credential_unavailable',
      errorMessage: 'the token endpoint https://idp.example/token answered 400 (invalid_client)',
    });
    expect(s.seen).toHaveLength(0);
  });
});
