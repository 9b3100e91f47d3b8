/**
 * OAuth2 client credentials against a real OAuth2 server (oauth2-mock-server on loopback) and a real provider that
 * accepts only tokens that server issued: one token per worker for the same client, shared by concurrent requests,
 * refreshed before it expires; a 401 to a request that is safe to resend renews the token and resends once; a
 * failing token endpoint sends nothing to the provider; neither the token nor the client secret is recorded.
 */
import { randomUUID } from 'node:crypto';
import {
  Events,
  OAuth2Server,
  type MutableResponse,
  type MutableToken,
  type TokenRequestIncomingMessage,
} from 'oauth2-mock-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { authoriserFor } from '../../../src/adapters/auth';
import { tokenTimes } from '../../../src/adapters/auth/oauth2-client-credentials';
import { createHttpClient, type HttpClient } from '../../../src/adapters/http';
import { type CredentialReference } from '../../../src/adapters/providers/contract';
import { startHttpServer, type Loopback } from '../http/loopback';

const CLIENT_SECRET = 'cs_distinctive_5e0f9a7c31d2';
const ENV = { REPORTS_CLIENT_SECRET: CLIENT_SECRET };

/** What the token endpoint was asked, request by request. */
interface TokenAsk {
  authorization: string | undefined;
  body: Record<string, unknown>;
}

let idp: OAuth2Server;
let tokenUrl: string;
const asked: TokenAsk[] = [];
const issued = new Set<string>();
const revoked = new Set<string>();
let provider: Loopback;
let clients = 0;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  idp = new OAuth2Server();
  await idp.issuer.keys.generate('RS256');
  await idp.start(0, '127.0.0.1');
  tokenUrl = `${idp.issuer.url}/token`;
  // Two tokens signed in the same second for the same client would otherwise be the same string.
  idp.service.on(Events.BeforeTokenSigning, (token: MutableToken) => {
    token.payload.jti = randomUUID();
  });
  idp.service.on(Events.BeforeResponse, (response: MutableResponse, req: TokenRequestIncomingMessage) => {
    asked.push({ authorization: req.headers.authorization, body: { ...req.body } });
    if (response.statusCode === 200 && typeof response.body === 'object')
      issued.add(String(response.body.access_token));
  });
  // The provider accepts only live tokens the server issued, and echoes the Authorization header it got.
  provider = await startHttpServer((req, res) => {
    const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    const ok = issued.has(token) && !revoked.has(token);
    res.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ state: 'running', authorization: req.headers.authorization }));
  });
});
afterAll(async () => {
  await provider.close();
  await idp.stop();
});
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
  asked.length = 0;
  provider.seen.length = 0;
});

/** A credential for a client of its own (the token cache is per worker process, keyed by client). */
function credential(extra: Partial<Extract<CredentialReference, { scheme: 'oauth2-client-credentials' }>> = {}) {
  clients += 1;
  return {
    scheme: 'oauth2-client-credentials' as const,
    tokenUrl,
    clientId: `reports-${clients}`,
    secretEnv: 'REPORTS_CLIENT_SECRET',
    clientAuthentication: 'basic' as const,
    ...extra,
  };
}

function client(reference: CredentialReference): HttpClient {
  const c = createHttpClient({ allowedOrigin: provider.origin, authoriser: authoriserFor(reference, { env: ENV })! });
  cleanups.push(() => c.close());
  return c;
}

const read = (c: HttpClient, safeToResend = true) =>
  c.send({ method: 'GET', url: '/v1/jobs/1', traceId: 't', safeToResend });

