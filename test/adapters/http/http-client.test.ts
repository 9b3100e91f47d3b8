import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { transportOutcomeSchema } from '../../../src/core/journal';
import { AsyncJobError } from '../../../src/core/errors';
import {
  InvalidHttpOptionsError,
  InvalidHttpRequestError,
  createHttpClient,
  w3cTraceIdFor,
  type HttpClient,
  type HttpClientOptions,
  type RequestAuthoriser,
} from '../../../src/adapters/http';
import { closedPort, loopbackPerTest, readRequestHead } from './loopback';

const SECRET = 'tk_fake_9f8e7d6c5b4a39281706';
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/;

const { closeLater, server, netServer } = loopbackPerTest();

/** An authoriser adding one header whose value is the secret. */
function headerAuthoriser(name: string, value: string, secrets: string[] = [value]): RequestAuthoriser {
  return { authorise: async () => ({ headers: { [name]: value }, secrets }) };
}

function client(options: Partial<HttpClientOptions> & { allowedOrigin: string }): HttpClient {
  const c = createHttpClient({
    connectTimeoutMs: 300,
    headersTimeoutMs: 2_000,
    bodyTimeoutMs: 2_000,
    authoriser: headerAuthoriser('Authorization', `Bearer ${SECRET}`, [`Bearer ${SECRET}`, SECRET]),
    ...options,
  });
  closeLater(() => c.close());
  return c;
}

