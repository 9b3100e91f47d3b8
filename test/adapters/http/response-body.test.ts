/**
 * How an answer's body is decoded (V6, T4): JSON when its content type says so or is one of the client's
 * `jsonContentTypes`, or as the request's `answerFormat` asks (`json` whatever the content type, `text` and
 * `binary` never); whatever is parsed is redacted like any JSON body. Pure `decodeBody`, then through the client
 * on a loopback server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpClient, type HttpClient } from '../../../src/adapters/http';
import { createRedactionRules } from '../../../src/adapters/http/redact';
import { decodeBody } from '../../../src/adapters/http/response-body';
import { startHttpServer, type Loopback } from './loopback';

const SECRET = 'api-secret-0a1b2c3d4e5f6a7b8c9d';
const RULES = createRedactionRules({ fieldNames: ['apiSecret'] });
const JOB = { JobId: 'job-7', JobStatus: 'IN_PROGRESS', apiSecret: SECRET, nested: { password: 7 } };
const REDACTED_JOB = {
  JobId: 'job-7',
  JobStatus: 'IN_PROGRESS',
  apiSecret: '[redacted]',
  nested: { password: '[redacted]' },
};
const bytes = (value: unknown): Buffer => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('decodeBody (V6)', () => {
  it('V6: by default only JSON content types are parsed (none, application/json, *+json, text/json)', () => {
    for (const contentType of [undefined, 'application/json; charset=utf-8', 'application/problem+json', 'text/json'])
      expect(decodeBody(bytes(JOB), contentType, RULES).bodyJson).toEqual(REDACTED_JOB);
    for (const contentType of ['text/plain; charset=utf-8', 'application/x-amz-json-1.1']) {
      const decoded = decodeBody(bytes(JOB), contentType, RULES);
      expect(decoded.bodyJson).toBeUndefined();
      expect(decoded.bodyParseError).toBe(`the content type ${contentType} is not JSON`);
    }
  });

  it.each(['application/x-amz-json-1.1', 'Application/X-Amz-Json-1.1; charset=utf-8'])(
    'V6, T4: %s is parsed when listed in jsonContentTypes, and redacted',
    (contentType) => {
      const decoded = decodeBody(bytes(JOB), contentType, RULES, { jsonContentTypes: ['application/x-amz-json-1.1'] });
      expect(decoded.bodyJson).toEqual(REDACTED_JOB);
      expect(decoded.bodyParseError).toBeUndefined();
      expect(decoded.bodyText).not.toContain(SECRET);
    },
  );

  it.each(['text/plain; charset=utf-8', 'application/x-amz-json-1.1', 'application/octet-stream'])(
    'V6, T4: format json parses a %s body, and redacts it',
    (contentType) => {
      const decoded = decodeBody(bytes(JOB), contentType, RULES, { format: 'json' });
      expect(decoded.bodyJson).toEqual(REDACTED_JOB);
      expect(decoded.bodyParseError).toBeUndefined();
      expect(JSON.stringify(decoded)).not.toContain(SECRET);
    },
  );

  it('V6: format json with a body that does not parse names why', () => {
    const decoded = decodeBody(bytes('{"JobStatus": "IN_PROG'), 'text/plain', RULES, { format: 'json' });
    expect(decoded.bodyJson).toBeUndefined();
    expect(decoded.bodyParseError).toMatch(/^the body is not valid JSON: /);
  });

  it.each(['text', 'binary'] as const)(
    'V6, T4: format %s never parses, even a JSON body; the text is redacted',
    (format) => {
      const decoded = decodeBody(bytes(JOB), 'application/json', RULES, { format });
      expect(decoded).toEqual({ bodyText: expect.any(String) });
      expect(decoded.bodyText).not.toContain(SECRET);
    },
  );

  it('V6: an empty body is nothing, whatever the format', () => {
    expect(decodeBody(Buffer.alloc(0), 'text/plain', RULES, { format: 'json' })).toEqual({});
  });
});

describe('the HTTP client reads answers as asked (V6)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  async function amzServer(): Promise<Loopback> {
    const s = await startHttpServer((req, res) => {
      res.writeHead(200, { 'Content-Type': req.url === '/plain' ? 'text/plain' : 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(JOB));
    });
    cleanups.push(() => s.close());
    return s;
  }

  function client(s: Loopback, jsonContentTypes?: string[]): HttpClient {
    const c = createHttpClient({
      allowedOrigin: s.origin,
      redact: { fieldNames: ['apiSecret'] },
      ...(jsonContentTypes !== undefined ? { jsonContentTypes } : {}),
    });
    cleanups.push(() => c.close());
    return c;
  }

  it('V6: the client parses the media types it was given, and no others', async () => {
    const s = await amzServer();
    const amz = await client(s, ['application/x-amz-json-1.1']).send({ method: 'POST', url: '/', traceId: 't' });
    expect(amz.bodyJson).toEqual(REDACTED_JOB);
    const plain = await client(s).send({ method: 'POST', url: '/', traceId: 't' });
    expect(plain.bodyJson).toBeUndefined();
    expect(plain.bodyParseError).toBe('the content type application/x-amz-json-1.1 is not JSON');
  });

  it('V6: a request read as json is parsed whatever its content type; one read as text is not', async () => {
    const s = await amzServer();
    const c = client(s);
    const json = await c.send({ method: 'GET', url: '/plain', traceId: 't', answerFormat: 'json' });
    expect(json.bodyJson).toEqual(REDACTED_JOB);
    const text = await c.send({ method: 'GET', url: '/plain', traceId: 't', answerFormat: 'text' });
    expect(text.bodyJson).toBeUndefined();
    expect(text.bodyParseError).toBeUndefined();
    expect(text.bodyText).not.toContain(SECRET);
  });

  it('V6: a client refuses a jsonContentTypes entry that is not a lower-case media type', () => {
    expect(() =>
      createHttpClient({ allowedOrigin: 'http://127.0.0.1:1', jsonContentTypes: ['text/plain; x=1'] }),
    ).toThrow(/jsonContentTypes/);
  });
});
