/**
 * OAuth2 client credentials (RFC 6749 4.4) as a request authoriser (T4). Access tokens are cached once per worker
 * process by (token URL, client ID, scopes, audience), so every provider and every operation with the same client
 * shares one; a token is refreshed before it expires (a margin of a tenth of its lifetime, at most 60 s), and
 * requests that need a token at the same time share one token request. A failing token endpoint refuses the
 * request (nothing is sent to the provider: `credential_unavailable`), unless the cached token is still valid. After
 * a 401, `renew` forgets the token that was refused, so the one resend the HTTP layer allows carries a fresh one.
 */
import { type Authorisation, type RequestAuthoriser } from '../http';
import { type CredentialReference } from '../providers/contract/credential';
import { requestToken, type IssuedToken } from './oauth2-token-endpoint';
import { readSecret, readSetting, type Environment } from './secret-reference';

type OAuth2Reference = Extract<CredentialReference, { scheme: 'oauth2-client-credentials' }>;

/** An access token in the cache, with when to refresh it and when it expires (epoch ms). */
interface CachedToken {
  readonly value: string;
  readonly refreshAtMs: number;
  readonly expiresAtMs: number;
}

/** The lifetime assumed when the endpoint gives no `expires_in`, ms: the token is then asked for again this often. */
const DEFAULT_LIFETIME_MS = 300_000;
/** The most a token is refreshed ahead of its expiry, ms. */
const MAX_REFRESH_MARGIN_MS = 60_000;

/** When an issued token is refreshed and when it expires, counted from when it was asked for. Pure. */
export function tokenTimes(issued: IssuedToken, askedAtMs: number): { refreshAtMs: number; expiresAtMs: number } {
  const lifetimeMs = issued.lifetimeMs ?? DEFAULT_LIFETIME_MS;
  const marginMs = Math.min(MAX_REFRESH_MARGIN_MS, lifetimeMs / 10);
  return { refreshAtMs: askedAtMs + lifetimeMs - marginMs, expiresAtMs: askedAtMs + lifetimeMs };
}

/** Access tokens by cache key, and the token requests in flight. */
class TokenCache {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly requests = new Map<string, Promise<CachedToken>>();

  /** A token for `key`: the cached one until its refresh time, else one from `fetch`, shared by every caller. */
  async token(key: string, fetch: () => Promise<CachedToken>, nowMs: () => number): Promise<CachedToken> {
    const cached = this.tokens.get(key);
    if (cached !== undefined && nowMs() < cached.refreshAtMs) return cached;
    let pending = this.requests.get(key);
    if (pending === undefined) {
      pending = fetch()
        .then((token) => {
          this.tokens.set(key, token);
          return token;
        })
        .finally(() => this.requests.delete(key));
      this.requests.set(key, pending);
    }
    try {
      return await pending;
    } catch (err) {
      // Why: a refresh ahead of expiry that fails leaves the still-valid token in use.
      const still = this.tokens.get(key);
      if (still !== undefined && nowMs() < still.expiresAtMs) return still;
      throw err;
    }
  }

  /** Forgets the token `value` of `key`, if it is still the cached one (a newer one is kept). */
  forget(key: string, value: string): void {
    if (this.tokens.get(key)?.value === value) this.tokens.delete(key);
  }
}

/** The one cache of this worker process. */
const PROCESS_TOKENS = new TokenCache();

/** Options of {@link oauth2Authoriser}. */
interface OAuth2Options {
  readonly env: Environment;
  /** Epoch-ms clock. */
  readonly nowMs: () => number;
  /** Connect, headers and body timeouts of a token request, ms. */
  readonly timeoutMs: number;
}

/** An authoriser sending `Authorization: Bearer <access token>`, the token from the process's cache. */
export function oauth2Authoriser(reference: OAuth2Reference, options: OAuth2Options): RequestAuthoriser {
  const { env, nowMs, timeoutMs } = options;
  const scopes = [...new Set(reference.scopes ?? [])].sort();
  const issued = new WeakMap<Authorisation, { key: string; value: string }>();
  const fetchFor = (clientId: string) => async (): Promise<CachedToken> => {
    const clientSecret = await readSecret(reference, env);
    const askedAtMs = nowMs();
    const token = await requestToken({
      tokenUrl: reference.tokenUrl,
      clientId,
      clientSecret,
      scopes,
      audience: reference.audience,
      clientAuthentication: reference.clientAuthentication,
      timeoutMs,
    });
    return { value: token.accessToken, ...tokenTimes(token, askedAtMs) };
  };
  return {
    async authorise() {
      const clientId = readSetting(reference.clientId, reference.clientIdEnv, env);
      const key = JSON.stringify([reference.tokenUrl, clientId, scopes, reference.audience ?? null]);
      const token = await PROCESS_TOKENS.token(key, fetchFor(clientId), nowMs);
      const authorisation: Authorisation = {
        headers: { authorization: `Bearer ${token.value}` },
        secrets: [`Bearer ${token.value}`, token.value],
      };
      issued.set(authorisation, { key, value: token.value });
      return authorisation;
    },
    async renew(rejected) {
      const token = issued.get(rejected);
      if (token === undefined) return false;
      PROCESS_TOKENS.forget(token.key, token.value);
      return true;
    },
  };
}
