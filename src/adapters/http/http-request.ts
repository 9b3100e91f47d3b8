/**
 * One request as the caller gives it, and the checks and encoding that turn it into what goes on the wire: the
 * method, the caller's headers (validated), the body (JSON or raw), the target URL (on the provider's origin only,
 * C4), and, at the last moment, the session's cookies (the authoriser then sees them, `authoriser.ts`). Pure apart
 * from the session's jar.
 */
import { InvalidHttpRequestError } from './errors';
import { type HttpErrorCategory } from './exchange';
import { isHeaderName, isHeaderValue } from './options';
import { type HttpSession } from './cookie-jar';

/** The HTTP methods the client sends. */
export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** One request. `url` is absolute or relative to the client's base URL. */
export interface HttpRequest {
  readonly method: HttpMethod;
  readonly url: string;
  /** Extra headers. The trace headers, `User-Agent` and the authoriser's headers are set by the client and win. */
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
  /**
   * Called once, synchronously, at the instant undici starts writing this request on a connected socket, with
   * that instant (`performance.now()` of this process, ms). It marks the at-most-once boundary: an exchange that
   * never called it is `not_sent`. The request pacer spaces requests by it. Returning `false` refuses the write
   * at that instant (a fleet send slot whose window has passed): nothing is written, the connection is closed, and
   * the exchange is `not_sent` with `send_window_missed`. An exception it throws is ignored.
   */
  readonly onWritten?: (writtenAtMs: number) => boolean | void;
  /**
   * True when sending this request twice cannot act twice at the provider (a status read, a result download, a
   * lookup, a create carrying an idempotency token). Only then does a 401 answer let the authoriser renew the
   * credential and the request be resent, once (T4); the exchange then says so (`rejectedAttempt`).
   */
  readonly safeToResend?: boolean;
  /**
   * V6: how the answer's body is read: `json` parses it whatever its content type, `text` and `binary` never parse
   * it; absent, it is JSON when its content type says so (or is one of the client's `jsonContentTypes`).
   */
  readonly answerFormat?: 'json' | 'text' | 'binary';
}

/** Where a request goes: a URL on the provider's origin, or why nothing may be sent. */
export type RequestTarget =
  | { readonly kind: 'ok'; readonly url: URL }
  | { readonly kind: 'refused'; readonly category: HttpErrorCategory; readonly message: string };

/** Throws `InvalidHttpRequestError` unless `method` is one the client sends. */
export function validateMethod(method: unknown): HttpMethod {
  if (typeof method !== 'string' || !METHODS.has(method)) {
    throw new InvalidHttpRequestError('method', `must be one of ${[...METHODS].join(', ')}`);
  }
  return method as HttpMethod;
}

/** The caller's headers, lower-cased; throws `InvalidHttpRequestError` naming the first bad one. */
export function validateHeaders(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!isHeaderName(name)) throw new InvalidHttpRequestError(`headers.${name}`, 'is not a valid header name');
    if (typeof value !== 'string' || !isHeaderValue(value))
      throw new InvalidHttpRequestError(`headers.${name}`, 'is not a valid header value');
    out[name.toLowerCase()] = value;
  }
  return out;
}

/** The body's bytes and its default content type; throws `InvalidHttpRequestError` for a bad body. */
export function encodeBody(request: HttpRequest): { payload: Buffer | undefined; contentType: string | undefined } {
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

/**
 * C4: resolves `url` against `baseUrl` and accepts it only on `origin`, over http(s), without user information.
 * Pure.
 */
export function resolveTarget(url: string, baseUrl: string, origin: string): RequestTarget {
  if (typeof url !== 'string' || url.length === 0)
    return { kind: 'refused', category: 'invalid_url', message: 'the URL is empty' };
  let parsed: URL;
  try {
    parsed = new URL(url, baseUrl);
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
  if (parsed.origin !== origin) {
    return {
      kind: 'refused',
      category: 'foreign_origin',
      message: `${parsed.origin} is not the provider's origin ${origin}`,
    };
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { kind: 'refused', category: 'invalid_url', message: 'the URL carries user information' };
  }
  return { kind: 'ok', url: parsed };
}

/**
 * The headers as sent before the authoriser: `headers` plus, for a target already known to be on the provider's
 * origin, the session's cookies (V3). A contract never sets `cookie` (reserved); with a session, the jar is its only
 * source.
 */
export function wireHeadersFor(
  headers: Readonly<Record<string, string>>,
  target: URL,
  session: HttpSession | undefined,
): Record<string, string> {
  const wire = { ...headers };
  const sessionCookie = session === undefined ? undefined : session.cookieHeader(target);
  if (session !== undefined) delete wire.cookie;
  if (sessionCookie !== undefined && isHeaderValue(sessionCookie)) wire.cookie = sessionCookie;
  return wire;
}

/** V3: a receiver storing an answer's `Set-Cookie` values into `session`; a failing store never fails the exchange. */
export function cookieReceiver(
  session: HttpSession | undefined,
  target: URL,
): ((values: readonly string[]) => void) | undefined {
  if (session === undefined) return undefined;
  return (values) => {
    try {
      session.receive(target, values);
    } catch {
      // A session that fails to store a cookie never fails the exchange.
    }
  };
}
