/**
 * Providers on every credential scheme for the secret tests (T4): one loopback gateway per scheme in front of the
 * rest simulator. Each gateway checks the scheme as a real provider would (basic credentials, a query API key, an
 * access token the OAuth2 server issued, a SigV4 signature recomputed from the bytes received), answers 401 when it
 * does not hold, and otherwise forwards the request to the simulator with the simulator's own bearer token, its
 * answer's links moved to the gateway. It also holds each scheme's distinctive secrets, for the tests to look for.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { type AddressInfo } from 'node:net';
import { Events, OAuth2Server, type MutableResponse, type MutableToken } from 'oauth2-mock-server';
import { request, type Dispatcher } from 'undici';
import { sigV4Problem } from '../../adapters/auth/sigv4-verifier';

const BASIC_USER = 'reports-basic';
const BASIC_PASSWORD = 'basic-pw-distinctive-4a8c1e7f0b';
const QUERY_KEY = 'query-key-distinctive-9d3f6b2a5e';
const CLIENT_SECRET = 'oauth-cs-distinctive-2e7a9c4f1d';
const AWS_KEYS = {
  accessKeyId: 'AKIDFAULTSUITE0001',
  secretAccessKey: 'aws-sak-distinctive-6f1b8d3e0c/K7MDENG',
  sessionToken: 'aws-st-distinctive-FwoGZXIvYXdzEJr0c1e',
};
const REGION = 'us-east-1';
const SERVICE = 'execute-api';

/** One gateway: its provider name, what it let through and what it refused. */
interface Gateway {
  readonly provider: string;
  readonly url: string;
  readonly verdicts: ('authorised' | 'refused')[];
}

/** The gateways, the worker environment that holds their secrets, and the contracts' credentials. */
export interface AuthProviders {
  readonly gateways: readonly Gateway[];
  /** The worker's environment: every secret by the name its credential references. */
  readonly env: Record<string, string>;
  /** The credential of each provider's contract, by provider name. */
  readonly credentials: Record<string, Record<string, unknown>>;
  /** Every distinctive secret: passwords, keys, client secret, AWS keys, and every access token issued so far. */
  secrets(): string[];
  /** The access token the OAuth2 gateway refused once it had been used for a create (a 401 the worker renews). */
  readonly revokedTokens: ReadonlySet<string>;
  close(): Promise<void>;
}

type Check = (req: http.IncomingMessage, url: URL, body: Buffer) => Promise<boolean> | boolean;

/** Headers never forwarded: the gateway's own credential and framing, and the client's hop-by-hop headers. */
const DROPPED = /^(host|authorization|connection|content-length|transfer-encoding|keep-alive|x-amz-.*)$/;

