/**
 * V3: the provider session of ONE operation, as a cookie jar bound to the provider's origin. Cookies are matched
 * by tough-cookie (RFC 6265: host-only and Domain cookies, path, Secure, HttpOnly, public suffixes refused),
 * plus two rules of our own:
 * - origin-bound: a cookie is stored from, and sent to, only the origin the jar was made for (scheme, host and
 *   port; RFC 6265 alone ignores the port and would share a host's cookies between ports);
 * - fixed expiry: `Max-Age` becomes an absolute expiry when the cookie arrives (RFC 6265 5.2.2/5.3), so reading
 *   a cookie never extends its life (tough-cookie counts Max-Age from the last access).
 *
 * Why the jar is a per-call object the HTTP client is GIVEN (not state of the pooled client): one client serves
 * every operation of a provider, and a provider session belongs to one operation (V3). The activity loads the
 * operation's jar from the store, hands it to the call, and saves it afterwards; the client, which already adds
 * the credential for the provider's origin at the last moment, adds the `Cookie` header the same way and feeds
 * every `Set-Cookie` of the answer into the jar. The exchange it returns has both headers redacted by name
 * (`cookie` and `set-cookie` are default redacted headers that configuration cannot remove), so cookie values
 * never reach an observation, the journal, Temporal or a log line.
 *
 * The serialised form (what the store keeps, never anything else) is JSON: `{ v: 1, origin, cookies: [...] }`,
 * each cookie as tough-cookie's `toJSON()` without its last-access time (so a read does not count as a change),
 * expired cookies dropped, at most {@link MAX_SESSION_COOKIES}, oldest dropped first.
 */
import { Cookie, CookieJar } from 'tough-cookie';

/** What the HTTP client needs of a session: the `Cookie` header for a URL, and where `Set-Cookie` values go. */
export interface HttpSession {
  /** The `Cookie` header value for a request to `url`, or undefined when no cookie applies. Never throws. */
  cookieHeader(url: URL): string | undefined;
  /** Stores the `Set-Cookie` values of an answer from `url`; invalid or foreign ones are dropped. Never throws. */
  receive(url: URL, setCookies: readonly string[]): void;
}

/** Cookies kept per operation (RFC 6265 6.1 asks for at least 50 per domain). */
export const MAX_SESSION_COOKIES = 50;
/** A `Set-Cookie` longer than this is ignored (RFC 6265 6.1 asks for at least 4096 bytes per cookie). */
const MAX_SET_COOKIE_CHARS = 8192;

const FORMAT_VERSION = 1;

/** The stored shape. */
interface SerializedSession {
  v: number;
  origin: string;
  cookies: Record<string, unknown>[];
}