describe('oauth2-client-credentials (T4)', () => {
  it('T4: asks the token endpoint once per client, with HTTP Basic client authentication, scopes and audience', async () => {
    const reference = credential({ scopes: ['reports.read', 'jobs.write'], audience: 'https://api.example' });
    const first = client(reference);
    const second = client(reference);
    for (const c of [first, second, first]) expect((await read(c)).status).toBe(200);
    expect(asked).toHaveLength(1);
    const basic = Buffer.from(`${reference.clientId}:${CLIENT_SECRET}`).toString('base64');
    expect(asked[0]).toEqual({
      authorization: `Basic ${basic}`,
      body: { grant_type: 'client_credentials', scope: 'jobs.write reports.read', audience: 'https://api.example' },
    });
    const tokens = new Set(provider.seen.map((r) => r.headers.authorization));
    expect(tokens.size).toBe(1);
    // Another set of scopes is another token.
    expect((await read(client({ ...reference, scopes: ['reports.read'] }))).status).toBe(200);
    expect(asked).toHaveLength(2);
  });

  it('T4: sends the client credentials in the form body when told to', async () => {
    const reference = credential({ clientAuthentication: 'body' });
    expect((await read(client(reference))).status).toBe(200);
    expect(asked[0]!.authorization).toBeUndefined();
    expect(asked[0]!.body).toMatchObject({ client_id: reference.clientId, client_secret: CLIENT_SECRET });
  });

  it('T4: concurrent requests share one token request', async () => {
    const c = client(credential());
    const exchanges = await Promise.all(Array.from({ length: 6 }, () => read(c)));
    expect(exchanges.map((e) => e.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(asked).toHaveLength(1);
  });

  it('T4: refreshes the token before it expires (a short expiry)', async () => {
    idp.service.once(Events.BeforeResponse, (response: MutableResponse) => {
      if (typeof response.body === 'object') response.body.expires_in = 1;
    });
    const c = client(credential());
    expect((await read(c)).status).toBe(200);
    expect((await read(c)).status).toBe(200);
    expect(asked).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await read(c)).status).toBe(200);
    expect(asked).toHaveLength(2);
    const [a, b, later] = provider.seen.map((r) => r.headers.authorization);
    expect(a).toBe(b);
    expect(later).not.toBe(a);
  });

  it('T4: a refresh margin of a tenth of the lifetime, at most 60 s; no expires_in is taken as five minutes', () => {
    expect(tokenTimes({ accessToken: 'x', lifetimeMs: 3_600_000 }, 0)).toEqual({
      refreshAtMs: 3_540_000,
      expiresAtMs: 3_600_000,
    });
    expect(tokenTimes({ accessToken: 'x', lifetimeMs: 1_000 }, 5)).toEqual({ refreshAtMs: 905, expiresAtMs: 1_005 });
    expect(tokenTimes({ accessToken: 'x', lifetimeMs: undefined }, 0).expiresAtMs).toBe(300_000);
  });

  it('T4: a 401 to a request that is safe to resend renews the token and resends once; the first answer is kept', async () => {
    const c = client(credential());
    expect((await read(c)).status).toBe(200);
    const first = String(provider.seen[0]!.headers.authorization).replace('Bearer ', '');
    revoked.add(first);
    const ex = await read(c);
    expect(asked).toHaveLength(2);
    expect(provider.seen).toHaveLength(3);
    expect(ex).toMatchObject({ status: 200, rejectedAttempt: { status: 401 } });
    expect(provider.seen[2]!.headers.authorization).not.toBe(`Bearer ${first}`);
    const text = JSON.stringify(ex);
    for (const token of issued) expect(text).not.toContain(token);
    expect(text).not.toContain(CLIENT_SECRET);
  });

  it('T4: a provider that refuses the new token too gets no second resend', async () => {
    const c = client(credential());
    const tokensBefore = issued.size;
    idp.service.on(Events.BeforeResponse, revokeEveryToken);
    try {
      const ex = await read(c);
      expect(provider.seen).toHaveLength(2);
      expect(asked).toHaveLength(2);
      expect(issued.size).toBe(tokensBefore + 2);
      expect(ex).toMatchObject({ status: 401, rejectedAttempt: { status: 401 } });
    } finally {
      idp.service.off(Events.BeforeResponse, revokeEveryToken);
    }
  });

  it('T4: a request that is not safe to resend is not resent after a 401, and its token is kept', async () => {
    const c = client(credential());
    expect((await read(c)).status).toBe(200);
    revoked.add(String(provider.seen[0]!.headers.authorization).replace('Bearer ', ''));
    const create = await c.send({ method: 'POST', url: '/v1/jobs', json: {}, traceId: 't' });
    expect(create.status).toBe(401);
    expect(create.rejectedAttempt).toBeUndefined();
    expect(provider.seen).toHaveLength(2);
    expect(asked).toHaveLength(1);
  });

  it('T4: a token endpoint that refuses the client sends nothing to the provider: credential_unavailable', async () => {
    idp.service.once(Events.BeforeResponse, (response: MutableResponse) => {
      response.statusCode = 401;
      response.body = { error: 'invalid_client', error_description: `bad secret ${CLIENT_SECRET}` };
    });
    const ex = await read(client(credential()));
    expect(ex).toMatchObject({
      outcome: 'refused',
      errorCategory: 'credential_unavailable',
      errorMessage: `the token endpoint ${tokenUrl} answered 401 (invalid_client)`,
    });
    expect(provider.seen).toHaveLength(0);
    expect(JSON.stringify(ex)).not.toContain(CLIENT_SECRET);
  });

  it('T4: the token endpoint is asked at its own origin only: a redirect is refused, never followed', async () => {
    const elsewhere = await startHttpServer((_req, res) => res.end('{}'));
    cleanups.push(() => elsewhere.close());
    const redirecting = await startHttpServer((_req, res) => {
      res.writeHead(307, { Location: `${elsewhere.origin}/token` });
      res.end();
    });
    cleanups.push(() => redirecting.close());
    const ex = await read(client(credential({ tokenUrl: `${redirecting.origin}/token` })));
    expect(ex).toMatchObject({
      outcome: 'refused',
      errorCategory: 'credential_unavailable',
      errorMessage: `the token endpoint ${redirecting.origin}/token answered 307: redirects are not followed`,
    });
    expect(elsewhere.seen).toHaveLength(0);
    expect(provider.seen).toHaveLength(0);
  });

  it('T4: an answer without a usable token, or an unreachable endpoint, is a refusal naming the endpoint only', async () => {
    idp.service.once(Events.BeforeResponse, (response: MutableResponse) => {
      response.body = { token_type: 'mac', access_token: 'a b' };
    });
    expect((await read(client(credential()))).errorMessage).toBe(
      `the token endpoint ${tokenUrl} gave no usable token (access_token, token_type)`,
    );
    const gone = await startHttpServer((_req, res) => res.end());
    const goneUrl = `${gone.origin}/token`;
    await gone.close();
    expect((await read(client(credential({ tokenUrl: goneUrl })))).errorMessage).toBe(
      `the token endpoint ${goneUrl} could not be reached (ECONNREFUSED)`,
    );
    expect(provider.seen).toHaveLength(0);
  });
});

function revokeEveryToken(response: MutableResponse): void {
  if (typeof response.body === 'object') revoked.add(String(response.body.access_token));
}
