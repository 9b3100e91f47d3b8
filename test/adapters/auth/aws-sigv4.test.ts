/**
 * AWS SigV4 on the wire: a real loopback server recomputes every signature with the same library from the request
 * it received and checks the body against x-amz-content-sha256, as AWS does (`sigv4-verifier.ts`); so a request
 * passes only when the signature covers exactly what was sent.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request as undiciRequest } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { authoriserFor } from '../../../src/adapters/auth';
import { type AwsCredentials } from '../../../src/adapters/auth/aws-sigv4';
import { createHttpClient, type HttpClient, type OutgoingRequest } from '../../../src/adapters/http';
import { type CredentialReference } from '../../../src/adapters/providers/contract';
import { sigV4Problem, type ReceivedRequest } from './sigv4-verifier';

const KEYS: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLESIGV4TEST',
  secretAccessKey: 'sak_distinctive_wJalrXUtnFEMI/K7MDENG',
};
const SESSION: AwsCredentials = { ...KEYS, sessionToken: 'st_distinctive_FwoGZXIvYXdzEJr//////////' };
const REGION = 'us-east-1';
const SERVICE = 'textract';
const REFERENCE: CredentialReference = { scheme: 'aws-sigv4', region: REGION, service: SERVICE };

/** The credentials the server expects, by access key ID (AWS knows the secret and the session token it issued). */
const known = new Map<string, AwsCredentials>();

const received: ReceivedRequest[] = [];

let server: http.Server;
let origin: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      received.push(request);
      void sigV4Problem(request, { credentials: known, region: REGION, service: SERVICE }).then((problem) => {
        res.writeHead(problem === undefined ? 200 : 403, { 'Content-Type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(problem === undefined ? { JobStatus: 'IN_PROGRESS' } : { message: problem }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  known.set(KEYS.accessKeyId, KEYS);
});
afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
  received.length = 0;
  vi.unstubAllEnvs();
});

function client(credentials: AwsCredentials | (() => Promise<AwsCredentials>), reference = REFERENCE): HttpClient {
  const source = typeof credentials === 'function' ? credentials : async () => credentials;
  const authoriser = authoriserFor(reference, { awsChain: () => source })!;
  const c = createHttpClient({ allowedOrigin: origin, authoriser });
  cleanups.push(() => c.close());
  return c;
}

const getJob = {
  method: 'POST' as const,
  url: '/',
  headers: { 'X-Amz-Target': 'Textract.GetDocumentTextDetection', 'Content-Type': 'application/x-amz-json-1.1' },
  body: JSON.stringify({ JobId: 'job-é 1', MaxResults: 1000 }),
  traceId: 'op-1',
};