describe('createHttpClient: answers', () => {
  it('T1: sends X-Trace-ID and a well-formed traceparent on every call, one W3C trace per operation, a fresh span per call', async () => {
    const s = await server((_req, res) => res.end());
    const c = client({ allowedOrigin: s.origin });
    const first = await c.send({ method: 'GET', url: '/jobs/1', traceId: 'op-7/trace' });
    await c.send({ method: 'POST', url: 'jobs', json: { a: 1 }, traceId: 'op-7/trace' });
    await c.send({ method: 'GET', url: '/x', traceId: '4BF92F3577B34DA6A3CE929D0E0E4736', spanId: '00f067aa0ba902b7' });
    expect(s.seen).toHaveLength(3);
    for (const r of s.seen) {
      expect(r.headers['traceparent']).toMatch(TRACEPARENT);
      expect(r.headers['x-trace-id']).toBeTruthy();
    }
    const [a, b, cc] = s.seen.map((r) => String(r.headers['traceparent']).split('-'));
    expect(s.seen[0]!.headers['x-trace-id']).toBe('op-7/trace');
    expect(a![1]).toBe(w3cTraceIdFor('op-7/trace'));
    expect(b![1]).toBe(a![1]);
    expect(b![2]).not.toBe(a![2]);
    expect(cc).toEqual(['00', '4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', '01']);
    expect(first.request.headers['traceparent']).toMatch(TRACEPARENT);
  });

  it('T1: concurrent calls share a small pool and each carries its own span', async () => {
    const s = await server((req, res) => setTimeout(() => res.end(String(req.headers['traceparent'])), 5));
    const c = client({ allowedOrigin: s.origin, maxConnections: 2 });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => c.send({ method: 'GET', url: `/jobs/${i}`, traceId: 'op-9' })),
    );
    expect(results.every((r) => r.outcome === 'response' && r.status === 200)).toBe(true);
    expect(new Set(s.seen.map((r) => r.headers['traceparent'])).size).toBe(12);
    expect(s.connections).toBeLessThanOrEqual(2);
    for (const r of results) expect(r.bodyText).toBe(r.request.headers['traceparent']);
  });

  it('H5: a JSON answer is parsed, headers are lower-cased, the provider request ID is captured', async () => {
    const s = await server((_req, res) => {
      res.writeHead(202, { 'Content-Type': 'application/json', 'X-Request-Id': 'req-123', Location: '/jobs/9' });
      res.end(JSON.stringify({ id: 'job-9', state: 'queued' }));
    });
    const c = client({ allowedOrigin: `${s.origin}/api/v1` });
    const ex = await c.send({ method: 'POST', url: 'jobs', json: { input: 1 }, traceId: 't-1' });
    expect(ex).toMatchObject({
      outcome: 'response',
      status: 202,
      bodyJson: { id: 'job-9', state: 'queued' },
      providerRequestId: 'req-123',
    });
    expect(ex.headers['location']).toBe('/jobs/9');
    expect(ex.errorCategory).toBeUndefined();
    expect(s.seen[0]).toMatchObject({ method: 'POST', url: '/api/v1/jobs', body: '{"input":1}' });
    expect(s.seen[0]!.headers['content-type']).toBe('application/json');
    expect(transportOutcomeSchema.parse(ex.outcome)).toBe('response');
    expect(ex.receivedAtMs).toBeGreaterThanOrEqual(ex.startedAtMs);
    expect(ex.durationMs).toBeGreaterThanOrEqual(0);
  });

  it.each([
    ['x-ms-request-id', undefined, 'ms-1'],
    ['request-id', undefined, 'ms-1'],
    ['x-correlation-id', ['x-correlation-id'], 'ms-1'],
  ])('H5: captures the provider request ID from %s', async (header, requestIdHeaders, value) => {
    const s = await server((_req, res) => {
      res.setHeader(header, value);
      res.end();
    });
    const c = client({ allowedOrigin: s.origin, ...(requestIdHeaders ? { requestIdHeaders } : {}) });
    const ex = await c.send({ method: 'GET', url: '/', traceId: 't' });
    expect(ex.providerRequestId).toBe(value);
  });

  it('P6: a 503 is a response with status and category, not a failure', async () => {
    const s = await server((_req, res) => {
      res.writeHead(503, { 'Retry-After': '120' });
      res.end();
    });
    const ex = await client({ allowedOrigin: s.origin }).send({ method: 'GET', url: '/', traceId: 't' });
    expect(ex).toMatchObject({ outcome: 'response', status: 503, errorCategory: 'http_5xx' });
    expect(ex.headers['retry-after']).toBe('120');
  });

  it.each([
    ['text/html', '<html><body>502 Bad Gateway</body></html>', /content type text\/html is not JSON/],
    ['text/plain', 'upstream overloaded', /content type text\/plain is not JSON/],
    ['application/json', '{"state": "runn', /not valid JSON/],
  ])('F8: a %s body that is not usable JSON is a response with bodyParseError', async (contentType, body, problem) => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'Content-Type': contentType });
      res.end(body);
    });
    const ex = await client({ allowedOrigin: s.origin }).send({ method: 'GET', url: '/', traceId: 't' });
    expect(ex.outcome).toBe('response');
    expect(ex.bodyJson).toBeUndefined();
    expect(ex.bodyParseError).toMatch(problem);
    expect(ex.bodyText).toBe(body);
  });
});

