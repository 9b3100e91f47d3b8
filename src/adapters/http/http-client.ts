/**
 * The provider HTTP client on one pooled undici dispatcher (a `Pool` bound to the provider's origin, so no
 * other host is even reachable through it). `send` and `download` always resolve to an `HttpExchange` for
 * anything the network or the provider did; they throw only for our own faults (`errors.ts`).
 *
 * A call is prepared here (request checks, target on the origin, credential, session cookies, in that order) and
 * carried by one `ExchangeHandler` (`exchange-handler.ts`), whose phase decides whether the provider can have
 * seen the request: a failure before undici starts writing it is `not_sent`, any failure after is `ambiguous`.
 */
import { Pool, type Dispatcher } from 'undici';
import { AsyncJobError } from '../../core/errors';
import { type HttpDownload, type HttpExchange } from './exchange';
import { ExchangeHandler, type ExchangeResult } from './exchange-handler';
import { resolveCredential, scrub, secretsOf } from './credential';
import {
  cookieReceiver,
  encodeBody,
  resolveTarget,
  validateHeaders,
  validateMethod,
  wireHeadersFor,
  type HttpRequest,
} from './http-request';
import { type HttpClientOptions, type ResolvedHttpClientOptions, resolveHttpClientOptions } from './options';
import { createRedactionRules, redactHeaders, redactUrl, type RedactionRules } from './redact';
import { sinkWriter, type BodyMode, type DownloadSink } from './response-body';
import { traceHeaders } from './trace-headers';

export { type HttpMethod } from './http-request';
export { type HttpDownload } from './exchange';

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

/** The parts of a request known before anything is resolved: checked, encoded, with the trace headers. */
interface PreparedRequest {
  readonly method: HttpRequest['method'];
  readonly headers: Record<string, string>;
  readonly payload: Buffer | undefined;
}

/** When a call started, to time its exchange: epoch ms for the record, monotonic ms for the duration. */
interface CallStart {
  readonly atMs: number;
  readonly perfMs: number;
}

function prepare(request: HttpRequest, userAgent: string): PreparedRequest {
  const method = validateMethod(request.method);
  const trace = traceHeaders(request.traceId, request.spanId);
  const { payload, contentType } = encodeBody(request);
  const headers = validateHeaders(request.headers);
  if (contentType !== undefined && headers['content-type'] === undefined) headers['content-type'] = contentType;
  headers['user-agent'] = userAgent;
  headers['x-trace-id'] = trace['x-trace-id'];
  headers.traceparent = trace.traceparent;
  return { method, headers, payload };
}

/** Runs one call from prepared request to exchange; one per client. */
class ProviderCalls {
  private readonly baseRules: RedactionRules;

  constructor(
    private readonly opts: ResolvedHttpClientOptions,
    private readonly pool: Pool,
  ) {
    this.baseRules = createRedactionRules(opts.redact);
  }

  async call(request: HttpRequest, mode: BodyMode): Promise<HttpDownload> {
    const start: CallStart = { atMs: this.opts.nowMs(), perfMs: performance.now() };
    const prepared = prepare(request, this.opts.userAgent);
    const target = resolveTarget(request.url, this.opts.resolvedBaseUrl, this.opts.origin);
    const recordedUrl = redactUrl(target.kind === 'ok' ? target.url.toString() : request.url, this.baseRules);
    // The exchange as returned: timed, its request redacted with `rules`, every `secrets` scrubbed.
    const recordWith =
      (rules: RedactionRules, secrets: readonly string[], headers: Record<string, string>) =>
      (result: ExchangeResult): HttpDownload =>
        scrub<HttpDownload>(
          {
            ...result,
            durationMs: Math.max(0, performance.now() - start.perfMs),
            startedAtMs: start.atMs,
            receivedAtMs: this.opts.nowMs(),
            request: { method: prepared.method, url: recordedUrl, headers: redactHeaders(headers, rules) },
          },
          secrets,
        );
    const refused = recordWith(this.baseRules, [], prepared.headers);
    if (target.kind !== 'ok') {
      // C4: nothing is resolved or sent for a URL off the provider's origin, not even the credential.
      const { category, message } = target;
      return refused({ outcome: 'refused', headers: {}, bodyBytes: 0, errorCategory: category, errorMessage: message });
    }
    const credential = await resolveCredential(this.opts.credential);
    if (!credential.ok) {
      const errorMessage = credential.message;
      return refused({
        outcome: 'refused',
        headers: {},
        bodyBytes: 0,
        errorCategory: 'credential_unavailable',
        errorMessage,
      });
    }
    const rules = credential.header
      ? createRedactionRules({
          ...this.opts.redact,
          headerNames: [...(this.opts.redact.headerNames ?? []), credential.header.headerName],
        })
      : this.baseRules;
    const wireHeaders = wireHeadersFor(prepared.headers, target.url, request.session, credential.header);
    const handler = new ExchangeHandler({
      origin: this.opts.origin,
      method: prepared.method,
      mode,
      limitBytes: mode.kind === 'sink' ? this.opts.maxDownloadBytes : this.opts.maxBodyBytes,
      rules,
      requestIdHeaders: this.opts.requestIdHeaders,
      onSetCookies: cookieReceiver(request.session, target.url),
      onWritten: request.onWritten,
    });
    this.dispatch(`${target.url.pathname}${target.url.search}`, prepared, wireHeaders, handler);
    return recordWith(rules, secretsOf(credential.header), wireHeaders)(await handler.result);
  }

  private dispatch(
    path: string,
    prepared: PreparedRequest,
    headers: Record<string, string>,
    handler: ExchangeHandler,
  ): void {
    try {
      this.pool.dispatch(
        {
          path,
          method: prepared.method as Dispatcher.HttpMethod,
          headers,
          body: prepared.payload ?? null,
          headersTimeout: this.opts.headersTimeoutMs,
          bodyTimeout: this.opts.bodyTimeoutMs,
          // Never resent by undici: the workflow decides and counts every request (B2).
          idempotent: false,
        },
        handler,
      );
    } catch (err) {
      handler.onResponseError(undefined, err as Error);
    }
  }
}

/**
 * Creates a client for one provider. Validates `options` (throws `InvalidHttpOptionsError` naming every bad
 * field) and opens no connection until the first request.
 */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const opts = resolveHttpClientOptions(options);
  const pool = new Pool(opts.origin, {
    connections: opts.maxConnections,
    pipelining: 1,
    connect: { timeout: opts.connectTimeoutMs },
    headersTimeout: opts.headersTimeoutMs,
    bodyTimeout: opts.bodyTimeoutMs,
    keepAliveTimeout: opts.keepAliveTimeoutMs,
  });
  const calls = new ProviderCalls(opts, pool);
  let closed = false;
  const call = (request: HttpRequest, mode: BodyMode): Promise<HttpDownload> => {
    if (closed) throw new AsyncJobError('ASYNCJOB_ERR_HTTP_CLIENT_CLOSED', 'send() or download() after close()');
    return calls.call(request, mode);
  };
  return {
    send: async (request) => call(request, { kind: 'buffer' }),
    download: async (request, sink) => call(request, { kind: 'sink', write: sinkWriter(sink) }),
    async close() {
      if (closed) return;
      closed = true;
      await pool.destroy();
    },
  };
}
