/**
 * The provider HTTP client on one pooled undici dispatcher (a `Pool` bound to the provider's origin, so no
 * other host is even reachable through it). `send` and `download` always resolve to an `HttpExchange` for
 * anything the network or the provider did; they throw only for our own faults (`errors.ts`).
 *
 * Whether the provider can have seen a request is decided by the phase of the dispatch handler: undici calls
 * `onConnect` on a connected socket immediately before writing the request, and `onRequestSent` once it is
 * written. A failure before `onConnect` is `not_sent`; any failure after it is `ambiguous`.
 */
import { createHash } from 'node:crypto';
import { type Writable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import { AsyncJobHttpError, InvalidHttpRequestError } from './errors';
import { classifyTransportFailure, type ExchangePhase, type HttpErrorCategory, type HttpExchange } from './exchange';
import {
  type CredentialHeader,
  type HttpClientOptions,
  type ResolvedHttpClientOptions,
  isHeaderName,
  isHeaderValue,
  resolveHttpClientOptions,
} from './options';
import {
  REDACTED,
  createRedactionRules,
  redactHeaders,
  redactJson,
  redactText,
  redactUrl,
  type RedactionRules,
} from './redact';
import { traceHeaders } from './trace-headers';
import { type HttpSession } from './cookie-jar';

/** The HTTP methods the client sends. */
export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** One request. `url` is absolute or relative to the client's base URL. */
export interface HttpRequest {
  readonly method: HttpMethod;
  readonly url: string;
  /** Extra headers. The trace headers, `User-Agent` and the credential header are set by the client and win. */
  readonly headers?: Readonly<Record<string, string>>;
  /** A JSON body (sent with `Content-Type: application/json`). Mutually exclusive with `body`. */
  readonly json?: unknown;
  /** A raw body. Mutually exclusive with `json`. */
  readonly body?: string | Uint8Array;
  /** The operation's trace ID (T1), sent as `X-Trace-ID` and inside `traceparent`. */
  readonly traceId: string;
  /** The span ID for `traceparent` (16 hex); a fresh random one per call when absent. */
  readonly spanId?: string;
  /**
   * V3: the operation's provider session. When given, its cookies for the request URL are sent as `Cookie` (set
   * here, at the last moment, like the credential, and only once the URL is known to be on the provider's
   * origin) and every `Set-Cookie` of the answer is stored into it. Both headers are redacted in the exchange.
   */
  readonly session?: HttpSession;
}

/** Where `download` writes the body: a Node writable (not ended by us) or a callback awaited per chunk. */
export type DownloadSink = Writable | ((chunk: Uint8Array) => Promise<void> | void);

/** Integrity data of a body streamed to a sink. */
export interface DownloadedBody {
  /** Bytes given to the sink. */
  readonly sizeBytes: number;
  /** Lower-case hex SHA-256 of the bytes given to the sink. */
  readonly sha256: string;
  /** True when the whole body arrived (and matched Content-Length, if one was sent). */
  readonly complete: boolean;
  /** The Content-Length the provider announced, if any. */
  readonly expectedSizeBytes?: number;
}

/** A download's exchange: `download` is present when a 2xx body was streamed to the sink (even partly). */
export interface HttpDownload extends HttpExchange {
  readonly download?: DownloadedBody;
}

/** The provider HTTP client. */
export interface HttpClient {
  /** Sends one request and reads a bounded body. Always resolves for network and provider behaviour. Not retried. */
  send(request: HttpRequest): Promise<HttpExchange>;
  /**
   * Sends one request and streams a 2xx body to `sink` with a running SHA-256 and byte count, up to
   * `maxDownloadBytes`. Non-2xx bodies are read bounded into `bodyText` instead. Throws only
   * `ASYNCJOB_ERR_HTTP_SINK_FAILED` when the sink fails. The caller ends or discards the sink.
   */
  download(request: HttpRequest, sink: DownloadSink): Promise<HttpDownload>;
  /** Destroys the dispatcher and its connections. Safe to repeat. */
  close(): Promise<void>;
}

class BodyTooLargeAbort extends Error {
  readonly code = 'ASYNCJOB_BODY_TOO_LARGE';
}

class SinkFailedAbort extends Error {
  readonly code = 'ASYNCJOB_SINK_FAILED';
}

type Mode =
  { readonly kind: 'buffer' } | { readonly kind: 'sink'; readonly write: (chunk: Uint8Array) => Promise<void> };

function sinkWriter(sink: DownloadSink): (chunk: Uint8Array) => Promise<void> {
  if (typeof sink === 'function') return async (chunk) => sink(chunk);
  return (chunk) =>
    new Promise<void>((resolve, reject) => {
      sink.write(chunk, (err) => (err ? reject(err) : resolve()));
    });
}

function headersFromRaw(raw: Buffer[] | string[] | null | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (!raw) return out;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1').toLowerCase();
    const value = raw[i + 1]!.toString('latin1');
    (out[name] ??= []).push(value);
  }
  return out;
}

