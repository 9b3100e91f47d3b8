/**
 * The provider HTTP client on one pooled undici dispatcher (a `Pool` bound to the provider's origin, so no
 * other host is even reachable through it). `send` and `download` always resolve to an `HttpExchange` for
 * anything the network or the provider did; they throw only for our own faults (`errors.ts`).
 *
 * A call is prepared here (request checks, target on the origin, session cookies, then the authoriser, which sees
 * the request as sent, in that order) and carried by one `ExchangeHandler` (`exchange-handler.ts`), whose phase
 * decides whether the provider can have seen the request: a failure before undici starts writing it is
 * `not_sent`, any failure after is `ambiguous`. A 401 answer to a request that is safe to resend lets the
 * authoriser renew the credential, and the request is resent once (T4).
 */
import { Pool, type Dispatcher } from 'undici';
import { AsyncJobError } from '../../core/errors';
import { type HttpDownload, type HttpExchange, type RejectedAttempt } from './exchange';
import { ExchangeHandler, type ExchangeResult } from './exchange-handler';
import { authorisedHeaders, authorisedUrl, authoriseRequest, scrub, secretsOf, type Authorisation } from './authoriser';
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
import { createRedactionRules, redactHeaders, redactUrl, type RedactionConfig, type RedactionRules } from './redact';
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

/** One attempt of a call: refused before sending, or sent with this authorisation. */
type Attempt =
  | { readonly kind: 'refused'; readonly exchange: HttpDownload }
  | { readonly kind: 'sent'; readonly exchange: HttpDownload; readonly authorisation: Authorisation | undefined };

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

/** The redaction rules of a client, plus every name an authorisation added: its headers and its query parameter. */
function rulesWith(redact: RedactionConfig, authorisation: Authorisation | undefined): RedactionRules {
  return createRedactionRules({
    ...redact,
    // The host an authoriser pins (a signature covers it) is no secret.
    headerNames: [
      ...(redact.headerNames ?? []),
      ...Object.keys(authorisation?.headers ?? {}).filter((name) => name.toLowerCase() !== 'host'),
    ],
    queryParamNames: [
      ...(redact.queryParamNames ?? []),
      ...(authorisation?.query === undefined ? [] : [authorisation.query.name]),
    ],
  });
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
    const prepared = prepare(request, this.opts.userAgent);
    const target = resolveTarget(request.url, this.opts.resolvedBaseUrl, this.opts.origin);
    if (target.kind !== 'ok') {
      // C4: nothing is resolved or sent for a URL off the provider's origin, not even the credential.
      const { category, message } = target;
      const recorded = { method: prepared.method, url: redactUrl(request.url, this.baseRules), headers: {} };
      return this.timed(
        this.start(),
        { outcome: 'refused', headers: {}, bodyBytes: 0, errorCategory: category, errorMessage: message },
        recorded,
        [],
      );
    }
    const first = await this.attempt(request, prepared, target.url, mode);
    if (first.kind === 'refused' || first.exchange.status !== 401 || request.safeToResend !== true)
      return first.exchange;
    // T4: a refused credential is renewed and a request that is safe to resend is resent, once only.
    const renew = this.opts.authoriser?.renew;
    if (renew === undefined || !(await renewed(() => renew.call(this.opts.authoriser, first.authorisation!))))
      return first.exchange;
    const second = await this.attempt(request, prepared, target.url, mode);
    if (second.kind === 'refused') return first.exchange;
    const { status, headers, providerRequestId, startedAtMs, durationMs } = first.exchange;
    const rejectedAttempt: RejectedAttempt = {
      status: status ?? 401,
      headers,
      startedAtMs,
      durationMs,
      ...(providerRequestId !== undefined ? { providerRequestId } : {}),
    };
    return { ...second.exchange, rejectedAttempt };
  }

  private start(): CallStart {
    return { atMs: this.opts.nowMs(), perfMs: performance.now() };
  }

  /** The exchange as returned: timed, its request as recorded, every `secrets` scrubbed. */
  private timed(
    start: CallStart,
    result: ExchangeResult,
    request: HttpDownload['request'],
    secrets: readonly string[],
  ): HttpDownload {
    return scrub<HttpDownload>(
      {
        ...result,
        durationMs: Math.max(0, performance.now() - start.perfMs),
        startedAtMs: start.atMs,
        receivedAtMs: this.opts.nowMs(),
        request,
      },
      secrets,
    );
  }

  /** Authorises the request for `url` as it will go on the wire, and sends it once. */
  private async attempt(request: HttpRequest, prepared: PreparedRequest, url: URL, mode: BodyMode): Promise<Attempt> {
    const start = this.start();
    const headers = wireHeadersFor(prepared.headers, url, request.session);
    const result = await authoriseRequest(this.opts.authoriser, {
      method: prepared.method,
      url,
      headers: { host: url.host, ...headers },
      body: prepared.payload,
    });
    if (!result.ok) {
      const recorded = {
        method: prepared.method,
        url: redactUrl(url.toString(), this.baseRules),
        headers: redactHeaders(headers, this.baseRules),
      };
      const refused: ExchangeResult = {
        outcome: 'refused',
        headers: {},
        bodyBytes: 0,
        errorCategory: 'credential_unavailable',
        errorMessage: result.message,
      };
      return { kind: 'refused', exchange: this.timed(start, refused, recorded, []) };
    }
    const { authorisation } = result;
    const rules = authorisation === undefined ? this.baseRules : rulesWith(this.opts.redact, authorisation);
    const wireUrl = authorisedUrl(url, authorisation);
    const wireHeaders = authorisedHeaders(headers, authorisation);
    const handler = new ExchangeHandler({
      origin: this.opts.origin,
      method: prepared.method,
      mode,
      limitBytes: mode.kind === 'sink' ? this.opts.maxDownloadBytes : this.opts.maxBodyBytes,
      rules,
      requestIdHeaders: this.opts.requestIdHeaders,
      onSetCookies: cookieReceiver(request.session, url),
      onWritten: request.onWritten,
      reading: { format: request.answerFormat, jsonContentTypes: this.opts.jsonContentTypes },
    });
    this.dispatch(`${wireUrl.pathname}${wireUrl.search}`, prepared, wireHeaders, handler);
    const recorded = {
      method: prepared.method,
      url: redactUrl(wireUrl.toString(), rules),
      headers: redactHeaders(wireHeaders, rules),
    };
    return {
      kind: 'sent',
      exchange: this.timed(start, await handler.result, recorded, secretsOf(authorisation)),
      authorisation,
    };
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

/** Whether the authoriser renewed the credential; a renewal that throws renewed nothing. */
async function renewed(renew: () => Promise<boolean>): Promise<boolean> {
  try {
    return (await renew()) === true;
  } catch {
    return false;
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