describe('aws-sigv4 (T4)', () => {
  it('T4: the signature covers the request as sent: method, path, headers (host included) and the body hash', async () => {
    const ex = await client(KEYS).send(getJob);
    expect(ex).toMatchObject({ outcome: 'response', status: 200 });
    const [request] = received;
    expect(request!.headers['x-amz-content-sha256']).toBe(createHash('sha256').update(getJob.body).digest('hex'));
    expect(String(request!.headers.authorization)).toMatch(
      /SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-target;x-trace-id,/,
    );
    expect(ex.request.headers.authorization).toBe('[redacted]');
    expect(ex.request.headers.host).toBe(`127.0.0.1:${new URL(origin).port}`);
    expect(JSON.stringify(ex)).not.toContain(KEYS.secretAccessKey);
  });

  it('T4: a query and an encoded path are signed as a server reads them', async () => {
    const ex = await client(KEYS).send({ method: 'GET', url: '/jobs/a%20b/c%2Fd?z=1&a=x%2Fy&a=2&e=', traceId: 't' });
    expect(ex.status).toBe(200);
    expect(received[0]!.url).toBe('/jobs/a%20b/c%2Fd?z=1&a=x%2Fy&a=2&e=');
  });

  it('T4: a session token is sent as x-amz-security-token, signed, and never recorded', async () => {
    known.set(SESSION.accessKeyId, SESSION);
    try {
      const ex = await client(SESSION).send(getJob);
      expect(ex.status).toBe(200);
      expect(received[0]!.headers['x-amz-security-token']).toBe(SESSION.sessionToken);
      expect(String(received[0]!.headers.authorization)).toContain('x-amz-security-token');
      expect(ex.request.headers['x-amz-security-token']).toBe('[redacted]');
      expect(JSON.stringify(ex)).not.toContain(SESSION.sessionToken);
    } finally {
      known.set(KEYS.accessKeyId, KEYS);
    }
  });

  it('T4: the server rejects a signature whose body was tampered with', async () => {
    const authoriser = authoriserFor(REFERENCE, { awsChain: () => async () => KEYS })!;
    const url = new URL('/', origin);
    const headers = { host: url.host, 'content-type': 'application/x-amz-json-1.1' };
    const body = Buffer.from('{"JobId":"mine"}');
    const request: OutgoingRequest = { method: 'POST', url, headers, body };
    const signed = await authoriser.authorise(request);
    const send = (bytes: Buffer) =>
      undiciRequest(url, { method: 'POST', headers: { ...headers, ...signed.headers }, body: bytes });
    expect((await send(body)).statusCode).toBe(200);
    const tampered = await send(Buffer.from('{"JobId":"yours"}'));
    expect(tampered.statusCode).toBe(403);
    expect(await tampered.body.json()).toEqual({ message: 'the body does not match x-amz-content-sha256' });
  });

  it('T4: credentials come from the standard AWS environment variables, read at the moment of the request', async () => {
    vi.stubEnv('AWS_PROFILE', '');
    vi.stubEnv('AWS_ACCESS_KEY_ID', KEYS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', KEYS.secretAccessKey);
    vi.stubEnv('AWS_SESSION_TOKEN', '');
    const authoriser = authoriserFor(REFERENCE)!;
    const c = createHttpClient({ allowedOrigin: origin, authoriser });
    cleanups.push(() => c.close());
    expect((await c.send(getJob)).status).toBe(200);
  });

  it('T4: with a profile, credentials come from the shared credentials file, session token included', async () => {
    known.set(SESSION.accessKeyId, SESSION);
    const dir = await mkdtemp(path.join(tmpdir(), 'aws-'));
    const file = path.join(dir, 'credentials');
    await writeFile(
      file,
      `[asyncjob-test]\naws_access_key_id = ${SESSION.accessKeyId}\naws_secret_access_key = ${SESSION.secretAccessKey}\naws_session_token = ${SESSION.sessionToken}\n`,
    );
    vi.stubEnv('AWS_ACCESS_KEY_ID', '');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', '');
    vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', file);
    vi.stubEnv('AWS_CONFIG_FILE', path.join(dir, 'config'));
    try {
      const authoriser = authoriserFor({ ...REFERENCE, profile: 'asyncjob-test' })!;
      const c = createHttpClient({ allowedOrigin: origin, authoriser });
      cleanups.push(() => c.close());
      expect((await c.send(getJob)).status).toBe(200);
      expect(received[0]!.headers['x-amz-security-token']).toBe(SESSION.sessionToken);
    } finally {
      known.set(KEYS.accessKeyId, KEYS);
    }
  });

  it('T4: no credentials from the chain is a refusal: nothing is sent (credential_unavailable)', async () => {
    const failing = async (): Promise<AwsCredentials> => {
      const error = new Error(`Could not load credentials ${KEYS.secretAccessKey}`);
      error.name = 'CredentialsProviderError';
      throw error;
    };
    const ex = await client(failing).send(getJob);
    expect(ex).toMatchObject({
      outcome: 'refused',
      errorCategory: 'credential_unavailable',
      errorMessage: 'no AWS credentials from the standard AWS chain (CredentialsProviderError)',
    });
    expect(received).toHaveLength(0);
    expect(JSON.stringify(ex)).not.toContain(KEYS.secretAccessKey);
  });
});