function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return true;
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || mediaType.endsWith('+json') || mediaType === 'text/json';
}

function secretsOf(credential: CredentialHeader | undefined): string[] {
  if (!credential) return [];
  const value = credential.headerValue.trim();
  const secrets = [value];
  const space = value.indexOf(' ');
  if (space !== -1) secrets.push(value.slice(space + 1).trim());
  return secrets.filter((s) => s.length >= 6).sort((a, b) => b.length - a.length);
}

function scrub<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') {
    let s: string = value;
    for (const secret of secrets) s = s.split(secret).join(REDACTED);
    return s as T;
  }
  if (Array.isArray(value)) return value.map((v: unknown) => scrub(v, secrets)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[scrub(k, secrets)] = scrub(v, secrets);
    return out as T;
  }
  return value;
}

async function resolveCredential(
  credential: ResolvedHttpClientOptions['credential'],
): Promise<{ ok: true; header: CredentialHeader | undefined } | { ok: false; message: string }> {
  if (credential === undefined) return { ok: true, header: undefined };
  let header: unknown;
  try {
    header = typeof credential === 'function' ? await credential() : await credential.header();
  } catch (err) {
    // The supplier's message may quote the secret or its source; keep only the error's name and code.
    const e = err as { name?: unknown; code?: unknown };
    const code = typeof e?.code === 'string' ? ` (${e.code})` : '';
    return {
      ok: false,
      message: `the credential supplier failed: ${typeof e?.name === 'string' ? e.name : 'error'}${code}`,
    };
  }
  const h = header as Partial<CredentialHeader> | null | undefined;
  if (!h || typeof h.headerName !== 'string' || !isHeaderName(h.headerName)) {
    return { ok: false, message: 'the credential supplier returned no valid headerName' };
  }
  if (typeof h.headerValue !== 'string' || h.headerValue.length === 0 || !isHeaderValue(h.headerValue)) {
    return { ok: false, message: 'the credential supplier returned no valid headerValue' };
  }
  return { ok: true, header: { headerName: h.headerName, headerValue: h.headerValue } };
}