function originOf(url: string | URL): string | undefined {
  try {
    const parsed = typeof url === 'string' ? new URL(url) : url;
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

/** Options of {@link ProviderSession}. */
export interface ProviderSessionOptions {
  /** Epoch-ms clock for expiry (tests). Default `Date.now`. */
  readonly nowMs?: () => number;
}

/** An operation's cookie jar, bound to one origin. */
export class ProviderSession implements HttpSession {
  /** The only origin cookies are taken from and sent to. */
  readonly origin: string;
  private readonly jar: CookieJar;
  private readonly nowMs: () => number;

  /** An empty session for `origin` (the provider's base URL or origin). Throws when it is not an http(s) URL. */
  constructor(origin: string, options: ProviderSessionOptions = {}) {
    const bound = originOf(origin);
    if (bound === undefined) throw new TypeError('a provider session needs an http(s) origin');
    this.origin = bound;
    this.nowMs = options.nowMs ?? (() => Date.now());
    // Secure cookies only from and to a secure context (https, or loopback: RFC 6265bis / tough-cookie defaults).
    this.jar = new CookieJar(undefined, {
      rejectPublicSuffixes: true,
      looseMode: false,
      prefixSecurity: 'strict',
      allowSecureOnLocal: true,
    });
  }

  /**
   * A session read back from its serialised form for `origin`. Text that does not parse, or a jar kept for
   * another origin (the provider moved), gives an empty session: a stale session is worth less than none.
   * Every cookie is stored again through the RFC 6265 checks, so stored text cannot plant a foreign cookie.
   */
  static fromJSON(
    text: string | null | undefined,
    origin: string,
    options: ProviderSessionOptions = {},
  ): ProviderSession {
    const session = new ProviderSession(origin, options);
    if (text === null || text === undefined || text === '') return session;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return session;
    }
    const stored = parsed as Partial<SerializedSession> | null;
    if (
      stored === null ||
      typeof stored !== 'object' ||
      stored.v !== FORMAT_VERSION ||
      stored.origin !== session.origin ||
      !Array.isArray(stored.cookies)
    ) {
      return session;
    }
    const url = new URL(session.origin);
    for (const json of stored.cookies.slice(0, MAX_SESSION_COOKIES)) {
      const cookie = safeCookieFromJson(json);
      if (cookie === undefined) continue;
      const path = typeof cookie.path === 'string' && cookie.path.startsWith('/') ? cookie.path : '/';
      const creation = cookie.creation instanceof Date ? cookie.creation : new Date(session.nowMs());
      try {
        session.jar.setCookieSync(cookie, new URL(path, url), { ignoreError: true, now: creation });
      } catch {
        // A cookie the RFC checks refuse is dropped.
      }
    }
    return session;
  }

  /** @inheritdoc */
  cookieHeader(url: URL): string | undefined {
    if (originOf(url) !== this.origin) return undefined;
    const now = this.nowMs();
    let cookies: Cookie[];
    try {
      cookies = this.jar.getCookiesSync(url, { expire: false, sort: true });
    } catch {
      return undefined;
    }
    const live = cookies.filter((c) => isLive(c, now));
    if (live.length === 0) return undefined;
    return live.map((c) => c.cookieString()).join('; ');
  }

  /** @inheritdoc */
  receive(url: URL, setCookies: readonly string[]): void {
    if (originOf(url) !== this.origin) return;
    const now = this.nowMs();
    for (const text of setCookies) {
      if (typeof text !== 'string' || text.length > MAX_SET_COOKIE_CHARS) continue;
      let cookie: Cookie | undefined;
      try {
        cookie = Cookie.parse(text);
      } catch {
        cookie = undefined;
      }
      if (cookie === undefined) continue;
      fixExpiry(cookie, now);
      try {
        this.jar.setCookieSync(cookie, url, { ignoreError: true, now: new Date(now) });
      } catch {
        // Dropped, as a browser drops a cookie it refuses.
      }
    }
  }

  /** The live cookies' names, for tests and diagnostics (never their values). */
  names(): string[] {
    return this.liveCookies().map((c) => c.key);
  }

  /** The serialised session: the only form that is stored (see the module comment). Deterministic. */
  toJSON(): string {
    const cookies = this.liveCookies()
      .sort(
        (a, b) => creationMs(a) - creationMs(b) || cmp(a.domain, b.domain) || cmp(a.path, b.path) || cmp(a.key, b.key),
      )
      .slice(-MAX_SESSION_COOKIES)
      .map((c) => {
        const json = c.toJSON() as Record<string, unknown>;
        delete json.lastAccessed;
        delete json.creationIndex;
        return json;
      });
    const serialized: SerializedSession = { v: FORMAT_VERSION, origin: this.origin, cookies };
    return JSON.stringify(serialized);
  }

  private liveCookies(): Cookie[] {
    const now = this.nowMs();
    let all: Cookie[];
    try {
      all = this.jar.getCookiesSync(this.origin, { expire: false, allPaths: true });
    } catch {
      return [];
    }
    return all.filter((c) => isLive(c, now));
  }
}

function safeCookieFromJson(json: unknown): Cookie | undefined {
  if (json === null || typeof json !== 'object') return undefined;
  try {
    return Cookie.fromJSON(json) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Max-Age (seconds from now) becomes an absolute expiry, once, when the cookie arrives. */
function fixExpiry(cookie: Cookie, now: number): void {
  const maxAge = cookie.maxAge;
  if (maxAge === null || maxAge === undefined) return;
  if (maxAge === 'Infinity') cookie.expires = 'Infinity';
  else if (maxAge === '-Infinity' || maxAge <= 0) cookie.expires = new Date(0);
  else cookie.expires = new Date(now + maxAge * 1000);
  cookie.maxAge = null;
}

function isLive(cookie: Cookie, now: number): boolean {
  const expiry = cookie.expiryTime();
  return expiry === undefined || expiry > now;
}

function creationMs(cookie: Cookie): number {
  return cookie.creation instanceof Date ? cookie.creation.getTime() : 0;
}

function cmp(a: string | null | undefined, b: string | null | undefined): number {
  const x = a ?? '';
  const y = b ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}