describe('createHttpClient: credentials and origin (C4, T4)', () => {
  it('C4: a URL on another origin is refused: no request reaches it and the credential is never resolved', async () => {
    const provider = await server((_req, res) => res.end());
    const other = await server((_req, res) => res.end());
    let credentialCalls = 0;
    const c = client({
      allowedOrigin: provider.origin,
      authoriser: {
        authorise: async () => {
          credentialCalls += 1;
          return { headers: { Authorization: `Bearer ${SECRET}` }, secrets: [SECRET] };
        },
      },
    });
    for (const url of [
      `${other.origin}/jobs/1`,
      `//127.0.0.1:${other.port}/jobs/1`,
      `https://127.0.0.1:${provider.port}/x`,
      'file:///etc/passwd',
    ]) {
      const ex = await c.send({ method: 'GET', url, traceId: 't' });
      expect(ex).toMatchObject({ outcome: 'refused', errorCategory: 'foreign_origin', bodyBytes: 0 });
      expect(ex.status).toBeUndefined();
      expect(JSON.stringify(ex)).not.toMatch(/authorization/i);
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(other.seen).toHaveLength(0);
    expect(other.connections).toBe(0);
    expect(provider.seen).toHaveLength(0);
    expect(credentialCalls).toBe(0);
    const same = await c.send({ method: 'GET', url: `${provider.origin}/jobs/1`, traceId: 't' });
    expect(same.outcome).toBe('response');
    expect(provider.seen[0]!.headers['authorization']).toBe(`Bearer ${SECRET}`);
    expect(credentialCalls).toBe(1);
  });

  it('C4: a redirect to another host is returned as an answer, never followed', async () => {
    const other = await server((_req, res) => res.end());
    const provider = await server((_req, res) => {
      res.writeHead(303, { Location: `${other.origin}/steal` });
      res.end();
    });
    const ex = await client({ allowedOrigin: provider.origin }).send({
      method: 'POST',
      url: '/jobs',
      json: {},
      traceId: 't',
    });
    expect(ex).toMatchObject({ outcome: 'response', status: 303 });
    expect(ex.headers['location']).toBe(`${other.origin}/steal`);
    expect(other.seen).toHaveLength(0);
    expect(other.connections).toBe(0);
  });

  it('T4: the credential never appears in the exchange, even when the provider echoes it back', async () => {
    const s = await server((req, res) => {
      const auth = String(req.headers['authorization']);
      res.writeHead(401, { 'Content-Type': 'application/json', 'X-Echo': auth, 'Set-Cookie': `session=${SECRET}` });
      res.end(
        JSON.stringify({
          error: `token ${auth.slice(7)} is not valid`,
          seen: { authorization: auth },
          raw: auth.slice(7),
        }),
      );
    });
    const c = client({
      allowedOrigin: s.origin,
      authoriser: headerAuthoriser('X-Provider-Key', SECRET),
    });
    const ex = await c.send({
      method: 'GET',
      url: `/jobs?access_token=${SECRET}&page=2`,
      headers: { Authorization: `Bearer ${SECRET}` },
      traceId: 't',
    });
    expect(ex).toMatchObject({ outcome: 'response', status: 401, errorCategory: 'http_4xx' });
    expect(ex.request.headers['x-provider-key']).toBe('[redacted]');
    expect(ex.request.headers['authorization']).toBe('[redacted]');
    expect(ex.request.url).toBe(`${s.origin}/jobs?access_token=[redacted]&page=2`);
    expect(ex.headers['set-cookie']).toBe('[redacted]');
    const serialised = JSON.stringify(ex);
    expect(serialised).not.toContain(SECRET);
    expect(serialised).not.toContain(SECRET.slice(0, 12));
    expect(s.seen[0]!.headers['x-provider-key']).toBe(SECRET);
    expect(s.seen[0]!.url).toBe(`/jobs?access_token=${SECRET}&page=2`);
  });

  it('T4: a failing authoriser means refused, nothing sent, and its message (which may hold a secret) is not kept', async () => {
    const s = await server((_req, res) => res.end());
    const c = client({
      allowedOrigin: s.origin,
      authoriser: {
        authorise: async () => {
          throw new Error(`cannot read /run/secrets: ${SECRET}`);
        },
      },
    });
    const ex = await c.send({ method: 'POST', url: '/jobs', json: {}, traceId: 't' });
    expect(ex).toMatchObject({ outcome: 'refused', errorCategory: 'credential_unavailable' });
    expect(JSON.stringify(ex)).not.toContain(SECRET);
    expect(s.seen).toHaveLength(0);
    const bad = client({
      allowedOrigin: s.origin,
      authoriser: headerAuthoriser('Authorization', 'Bearer x\r\nX-Evil: 1'),
    });
    expect(await bad.send({ method: 'GET', url: '/', traceId: 't' })).toMatchObject({
      outcome: 'refused',
      errorCategory: 'credential_unavailable',
    });
    expect(s.seen).toHaveLength(0);
  });
});

describe('createHttpClient: classification of failures (U1)', () => {
  it('U1: a refused connection is not_sent', async () => {
    const port = await closedPort();
    const ex = await client({ allowedOrigin: `http://127.0.0.1:${port}` }).send({
      method: 'POST',
      url: '/jobs',
      json: {},
      traceId: 't',
    });
    expect(ex).toMatchObject({ outcome: 'not_sent', errorCategory: 'connect_refused', bodyBytes: 0 });
    expect(ex.errorMessage).toMatch(/ECONNREFUSED/);
  });

  it('U1: an unresolvable host is not_sent', async () => {
    const ex = await client({ allowedOrigin: 'http://asyncjob-test.invalid' }).send({
      method: 'GET',
      url: '/',
      traceId: 't',
    });
    expect(ex.outcome).toBe('not_sent');
    expect(['dns', 'connect_timeout']).toContain(ex.errorCategory);
  });

  it('U1: a failed TLS handshake is not_sent, and the server never sees a request', async () => {
    let bytesFromClient = '';
    const s = await netServer((socket) => {
      socket.on('data', (c: Buffer) => {
        bytesFromClient += c.toString('latin1');
        socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      });
    });
    const ex = await client({ allowedOrigin: `https://127.0.0.1:${s.port}` }).send({
      method: 'POST',
      url: '/jobs',
      json: {},
      traceId: 't',
    });
    expect(ex).toMatchObject({ outcome: 'not_sent', errorCategory: 'tls' });
    expect(bytesFromClient).not.toContain('POST /jobs');
  });

  it('U1: a server that reads the request and then drops the connection makes the exchange ambiguous', async () => {
    const s = await netServer((socket) => {
      void readRequestHead(socket).then(() => socket.destroy());
    });
    const ex = await client({ allowedOrigin: s.origin }).send({
      method: 'POST',
      url: '/jobs',
      json: { a: 1 },
      traceId: 't',
    });
    expect(ex).toMatchObject({ outcome: 'ambiguous', errorCategory: 'reset_after_send' });
    expect(ex.status).toBeUndefined();
  });

  it('U1: no headers within headersTimeoutMs after sending is ambiguous timeout_after_send', async () => {
    const s = await server(() => undefined);
    const started = performance.now();
    const ex = await client({ allowedOrigin: s.origin, headersTimeoutMs: 150 }).send({
      method: 'POST',
      url: '/jobs',
      json: {},
      traceId: 't',
    });
    expect(ex).toMatchObject({ outcome: 'ambiguous', errorCategory: 'timeout_after_send' });
    expect(s.seen).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('U1: a body that stalls past bodyTimeoutMs is ambiguous body_timeout, keeping the status', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
      res.write('{"state":');
    });
    const ex = await client({ allowedOrigin: s.origin, bodyTimeoutMs: 150 }).send({
      method: 'GET',
      url: '/',
      traceId: 't',
    });
    expect(ex).toMatchObject({ outcome: 'ambiguous', errorCategory: 'body_timeout', status: 200 });
  });

  it('U1: a connection closed in the middle of the body is ambiguous truncated', async () => {
    const s = await netServer((socket) => {
      void readRequestHead(socket).then(() => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"id":"j1"');
        setTimeout(() => socket.destroy(), 20);
      });
    });
    const ex = await client({ allowedOrigin: s.origin }).send({ method: 'POST', url: '/jobs', traceId: 't' });
    expect(ex).toMatchObject({ outcome: 'ambiguous', errorCategory: 'truncated', status: 200 });
  });

  it('F8: a body over maxBodyBytes is cut off early, classified body_too_large, and not read to the end', async () => {
    const totalBytes = 64 * 1024 * 1024;
    const serverSide = { written: 0, closedEarly: false };
    const s = await server((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      res.on('close', () => {
        serverSide.closedEarly = serverSide.written < totalBytes;
      });
      const pump = (): void => {
        while (serverSide.written < totalBytes && !res.destroyed) {
          serverSide.written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
    const ex = await client({ allowedOrigin: s.origin, maxBodyBytes: 100_000 }).send({
      method: 'GET',
      url: '/',
      traceId: 't',
    });
    expect(ex).toMatchObject({ outcome: 'body_too_large', errorCategory: 'body_too_large', status: 200 });
    expect(ex.bodyBytes).toBeLessThanOrEqual(100_000);
    expect(ex.bodyText).toBeUndefined();
    await expect.poll(() => serverSide.closedEarly, { timeout: 2_000 }).toBe(true);
    expect(serverSide.written).toBeLessThan(totalBytes / 2);
  });

  it('F8: a Content-Length over maxBodyBytes is refused before reading the body', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'Content-Length': String(10_000_000) });
      res.write(Buffer.alloc(1024));
    });
    const ex = await client({ allowedOrigin: s.origin, maxBodyBytes: 1000 }).send({
      method: 'GET',
      url: '/',
      traceId: 't',
    });
    expect(ex).toMatchObject({ outcome: 'body_too_large', bodyBytes: 0 });
    expect(ex.errorMessage).toMatch(/Content-Length 10000000/);
  });
});

