/**
 * The request authoriser (T4): at the moment of sending, and only for a URL already known to be on the provider's
 * origin (C4), it receives the request exactly as it goes on the wire (method, URL, headers, body bytes) and says
 * what to add: headers and/or one query parameter, plus the strings to scrub from everything the exchange returns,
 * even where the provider echoes them. A scheme that signs (AWS SigV4) signs what it receives, and nothing is
 * changed after it.
 */
import { AsyncJobError } from '../../core/errors';
import { type HttpMethod } from './http-request';
import { isHeaderName, isHeaderValue } from './options';
import { REDACTED } from './redact';

/** The request as it goes on the wire, given to an authoriser. */
export interface OutgoingRequest {
  readonly method: HttpMethod;
  /** The final URL, on the provider's origin. */
  readonly url: URL;
  /** The headers as sent, lower-case names (`host` is the URL's host unless an authoriser sets it). */
  readonly headers: Readonly<Record<string, string>>;
  /** The body's bytes, exactly as sent; undefined when there is none. */
  readonly body: Uint8Array | undefined;
}

/** What an authoriser adds to one request. */
export interface Authorisation {
  /** Headers to add (any case; sent lower-case), replacing any of the same name. Recorded as `[redacted]`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** One query parameter to add, replacing any of the same name. Its value is recorded as `[redacted]`. */
  readonly query?: { readonly name: string; readonly value: string };
  /** Every secret string this request carries, in every form it is sent in; scrubbed from the exchange. */
  readonly secrets: readonly string[];
}

/** Authorises requests to one provider. */
export interface RequestAuthoriser {
  /**
   * What to add to `request`. Throws {@link CredentialUnavailableError} (recorded with its message) or anything
   * else (recorded by name only) when no credential can be had; nothing is then sent.
   */
  authorise(request: OutgoingRequest): Promise<Authorisation>;
  /**
   * Called after the provider answered 401 to a request carrying `rejected`: forgets what it cached for it (an
   * access token) so the next `authorise` gets a fresh credential. Resolves true when a resend can carry another
   * credential. Absent for schemes with nothing to renew. Never throws for an expected failure.
   */
  renew?(rejected: Authorisation): Promise<boolean>;
}

/** An authoriser's refusal whose message names references and endpoints, never a secret: recorded as it is. */
export class CredentialUnavailableError extends AsyncJobError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ASYNCJOB_ERR_CREDENTIAL_UNAVAILABLE', message, options);
  }
}

/** The authorisation for one request, checked, or why it is unusable. */
type AuthorisationResult =
  | { readonly ok: true; readonly authorisation: Authorisation | undefined }
  | { readonly ok: false; readonly message: string };

/** Headers no authoriser may set: the framing and the connection are undici's. */
const FRAMING_HEADERS: ReadonlySet<string> = new Set(['content-length', 'transfer-encoding', 'connection']);
const QUERY_NAME = /^[A-Za-z0-9._~-]{1,100}$/;

function checked(authorisation: Authorisation | undefined): AuthorisationResult {
  if (authorisation === undefined) return { ok: true, authorisation };
  for (const [name, value] of Object.entries(authorisation.headers ?? {})) {
    if (!isHeaderName(name) || FRAMING_HEADERS.has(name.toLowerCase()))
      return { ok: false, message: 'the authoriser returned an unusable header name' };
    if (typeof value !== 'string' || value.length === 0 || !isHeaderValue(value))
      return { ok: false, message: `the authoriser returned no valid value for header ${name.toLowerCase()}` };
  }
  const query = authorisation.query;
  if (query !== undefined && (!QUERY_NAME.test(query.name) || typeof query.value !== 'string' || query.value === ''))
    return { ok: false, message: 'the authoriser returned an unusable query parameter' };
  if (!Array.isArray(authorisation.secrets)) return { ok: false, message: 'the authoriser named no secrets' };
  return { ok: true, authorisation };
}

/**
 * Asks `authoriser` for the request's authorisation and checks it. Never throws: a failing authoriser is a
 * refusal whose message is its own only for a {@link CredentialUnavailableError}; otherwise only the error's
 * name and code are kept (its message may quote the secret or its source).
 */
export async function authoriseRequest(
  authoriser: RequestAuthoriser | undefined,
  request: OutgoingRequest,
): Promise<AuthorisationResult> {
  if (authoriser === undefined) return { ok: true, authorisation: undefined };
  try {
    return checked(await authoriser.authorise(request));
  } catch (err) {
    if (err instanceof CredentialUnavailableError) return { ok: false, message: err.message.slice(0, 500) };
    const failure = err as { name?: unknown; code?: unknown };
    const code = typeof failure?.code === 'string' ? ` (${failure.code})` : '';
    return {
      ok: false,
      message: `the credential could not be had: ${typeof failure?.name === 'string' ? failure.name : 'error'}${code}`,
    };
  }
}

/** `search` (with or without `?`) without the parameter `name`, then `name=value` appended, percent-encoded. */
function withQueryParameter(search: string, name: string, value: string): string {
  const kept = search
    .replace(/^\?/, '')
    .split('&')
    .filter((pair) => {
      if (pair === '') return false;
      const raw = pair.split('=', 1)[0] ?? '';
      try {
        return decodeURIComponent(raw.replace(/\+/g, ' ')) !== name;
      } catch {
        return raw !== name;
      }
    });
  return `?${[...kept, `${encodeURIComponent(name)}=${encodeURIComponent(value)}`].join('&')}`;
}

/** The URL as sent: `url` with the authorisation's query parameter, if any. Pure. */
export function authorisedUrl(url: URL, authorisation: Authorisation | undefined): URL {
  if (authorisation?.query === undefined) return url;
  const out = new URL(url);
  out.search = withQueryParameter(url.search, authorisation.query.name, authorisation.query.value);
  return out;
}

/**
 * The headers as sent: `headers` plus the authorisation's. A credential carried as a cookie is sent together with
 * the session's cookies, never instead. Pure.
 */
export function authorisedHeaders(
  headers: Readonly<Record<string, string>>,
  authorisation: Authorisation | undefined,
): Record<string, string> {
  const wire = { ...headers };
  for (const [rawName, value] of Object.entries(authorisation?.headers ?? {})) {
    const name = rawName.toLowerCase();
    wire[name] = name === 'cookie' && headers.cookie !== undefined ? `${value}; ${headers.cookie}` : value;
  }
  return wire;
}

/** The strings to scrub for an authorisation: its secrets and the query value as encoded; longest first. */
export function secretsOf(authorisation: Authorisation | undefined): string[] {
  if (authorisation === undefined) return [];
  const secrets = new Set(authorisation.secrets);
  if (authorisation.query !== undefined) {
    secrets.add(authorisation.query.value);
    secrets.add(encodeURIComponent(authorisation.query.value));
  }
  // Why 4: shorter strings are too common to scrub from a body without mangling it (the logger's bound too).
  return [...secrets].filter((secret) => secret.length >= 4).sort((a, b) => b.length - a.length);
}

/** `value` with every occurrence of every secret replaced by `[redacted]`, in keys and values, deeply. Pure. */
export function scrub<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') {
    let text: string = value;
    for (const secret of secrets) text = text.split(secret).join(REDACTED);
    return text as T;
  }
  if (Array.isArray(value)) return value.map((item: unknown) => scrub(item, secrets)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[scrub(key, secrets)] = scrub(item, secrets);
    return out as T;
  }
  return value;
}