/**
 * Creates a client for one provider. Validates `options` (throws `InvalidHttpOptionsError` naming every bad
 * field) and opens no connection until the first request.
 */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const opts = resolveHttpClientOptions(options);
  const baseRules = createRedactionRules(opts.redact);
  const pool = new Pool(opts.origin, {
    connections: opts.maxConnections,
    pipelining: 1,
    connect: { timeout: opts.connectTimeoutMs },
    headersTimeout: opts.headersTimeoutMs,
    bodyTimeout: opts.bodyTimeoutMs,
    keepAliveTimeout: opts.keepAliveTimeoutMs,
  });
  let closed = false;

  async function exchange(request: HttpRequest, mode: Mode): Promise<HttpDownload> {
    if (closed) throw new AsyncJobHttpError('ASYNCJOB_ERR_HTTP_CLIENT_CLOSED', 'send() or download() after close()');
    const startedAtMs = opts.nowMs();
    const startedPerf = performance.now();
    const method = validateMethod(request.method);
    const trace = traceHeaders(request.traceId, request.spanId);
    const { payload, contentType } = encodeBody(request);

    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      if (!isHeaderName(name)) throw new InvalidHttpRequestError(`headers.${name}`, 'is not a valid header name');
      if (typeof value !== 'string' || !isHeaderValue(value))
        throw new InvalidHttpRequestError(`headers.${name}`, 'is not a valid header value');
      headers[name.toLowerCase()] = value;
    }
    if (contentType !== undefined && headers['content-type'] === undefined) headers['content-type'] = contentType;
    headers['user-agent'] = opts.userAgent;
    headers['x-trace-id'] = trace['x-trace-id'];
    headers.traceparent = trace.traceparent;

    const target = resolveTarget(request.url);
    const recordedUrl = redactUrl(target.kind === 'ok' ? target.url.toString() : request.url, baseRules);
    const finish = (
      rules: RedactionRules,
      secrets: readonly string[],
      result: Omit<HttpDownload, 'durationMs' | 'startedAtMs' | 'receivedAtMs' | 'request'> & {
        requestHeaders: Record<string, string>;
      },
    ): HttpDownload => {
      const { requestHeaders, ...rest } = result;
      const exchangeResult: HttpDownload = {
        ...rest,
        durationMs: Math.max(0, performance.now() - startedPerf),
        startedAtMs,
        receivedAtMs: opts.nowMs(),
        request: { method, url: recordedUrl, headers: redactHeaders(requestHeaders, rules) },
      };
      return scrub(exchangeResult, secrets);
    };

    if (target.kind !== 'ok') {
      // C4: nothing is resolved or sent for a URL off the provider's origin, not even the credential.
      return finish(baseRules, [], {
        outcome: 'refused',
        headers: {},
        bodyBytes: 0,
        errorCategory: target.category,
        errorMessage: target.message,
        requestHeaders: headers,
      });
    }

    const credential = await resolveCredential(opts.credential);
    if (!credential.ok) {
      return finish(baseRules, [], {
        outcome: 'refused',
        headers: {},
        bodyBytes: 0,
        errorCategory: 'credential_unavailable',
        errorMessage: credential.message,
        requestHeaders: headers,
      });
    }
    const rules = credential.header
      ? createRedactionRules({
          ...opts.redact,
          headerNames: [...(opts.redact.headerNames ?? []), credential.header.headerName],
        })
      : baseRules;
    const secrets = secretsOf(credential.header);
    const wireHeaders = { ...headers };
    // V3: the session's cookies, for this URL only (the target is on the provider's origin by now). A contract
    // never sets `cookie` (reserved); with a session, the jar is the only source of it.
    const session = request.session;
    const sessionCookie = session === undefined ? undefined : session.cookieHeader(target.url);
    if (session !== undefined) delete wireHeaders.cookie;
    if (sessionCookie !== undefined && isHeaderValue(sessionCookie)) wireHeaders.cookie = sessionCookie;
    if (credential.header) {
      const name = credential.header.headerName.toLowerCase();
      // A credential carried as a cookie is sent together with the session's cookies, never instead of them.
      wireHeaders[name] =
        name === 'cookie' && wireHeaders.cookie !== undefined
          ? `${credential.header.headerValue}; ${wireHeaders.cookie}`
          : credential.header.headerValue;
    }
    const onSetCookies =
      session === undefined
        ? undefined
        : (values: readonly string[]): void => {
            try {
              session.receive(target.url, values);
            } catch {
              // A session that fails to store a cookie never fails the exchange.
            }
          };

    const outcome = await dispatch(
      {
        path: `${target.url.pathname}${target.url.search}`,
        method,
        headers: wireHeaders,
        body: payload,
      },
      mode,
      rules,
      onSetCookies,
    );
    return finish(rules, secrets, { ...outcome, requestHeaders: wireHeaders });
  }

  function resolveTarget(
    url: string,
  ): { kind: 'ok'; url: URL } | { kind: 'refused'; category: HttpErrorCategory; message: string } {
    if (typeof url !== 'string' || url.length === 0)
      return { kind: 'refused', category: 'invalid_url', message: 'the URL is empty' };
    let parsed: URL;
    try {
      parsed = new URL(url, opts.resolvedBaseUrl);
    } catch {
      return { kind: 'refused', category: 'invalid_url', message: 'the URL does not parse' };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      return {
        kind: 'refused',
        category: 'foreign_origin',
        message: `the URL scheme ${parsed.protocol} is not the provider's`,
      };
    }
    if (parsed.origin !== opts.origin) {
      return {
        kind: 'refused',
        category: 'foreign_origin',
        message: `${parsed.origin} is not the provider's origin ${opts.origin}`,
      };
    }
    if (parsed.username !== '' || parsed.password !== '') {
      return { kind: 'refused', category: 'invalid_url', message: 'the URL carries user information' };
    }
    return { kind: 'ok', url: parsed };
  }

  type DispatchResult = Omit<HttpDownload, 'durationMs' | 'startedAtMs' | 'receivedAtMs' | 'request'>;

  function dispatch(
    dispatchOptions: { path: string; method: string; headers: Record<string, string>; body: Buffer | undefined },
    mode: Mode,
    rules: RedactionRules,
    onSetCookies?: (values: readonly string[]) => void,
  ): Promise<DispatchResult> {
    const limitBytes = mode.kind === 'sink' ? opts.maxDownloadBytes : opts.maxBodyBytes;
    return new Promise<DispatchResult>((resolve, reject) => {
      let phase: ExchangePhase = 'connecting';
      let abort: ((err?: Error) => void) | undefined;
      let status: number | undefined;
      let rawHeaders: Record<string, string[]> = {};
      let expectedBytes: number | undefined;
      let receivedBytes = 0;
      let streaming = false;
      const chunks: Buffer[] = [];
      const hash = createHash('sha256');
      let writes: Promise<void> = Promise.resolve();
      let pendingWrites = 0;
      let paused = false;
      let resume: (() => void) | undefined;
      let settled = false;
      let stopReason: 'too_large' | 'sink' | undefined;
      let sinkError: unknown;

      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        fn();
      };
      const responseHeaders = (): Record<string, string> => redactHeaders(rawHeaders, rules);
      const providerRequestId = (): string | undefined => {
        for (const name of opts.requestIdHeaders) {
          const v = rawHeaders[name.toLowerCase()]?.[0]?.trim();
          if (v) return redactText(v.slice(0, 500), rules);
        }
        return undefined;
      };
      const download = (complete: boolean): DownloadedBody | undefined =>
        streaming
          ? {
              sizeBytes: receivedBytes,
              sha256: hash.copy().digest('hex'),
              complete,
              ...(expectedBytes !== undefined ? { expectedSizeBytes: expectedBytes } : {}),
            }
          : undefined;
      const statusCategory = (s: number): HttpErrorCategory | undefined =>
        s >= 500 ? 'http_5xx' : s >= 400 ? 'http_4xx' : undefined;

      const failed = (err: Error): void => {
        const code = (err as { code?: unknown }).code;
        if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED') {
          settle(() =>
            reject(
              new InvalidHttpRequestError('request', `undici refused the request: ${redactText(err.message, rules)}`),
            ),
          );
          return;
        }
        if (stopReason === 'sink') {
          settle(() =>
            reject(
              new AsyncJobHttpError('ASYNCJOB_ERR_HTTP_SINK_FAILED', 'the download sink failed', { cause: sinkError }),
            ),
          );
          return;
        }
        const common = {
          headers: responseHeaders(),
          bodyBytes: receivedBytes,
          ...(status !== undefined ? { status } : {}),
          ...optional('providerRequestId', providerRequestId()),
        };
        if (stopReason === 'too_large') {
          settle(() =>
            resolve({
              ...common,
              outcome: 'body_too_large',
              errorCategory: 'body_too_large',
              errorMessage: `the body exceeded ${limitBytes} bytes${expectedBytes !== undefined ? ` (Content-Length ${expectedBytes})` : ''}; cut off`,
              ...optional('download', download(false)),
            }),
          );
          return;
        }
        const { outcome, errorCategory } = classifyTransportFailure(
          phase,
          err as { code?: unknown; message?: unknown },
        );
        settle(() =>
          resolve({
            ...common,
            outcome,
            errorCategory,
            errorMessage: redactText(
              `${typeof code === 'string' ? `${code}: ` : ''}${err.message}`.slice(0, 500),
              rules,
            ),
            ...optional('download', download(false)),
          }),
        );
      };

      const stop = (reason: 'too_large' | 'sink', err: Error): void => {
        stopReason ??= reason;
        abort?.(err);
      };

      const handler = {
        onConnect(abortFn: (err?: Error) => void): void {
          abort = abortFn;
          phase = 'writing_request';
        },
        onRequestSent(): void {
          phase = 'awaiting_headers';
        },
        onHeaders(statusCode: number, raw: Buffer[], resumeFn: () => void): boolean {
          if (statusCode < 200) return true;
          resume = resumeFn;
          phase = 'reading_body';
          status = statusCode;
          rawHeaders = headersFromRaw(raw);
          // V3: cookies are taken as soon as the headers arrive (RFC 6265 5.3), even if the body fails later.
          const setCookies = rawHeaders['set-cookie'];
          if (onSetCookies !== undefined && setCookies !== undefined && setCookies.length > 0) onSetCookies(setCookies);
          const cl = rawHeaders['content-length']?.[0];
          const bodyless = dispatchOptions.method === 'HEAD' || statusCode === 204 || statusCode === 304;
          if (!bodyless && cl !== undefined && /^\d+$/.test(cl.trim())) expectedBytes = Number(cl.trim());
          streaming = mode.kind === 'sink' && statusCode >= 200 && statusCode < 300;
          if (expectedBytes !== undefined && expectedBytes > limitBytes) {
            // Why: refuse before reading a byte when the provider announces a body over the limit.
            stop('too_large', new BodyTooLargeAbort('announced body over the limit'));
            return false;
          }
          return true;
        },
        onData(chunk: Buffer): boolean {
          if (stopReason) return false;
          // Why: undici may hand over empty chunks (e.g. while a paused parser drains on close); pausing on them loops.
          if (chunk.length === 0) return true;
          if (receivedBytes + chunk.length > limitBytes) {
            stop('too_large', new BodyTooLargeAbort('body over the limit'));
            return false;
          }
          receivedBytes += chunk.length;
          if (streaming && mode.kind === 'sink') {
            hash.update(chunk);
            const write = mode.write;
            pendingWrites += 1;
            writes = writes.then(() => write(chunk));
            writes.then(
              () => {
                pendingWrites -= 1;
                if (paused && pendingWrites === 0) {
                  paused = false;
                  resume?.();
                }
              },
              (err: unknown) => {
                sinkError ??= err;
                stop('sink', new SinkFailedAbort('sink failed'));
              },
            );
            // Why: hold the socket while the sink is busy, so a slow sink never makes us buffer the body.
            paused = true;
            return false;
          } else {
            chunks.push(chunk);
          }
          return true;
        },
        onComplete(): void {
          writes.then(
            () => {
              if (stopReason) return;
              const truncated = expectedBytes !== undefined && receivedBytes < expectedBytes;
              const s = status ?? 0;
              const common = {
                status: s,
                headers: responseHeaders(),
                bodyBytes: receivedBytes,
                ...optional('providerRequestId', providerRequestId()),
                ...optional('download', download(!truncated)),
              };
              if (truncated) {
                settle(() =>
                  resolve({
                    ...common,
                    outcome: 'ambiguous',
                    errorCategory: 'truncated',
                    errorMessage: `received ${receivedBytes} of ${expectedBytes} announced bytes`,
                  }),
                );
                return;
              }
              const body = streaming ? {} : decodeBody(Buffer.concat(chunks), rawHeaders['content-type']?.[0], rules);
              settle(() =>
                resolve({ ...common, outcome: 'response', ...optional('errorCategory', statusCategory(s)), ...body }),
              );
            },
            () => {
              // A sink failure after the last chunk: reported as such (the socket is already done).
              settle(() =>
                reject(
                  new AsyncJobHttpError('ASYNCJOB_ERR_HTTP_SINK_FAILED', 'the download sink failed', {
                    cause: sinkError,
                  }),
                ),
              );
            },
          );
        },
        onError(err: Error): void {
          writes.then(
            () => failed(err),
            () => failed(err),
          );
        },
      };

      try {
        pool.dispatch(
          {
            path: dispatchOptions.path,
            method: dispatchOptions.method as Dispatcher.HttpMethod,
            headers: dispatchOptions.headers,
            body: dispatchOptions.body ?? null,
            headersTimeout: opts.headersTimeoutMs,
            bodyTimeout: opts.bodyTimeoutMs,
            idempotent: false,
          },
          handler as unknown as Dispatcher.DispatchHandler,
        );
      } catch (err) {
        handler.onError(err as Error);
      }
    });
  }

  return {
    send: (request) => exchange(request, { kind: 'buffer' }),
    download: (request, sink) => exchange(request, { kind: 'sink', write: sinkWriter(sink) }),
    async close() {
      if (closed) return;
      closed = true;
      await pool.destroy();
    },
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function validateMethod(method: unknown): HttpMethod {
  if (typeof method !== 'string' || !METHODS.has(method)) {
    throw new InvalidHttpRequestError('method', `must be one of ${[...METHODS].join(', ')}`);
  }
  return method as HttpMethod;
}

function encodeBody(request: HttpRequest): { payload: Buffer | undefined; contentType: string | undefined } {
  if (request.json !== undefined && request.body !== undefined) {
    throw new InvalidHttpRequestError('json', 'json and body are mutually exclusive');
  }
  if (request.json !== undefined) {
    let text: string | undefined;
    try {
      text = JSON.stringify(request.json);
    } catch (err) {
      throw new InvalidHttpRequestError('json', `cannot be serialised: ${(err as Error).message}`);
    }
    if (text === undefined) throw new InvalidHttpRequestError('json', 'cannot be serialised');
    return { payload: Buffer.from(text, 'utf8'), contentType: 'application/json' };
  }
  if (request.body === undefined) return { payload: undefined, contentType: undefined };
  if (typeof request.body === 'string')
    return { payload: Buffer.from(request.body, 'utf8'), contentType: 'text/plain; charset=utf-8' };
  if (request.body instanceof Uint8Array)
    return { payload: Buffer.from(request.body), contentType: 'application/octet-stream' };
  throw new InvalidHttpRequestError('body', 'must be a string or a Uint8Array');
}

function decodeBody(
  bytes: Buffer,
  contentType: string | undefined,
  rules: RedactionRules,
): { bodyText?: string; bodyJson?: unknown; bodyParseError?: string } {
  if (bytes.length === 0) return {};
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const bodyText = redactText(text, rules);
  if (!isJsonContentType(contentType)) {
    return { bodyText, bodyParseError: `the content type ${contentType ?? ''} is not JSON` };
  }
  try {
    return { bodyText, bodyJson: redactJson(JSON.parse(text), rules) };
  } catch (err) {
    return { bodyText, bodyParseError: `the body is not valid JSON: ${(err as Error).message.slice(0, 200)}` };
  }
}