describe('createHttpClient: download (R2)', () => {
  const payload = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 251));
  const sha = createHash('sha256').update(payload).digest('hex');

  it('R2: streams a 2xx body to a callback sink with its sha256 and size', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(payload.length) });
      res.end(payload);
    });
    const received: Buffer[] = [];
    const ex = await client({ allowedOrigin: s.origin }).download(
      { method: 'GET', url: '/result', traceId: 't' },
      async (chunk) => {
        await new Promise((r) => setImmediate(r));
        received.push(Buffer.from(chunk));
      },
    );
    expect(ex.outcome).toBe('response');
    expect(ex.download).toEqual({
      sizeBytes: payload.length,
      sha256: sha,
      complete: true,
      expectedSizeBytes: payload.length,
    });
    expect(Buffer.concat(received).equals(payload)).toBe(true);
    expect(ex.bodyText).toBeUndefined();
    expect(s.seen[0]!.headers['traceparent']).toMatch(TRACEPARENT);
  });

  it('R2: streams into a Node writable', async () => {
    const s = await server((_req, res) => res.end(payload));
    const parts: Buffer[] = [];
    const sink = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _enc, cb) {
        parts.push(chunk);
        setImmediate(cb);
      },
    });
    const ex = await client({ allowedOrigin: s.origin }).download(
      { method: 'GET', url: '/result', traceId: 't' },
      sink,
    );
    expect(ex.download).toMatchObject({ sizeBytes: payload.length, sha256: sha, complete: true });
    expect(Buffer.concat(parts).equals(payload)).toBe(true);
  });

  it('R4: a body shorter than its Content-Length is ambiguous truncated with complete=false', async () => {
    const s = await netServer((socket) => {
      void readRequestHead(socket).then(() => {
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${payload.length}\r\n\r\n`);
        socket.write(payload.subarray(0, 5000));
        setTimeout(() => socket.destroy(), 20);
      });
    });
    const parts: Buffer[] = [];
    const ex = await client({ allowedOrigin: s.origin }).download(
      { method: 'GET', url: '/result', traceId: 't' },
      (c) => {
        parts.push(Buffer.from(c));
      },
    );
    expect(ex).toMatchObject({ outcome: 'ambiguous', errorCategory: 'truncated', status: 200 });
    expect(ex.download).toMatchObject({ sizeBytes: 5000, complete: false, expectedSizeBytes: payload.length });
    expect(ex.download!.sha256).toBe(createHash('sha256').update(payload.subarray(0, 5000)).digest('hex'));
    expect(Buffer.concat(parts).length).toBe(5000);
  });

  it('R2: a download over maxDownloadBytes is cut off as body_too_large', async () => {
    const s = await server((_req, res) => res.end(payload));
    const ex = await client({ allowedOrigin: s.origin, maxDownloadBytes: 50_000 }).download(
      { method: 'GET', url: '/r', traceId: 't' },
      () => undefined,
    );
    expect(ex).toMatchObject({ outcome: 'body_too_large' });
    expect(ex.download).toMatchObject({ complete: false });
    expect(ex.download!.sizeBytes).toBeLessThanOrEqual(50_000);
  });

  it('R4: a non-2xx answer is read bounded and never written to the sink', async () => {
    const s = await server((_req, res) => {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end('{"error":"gone"}');
    });
    let sinkCalls = 0;
    const ex = await client({ allowedOrigin: s.origin }).download({ method: 'GET', url: '/r', traceId: 't' }, () => {
      sinkCalls += 1;
    });
    expect(ex).toMatchObject({ outcome: 'response', status: 404, bodyJson: { error: 'gone' } });
    expect(ex.download).toBeUndefined();
    expect(sinkCalls).toBe(0);
  });

  it('a failing sink is our fault: ASYNCJOB_ERR_HTTP_SINK_FAILED', async () => {
    const s = await server((_req, res) => res.end(payload));
    const c = client({ allowedOrigin: s.origin });
    const failing = c.download({ method: 'GET', url: '/r', traceId: 't' }, () => {
      throw new Error('disk full');
    });
    await expect(failing).rejects.toMatchObject({ code: 'ASYNCJOB_ERR_HTTP_SINK_FAILED' });
  });
});

describe('createHttpClient: our own faults are thrown with stable codes', () => {
  it('rejects bad options naming every field', () => {
    let error: unknown;
    try {
      createHttpClient({
        allowedOrigin: 'ftp://x',
        connectTimeoutMs: -1,
        maxBodyBytes: 1.5,
        authoriser: 'secret' as never,
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidHttpOptionsError);
    const e = error as InvalidHttpOptionsError;
    expect(e.code).toBe('ASYNCJOB_ERR_HTTP_INVALID_OPTIONS');
    expect(e.issues.map((i) => i.split(':')[0])).toEqual(
      expect.arrayContaining(['allowedOrigin', 'connectTimeoutMs', 'maxBodyBytes', 'authoriser']),
    );
    expect(() => createHttpClient({ allowedOrigin: 'https://a.example', baseUrl: 'https://b.example/v1' })).toThrow(
      /baseUrl: must be on allowedOrigin/,
    );
  });

  it('rejects a malformed request naming the field, and use after close', async () => {
    const s = await server((_req, res) => res.end());
    const c = client({ allowedOrigin: s.origin });
    await expect(c.send({ method: 'GET', url: '/', traceId: 'bad\ntrace' })).rejects.toBeInstanceOf(
      InvalidHttpRequestError,
    );
    await expect(c.send({ method: 'GET', url: '/', traceId: 't', spanId: 'xyz' })).rejects.toMatchObject({
      field: 'spanId',
    });
    await expect(c.send({ method: 'GET', url: '/', traceId: 't', headers: { 'X-A': 'a\r\nb' } })).rejects.toMatchObject(
      { field: 'headers.X-A' },
    );
    await expect(c.send({ method: 'BREW' as never, url: '/', traceId: 't' })).rejects.toMatchObject({
      field: 'method',
    });
    expect(s.seen).toHaveLength(0);
    await c.close();
    await c.close();
    await expect(c.send({ method: 'GET', url: '/', traceId: 't' })).rejects.toBeInstanceOf(AsyncJobError);
    await expect(c.send({ method: 'GET', url: '/', traceId: 't' })).rejects.toMatchObject({
      code: 'ASYNCJOB_ERR_HTTP_CLIENT_CLOSED',
    });
  });
});
