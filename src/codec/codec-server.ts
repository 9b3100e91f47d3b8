/**
 * The codec server the Temporal Web UI decodes payloads through (`asyncjob codec-server`): `POST /decode` and
 * `POST /encode` take and answer `{payloads: [...]}` with each payload in proto3 JSON (metadata values and data in
 * base64), as the UI sends them; CORS for the configured UI origins (credentials allowed, the UI's `X-Namespace`,
 * `Content-Type` and `Authorization` headers); a bearer token, compared in constant time, when one is configured,
 * and without one only a loopback address is served and the origin `*` is refused; bodies over
 * {@link MAX_BODY_BYTES} refused. The keys stay in this process: what leaves it is what the operator's browser shows.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { AsyncJobError } from '../core/errors';

/**
 * The largest request body read. Temporal refuses a payload over 2 MB (`limit.blobSize.error`) and the UI sends the
 * payloads of one event or query at a time, so 8 MiB holds any request the UI makes.
 */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** The request headers the Web UI sends a codec server. */
const ALLOWED_HEADERS = 'X-Namespace, Content-Type, Authorization';

/** Options of {@link startCodecServer}. */
export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Interface to listen on; without a token only a loopback address (127.0.0.0/8, ::1, localhost). */
  host: string;
  /** Port; 0 for a free one. */
  port: number;
  /** The bearer token every `POST` must carry; none: loopback only. Never logged. */
  token?: string;
  /** Origins (scheme://host[:port]) whose pages may call it; `*` any page, without credentials. */
  origins: readonly string[];
  /** The largest body read, in bytes (default {@link MAX_BODY_BYTES}). */
  maxBodyBytes?: number;
}

/** A running codec server. */
export interface CodecServer {
  /** `http://host:port`, the endpoint to give the Web UI. */
  url: string;
  /** Stops listening and closes open connections. Safe to repeat. */
  stop(): Promise<void>;
}

const jsonPayloadSchema = z.object({
  metadata: z.record(z.string(), z.base64()).nullish(),
  data: z.base64().nullish(),
});
const bodySchema = z.object({ payloads: z.array(jsonPayloadSchema) });
type JsonPayload = z.infer<typeof jsonPayloadSchema>;

function fromJson(payload: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(payload.data ?? '', 'base64'),
  };
}

function toJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]),
    ),
    data: Buffer.from(payload.data ?? []).toString('base64'),
  };
}

/** Whether `host` is a loopback address or name. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

/** Constant-time comparison of the request's `Authorization` with the token (digests: equal length always). */
function authorised(request: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const sent = request.headers.authorization ?? '';
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(sent), digest(`Bearer ${token}`));
}

/** A refusal of ours, answered as JSON with its status. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function readBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  const declared = Number(request.headers['content-length'] ?? 0);
  const tooLarge = () => new Refusal(413, 'ASYNCJOB_ERR_BODY_TOO_LARGE', `the body is over ${maxBytes} bytes`);
  if (declared > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The CORS headers for a request's origin: none for an origin not configured (the browser then refuses). */
function corsHeaders(origin: string | undefined, origins: readonly string[]): Record<string, string> | undefined {
  if (origin === undefined) return {};
  if (origins.includes(origin))
    return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true', Vary: 'Origin' };
  if (origins.includes('*')) return { 'Access-Control-Allow-Origin': '*' };
  return undefined;
}

function send(response: ServerResponse, status: number, headers: Record<string, string>, body?: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
  });
  response.end(text);
}

/** Answers one request (see the module comment). */
async function handle(request: IncomingMessage, options: CodecServerOptions): Promise<[number, unknown]> {
  const path = new URL(request.url ?? '/', 'http://codec.invalid').pathname;
  const action = path === '/decode' ? 'decode' : path === '/encode' ? 'encode' : undefined;
  if (action === undefined) throw new Refusal(404, 'ASYNCJOB_ERR_NOT_FOUND', 'POST /decode or /encode');
  if (request.method !== 'POST') throw new Refusal(405, 'ASYNCJOB_ERR_USAGE', `${path} takes POST`);
  if (!authorised(request, options.token))
    throw new Refusal(401, 'ASYNCJOB_ERR_UNAUTHENTICATED', 'send Authorization: Bearer with the codec server token');
  const text = await readBody(request, options.maxBodyBytes ?? MAX_BODY_BYTES);
  let parsed;
  try {
    parsed = bodySchema.safeParse(JSON.parse(text));
  } catch {
    throw new Refusal(400, 'ASYNCJOB_ERR_INVALID_INPUT', 'the body is not JSON');
  }
  if (!parsed.success)
    throw new Refusal(400, 'ASYNCJOB_ERR_INVALID_INPUT', 'the body is not {payloads: [{metadata, data}]} in base64');
  const payloads = parsed.data.payloads.map(fromJson);
  const converted = await options.codec[action](payloads);
  return [200, { payloads: converted.map(toJson) }];
}

/**
 * Starts the codec server (see the module comment). Throws `ASYNCJOB_ERR_CONFIG_INVALID`, before listening, for a
 * non-loopback host without a token, and for the origin `*` without a token: any page the operator's browser opens
 * could otherwise have it decrypt; and for a port already in use.
 */
export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  if (options.token === undefined && options.origins.includes('*'))
    throw new AsyncJobError(
      'ASYNCJOB_ERR_CONFIG_INVALID',
      'ASYNCJOB_CODEC_SERVER_ORIGINS=* lets any web page call the codec server: set ASYNCJOB_CODEC_SERVER_TOKEN, or list the Web UI origins',
    );
  if (options.token === undefined && !isLoopback(options.host))
    throw new AsyncJobError(
      'ASYNCJOB_ERR_CONFIG_INVALID',
      `the codec server serves ${options.host} only with a token (ASYNCJOB_CODEC_SERVER_TOKEN); without one, --host 127.0.0.1`,
    );
  const server = createServer((request, response) => {
    const cors = corsHeaders(request.headers.origin, options.origins);
    if (cors === undefined)
      return send(response, 403, {}, { code: 'ASYNCJOB_ERR_UNAUTHENTICATED', message: 'origin not allowed' });
    if (request.method === 'OPTIONS')
      return send(response, 204, {
        ...cors,
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Max-Age': '600',
      });
    handle(request, options).then(
      ([status, body]) => send(response, status, cors, body),
      (err: unknown) => {
        if (err instanceof Refusal) return send(response, err.status, cors, { code: err.code, message: err.message });
        const code = err instanceof AsyncJobError ? err.code : 'ASYNCJOB_ERR_INTERNAL';
        const message = err instanceof AsyncJobError ? err.message : 'the payloads could not be converted';
        send(response, 422, cors, { code, message });
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new AsyncJobError(
              'ASYNCJOB_ERR_CONFIG_INVALID',
              `${options.host}:${options.port} is in use: stop what listens there or choose another --port`,
              { cause: err },
            )
          : err,
      ),
    );
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = isIP(options.host) === 6 ? `[${options.host}]` : options.host;
  let stopped: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
