/**
 * `asyncjob codec-server` over loopback: the Web UI's CORS preflight, the bearer token, the `/decode` and `/encode`
 * round trip in the UI's proto3 JSON, and the body limit.
 */
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CodecServer, isLoopback, startCodecServer } from '../../src/codec/codec-server';
import { EncryptionCodec } from '../../src/codec/encryption-codec';
import { runCli } from '../../src/cli/run-cli';
import { hasCode } from '../../src/core/errors';
import { FakeClient, fakeDeps } from '../cli/fixtures';

const UI = 'http://localhost:8233';
const TOKEN = `codec-token-${randomBytes(8).toString('hex')}`;
const codec = new EncryptionCodec([{ keyId: 'k1', key: randomBytes(32) }]);
const INPUT = { report: 'weekly', note: 'distinctive-codec-server-note' };

/** A payload as the Web UI sends it: metadata values and data in base64. */
function asJson(payload: { metadata?: Record<string, Uint8Array | null> | null; data?: Uint8Array | null }) {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]),
    ),
    data: Buffer.from(payload.data ?? []).toString('base64'),
  };
}

describe('codec server', () => {
  let server: CodecServer;
  beforeAll(async () => {
    server = await startCodecServer({
      codec,
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      origins: [UI],
      maxBodyBytes: 64 * 1024,
    });
  });
  afterAll(() => server?.stop());

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    request(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-namespace': 'default', origin: UI, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('answers the Web UI preflight: its origin, credentials, X-Namespace, Content-Type and Authorization', async () => {
    const preflight = await request(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace,authorization',
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(UI);
    expect(preflight.headers['access-control-allow-credentials']).toBe('true');
    expect(preflight.headers['access-control-allow-methods']).toContain('POST');
    expect(preflight.headers['access-control-allow-headers']).toBe('X-Namespace, Content-Type, Authorization');
    await preflight.body.dump();
    const stranger = await request(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.test' },
    });
    expect(stranger.statusCode).toBe(403);
    expect(stranger.headers['access-control-allow-origin']).toBeUndefined();
    await stranger.body.dump();
  });

  it('refuses a request without the bearer token, or with another, and accepts the token', async () => {
    const payloads = [asJson(defaultPayloadConverter.toPayload(INPUT))];
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }];
    for (const headers of attempts) {
      const refused = await post('/encode', { payloads }, headers);
      expect(refused.statusCode).toBe(401);
      expect(((await refused.body.json()) as { code: string }).code).toBe('ASYNCJOB_ERR_UNAUTHENTICATED');
    }
    const accepted = await post('/encode', { payloads }, { authorization: `Bearer ${TOKEN}` });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.headers['access-control-allow-origin']).toBe(UI);
    await accepted.body.dump();
  });

  it('encode then decode round trip in the UI shape; decode reads what the workers encrypted', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const plain = asJson(defaultPayloadConverter.toPayload(INPUT));
    const encoded = (await (await post('/encode', { payloads: [plain] }, auth)).body.json()) as {
      payloads: { metadata: Record<string, string>; data: string }[];
    };
    expect(Buffer.from(encoded.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
    expect(Buffer.from(encoded.payloads[0]!.data, 'base64').toString()).not.toContain('distinctive');
    const decoded = (await (await post('/decode', encoded, auth)).body.json()) as { payloads: unknown[] };
    expect(decoded.payloads).toEqual([plain]);
    const [sealed] = await codec.encode([defaultPayloadConverter.toPayload(INPUT)]);
    const fromWorker = (await (await post('/decode', { payloads: [asJson(sealed!)] }, auth)).body.json()) as {
      payloads: { data: string }[];
    };
    expect(JSON.parse(Buffer.from(fromWorker.payloads[0]!.data, 'base64').toString())).toEqual(INPUT);
  });

  it('refuses a body over the limit (413), a body not in the UI shape (400), an unknown key ID (422 with its code)', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const large = await post('/decode', { payloads: [{ data: 'A'.repeat(100 * 1024) }] }, auth);
    expect(large.statusCode).toBe(413);
    await large.body.dump();
    const malformed = await post('/decode', { payload: [] }, auth);
    expect(malformed.statusCode).toBe(400);
    await malformed.body.dump();
    const [foreign] = await new EncryptionCodec([{ keyId: 'k9', key: randomBytes(32) }]).encode([
      defaultPayloadConverter.toPayload(INPUT),
    ]);
    const unknown = await post('/decode', { payloads: [asJson(foreign!)] }, auth);
    expect(unknown.statusCode).toBe(422);
    expect(((await unknown.body.json()) as { code: string }).code).toBe('ASYNCJOB_ERR_PAYLOAD_KEY_UNKNOWN');
    const wrongPath = await post('/other', {}, auth);
    expect(wrongPath.statusCode).toBe(404);
    await wrongPath.body.dump();
  });

  it('without a token serves only a loopback address', async () => {
    expect(isLoopback('127.0.0.1') && isLoopback('::1') && isLoopback('localhost')).toBe(true);
    expect(isLoopback('0.0.0.0') || isLoopback('10.0.0.5')).toBe(false);
    const err = await startCodecServer({ codec, host: '0.0.0.0', port: 0, origins: [UI] }).catch((e: unknown) => e);
    expect(hasCode(err, 'ASYNCJOB_ERR_CONFIG_INVALID')).toBe(true);
    const local = await startCodecServer({ codec, host: '127.0.0.1', port: 0, origins: [UI] });
    const open = await request(`${local.url}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: [] }),
    });
    expect(open.statusCode).toBe(200);
    expect(await open.body.json()).toEqual({ payloads: [] });
    await local.stop();
  });

  it('refuses the origin * without a token (any page could decrypt), and serves it with one', async () => {
    const err = await startCodecServer({ codec, host: '127.0.0.1', port: 0, origins: [UI, '*'] }).catch(
      (e: unknown) => e,
    );
    expect(hasCode(err, 'ASYNCJOB_ERR_CONFIG_INVALID')).toBe(true);
    expect((err as Error).message).toMatch(/ASYNCJOB_CODEC_SERVER_ORIGINS=\* .*ASYNCJOB_CODEC_SERVER_TOKEN/);
    const tokened = await startCodecServer({ codec, host: '127.0.0.1', port: 0, origins: ['*'], token: 'secret' });
    await tokened.stop();
    const io = fakeDeps(new FakeClient());
    const env = {
      ASYNCJOB_PAYLOAD_KEYS: 'k1=env:KEY_1',
      KEY_1: randomBytes(32).toString('hex'),
      ASYNCJOB_CODEC_SERVER_ORIGINS: '*',
    };
    expect(await runCli(['codec-server', '--port', '0'], { ...io.deps, env })).toBe(2);
    expect(io.stderr()).toContain('ASYNCJOB_CODEC_SERVER_ORIGINS=* lets any web page call the codec server');
  });

  it('refuses a port already in use with a clear message', async () => {
    const first = await startCodecServer({ codec, host: '127.0.0.1', port: 0, origins: [UI] });
    const port = Number(new URL(first.url).port);
    const err = await startCodecServer({ codec, host: '127.0.0.1', port, origins: [UI] }).catch((e: unknown) => e);
    expect(hasCode(err, 'ASYNCJOB_ERR_CONFIG_INVALID')).toBe(true);
    expect((err as Error).message).toBe(
      `127.0.0.1:${port} is in use: stop what listens there or choose another --port`,
    );
    await first.stop();
  });
});