async function startGateway(
  provider: string,
  target: string,
  token: string,
  check: Check,
  dropQuery?: string,
): Promise<Gateway & { close(): Promise<void> }> {
  const verdicts: Gateway['verdicts'] = [];
  let self = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', self);
      void (async () => {
        if (!(await check(req, url, body))) {
          verdicts.push('refused');
          res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
          res.end(JSON.stringify({ error: { code: 'unauthorized', message: 'credential refused' } }));
          return;
        }
        verdicts.push('authorised');
        if (dropQuery !== undefined) url.searchParams.delete(dropQuery);
        const headers: Record<string, string> = { authorization: `Bearer ${token}` };
        for (const [name, value] of Object.entries(req.headers))
          if (!DROPPED.test(name) && value !== undefined) headers[name] = String(value);
        const answer = await request(`${target}${url.pathname}${url.search}`, {
          method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
          headers,
          ...(body.length > 0 ? { body } : {}),
        });
        const text = (await answer.body.text()).split(target).join(self);
        const out: Record<string, string> = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (!/^(content-length|transfer-encoding|connection|keep-alive)$/.test(name) && value !== undefined)
            out[name] = String(value).split(target).join(self);
        res.writeHead(answer.statusCode, out);
        res.end(text);
      })().catch(() => {
        res.writeHead(502);
        res.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    provider,
    url: self,
    verdicts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Starts an OAuth2 server and a gateway per scheme in front of `target` (the rest simulator, taking `token`). */
export async function startAuthProviders(target: string, token: string, names: (scheme: string) => string) {
  const idp = new OAuth2Server();
  await idp.issuer.keys.generate('RS256');
  await idp.start(0, '127.0.0.1');
  const issued = new Set<string>();
  const revoked = new Set<string>();
  idp.service.on(Events.BeforeTokenSigning, (jwt: MutableToken) => {
    jwt.payload.jti = randomUUID();
  });
  idp.service.on(Events.BeforeResponse, (response: MutableResponse) => {
    if (typeof response.body === 'object') issued.add(String(response.body.access_token));
  });
  const basic = `Basic ${Buffer.from(`${BASIC_USER}:${BASIC_PASSWORD}`).toString('base64')}`;
  const bearerOf = (req: http.IncomingMessage): string =>
    String(req.headers.authorization ?? '').replace(/^Bearer /, '');
  let created = false;
  const gateways = [
    await startGateway(names('basic'), target, token, (req) => req.headers.authorization === basic),
    await startGateway(
      names('query'),
      target,
      token,
      (_req, url) => url.searchParams.get('api_key') === QUERY_KEY,
      'api_key',
    ),
    await startGateway(names('oauth2'), target, token, (req, url) => {
      const accessToken = bearerOf(req);
      if (!issued.has(accessToken) || revoked.has(accessToken)) return false;
      // The token that made the first create is refused from then on: the worker must renew it once.
      if (!created && req.method === 'POST' && url.pathname === '/v1/jobs') {
        created = true;
        revoked.add(accessToken);
      }
      return true;
    }),
    await startGateway(names('sigv4'), target, token, async (req, url, body) => {
      const problem = await sigV4Problem(
        { method: req.method ?? '', url: `${url.pathname}${url.search}`, headers: req.headers, body },
        { credentials: new Map([[AWS_KEYS.accessKeyId, AWS_KEYS]]), region: REGION, service: SERVICE },
      );
      return problem === undefined;
    }),
  ];
  const credentials: Record<string, Record<string, unknown>> = {
    [names('basic')]: { scheme: 'basic', username: BASIC_USER, secretEnv: 'AUTH_BASIC_PASSWORD' },
    [names('query')]: { scheme: 'query', parameter: 'api_key', secretEnv: 'AUTH_QUERY_API_KEY' },
    [names('oauth2')]: {
      scheme: 'oauth2-client-credentials',
      tokenUrl: `${idp.issuer.url}/token`,
      clientId: 'reports-fault-suite',
      secretEnv: 'AUTH_OAUTH_CLIENT_SECRET',
    },
    [names('sigv4')]: { scheme: 'aws-sigv4', region: REGION, service: SERVICE },
  };
  const providers: AuthProviders = {
    gateways,
    env: {
      AUTH_BASIC_PASSWORD: BASIC_PASSWORD,
      AUTH_QUERY_API_KEY: QUERY_KEY,
      AUTH_OAUTH_CLIENT_SECRET: CLIENT_SECRET,
      AWS_ACCESS_KEY_ID: AWS_KEYS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: AWS_KEYS.secretAccessKey,
      AWS_SESSION_TOKEN: AWS_KEYS.sessionToken,
      AWS_EC2_METADATA_DISABLED: 'true',
    },
    credentials,
    secrets: () => [
      BASIC_PASSWORD,
      basic.slice('Basic '.length),
      QUERY_KEY,
      CLIENT_SECRET,
      Buffer.from(`reports-fault-suite:${CLIENT_SECRET}`).toString('base64'),
      AWS_KEYS.secretAccessKey,
      AWS_KEYS.sessionToken,
      ...issued,
    ],
    revokedTokens: revoked,
    async close() {
      await Promise.all(gateways.map((g) => g.close()));
      await idp.stop();
    },
  };
  return providers;
}
