/**
 * Redaction of everything the HTTP layer records (T4): header values, JSON fields, URL query parameters and
 * free text. Pure functions over data; a rule set is built once per client with `createRedactionRules` and the
 * defaults below are always included (configuration can add names, never remove the defaults).
 */

/** The placeholder written instead of a secret. */
export const REDACTED = '[redacted]';

/** Headers whose values are always redacted (lower-case). */
const DEFAULT_REDACTED_HEADERS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api-key',
  'x-auth-token',
  'ocp-apim-subscription-key',
];

/** JSON field names (anywhere in a body) whose values are always redacted, compared case-insensitively. */
const DEFAULT_REDACTED_FIELDS: readonly string[] = [
  'password',
  'secret',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'api_key',
  'apikey',
  'private_key',
  'authorization',
];

/** URL query parameter names whose values are always redacted, compared case-insensitively. */
const DEFAULT_REDACTED_QUERY_PARAMS: readonly string[] = [
  'token',
  'key',
  'secret',
  'signature',
  'sig',
  'password',
  'access_token',
  'api_key',
  'apikey',
  'client_secret',
  'x-amz-signature',
  'x-amz-credential',
  'x-goog-signature',
  'x-goog-credential',
];

/** Extra names to redact, on top of the defaults. */
export interface RedactionConfig {
  /** Header names (any case). */
  readonly headerNames?: readonly string[];
  /** JSON field names, matched at any depth (any case). Also matched as `"name": "value"` and `name=value` in text. */
  readonly fieldNames?: readonly string[];
  /** URL query parameter names (any case). */
  readonly queryParamNames?: readonly string[];
}

/** A compiled rule set: build once with `createRedactionRules`, reuse for every exchange. */
export interface RedactionRules {
  /** Lower-case header names. */
  readonly headerNames: ReadonlySet<string>;
  /** Lower-case JSON field names. */
  readonly fieldNames: ReadonlySet<string>;
  /** Lower-case query parameter names. */
  readonly queryParamNames: ReadonlySet<string>;
  /** Patterns applied to free text, in order. */
  readonly textPatterns: readonly TextPattern[];
}

interface TextPattern {
  readonly pattern: RegExp;
  readonly replace: (match: string, ...groups: string[]) => string;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function lower(names: readonly string[] | undefined): string[] {
  return (names ?? []).map((n) => n.trim().toLowerCase()).filter((n) => n.length > 0);
}

/** Builds a rule set from the defaults plus `config`. Pure; safe to call repeatedly. */
export function createRedactionRules(config: RedactionConfig = {}): RedactionRules {
  const headerNames = new Set([...DEFAULT_REDACTED_HEADERS, ...lower(config.headerNames)]);
  const fieldNames = new Set([...DEFAULT_REDACTED_FIELDS, ...lower(config.fieldNames)]);
  const queryParamNames = new Set([...DEFAULT_REDACTED_QUERY_PARAMS, ...lower(config.queryParamNames)]);
  const keyNames = [...new Set([...fieldNames, ...queryParamNames])]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp);
  const headerAlternation = [...headerNames]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|');
  const keyAlternation = keyNames.join('|');
  const textPatterns: TextPattern[] = [
    // A header line quoted in text: `Authorization: Bearer abc` up to the end of the line.
    {
      pattern: new RegExp(`(^|[\\s"'{,;])(${headerAlternation})(\\s*:\\s*)[^\\r\\n"]+`, 'gim'),
      replace: (_m, lead = '', name = '', sep = '') => `${lead}${name}${sep}${REDACTED}`,
    },
    // An authorization scheme followed by a credential.
    {
      pattern: /\b(Bearer|Basic|Token|Digest|ApiKey|SharedAccessSignature)(\s+)[A-Za-z0-9\-._~+/=%:]{8,}/gi,
      replace: (_m, scheme = '', space = '') => `${scheme}${space}${REDACTED}`,
    },
    // A JSON Web Token anywhere.
    {
      pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
      replace: () => REDACTED,
    },
    // `"password": "..."` in JSON-looking text.
    {
      pattern: new RegExp(`("(?:${keyAlternation})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'gi'),
      replace: (_m, head = '') => `${head}"${REDACTED}"`,
    },
    // `token=...` in query strings, form bodies and log lines.
    {
      pattern: new RegExp(`(^|[?&;\\s"',])((?:${keyAlternation}))=([^&;\\s"'#<>(),\\]}]+)`, 'gi'),
      replace: (_m, lead = '', name = '') => `${lead}${name}=${REDACTED}`,
    },
  ];
  return { headerNames, fieldNames, queryParamNames, textPatterns };
}

/** The rule set with only the defaults. */
const DEFAULT_REDACTION_RULES: RedactionRules = createRedactionRules();

/** A header value as undici or node:http give it. */
export type RawHeaderValue = string | readonly string[] | number | undefined | null;

/**
 * Lower-cases header names and replaces the values of secret headers with `[redacted]`. Repeated headers
 * are joined with `, `. Other values go through `redactText` (a bearer token in a `Link` header is still a
 * token). Pure.
 */
export function redactHeaders(
  headers: Readonly<Record<string, RawHeaderValue>>,
  rules: RedactionRules = DEFAULT_REDACTION_RULES,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [rawName, rawValue] of Object.entries(headers)) {
    if (rawValue === undefined || rawValue === null) continue;
    const name = rawName.toLowerCase();
    const value = Array.isArray(rawValue) ? rawValue.join(', ') : String(rawValue);
    const redacted = rules.headerNames.has(name) ? REDACTED : redactText(value, rules);
    out[name] = out[name] === undefined ? redacted : `${out[name]}, ${redacted}`;
  }
  return out;
}

/**
 * Returns a deep copy of a JSON value with the values of secret fields (at any depth, any case) replaced by
 * `[redacted]` and every string passed through `redactText`. Pure; never mutates its input.
 */
export function redactJson(value: unknown, rules: RedactionRules = DEFAULT_REDACTION_RULES): unknown {
  if (typeof value === 'string') return redactText(value, rules);
  if (Array.isArray(value)) return value.map((item) => redactJson(item, rules));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      out[key] = rules.fieldNames.has(key.toLowerCase()) ? REDACTED : redactJson(item, rules);
    }
    return out;
  }
  return value;
}

function redactQuery(query: string, rules: RedactionRules): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq === -1 ? pair : pair.slice(0, eq);
      let name: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' ')).toLowerCase();
      } catch {
        name = rawName.toLowerCase();
      }
      return eq !== -1 && rules.queryParamNames.has(name) ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
}

/**
 * Removes secrets from a URL: user information (`user:pass@`) is dropped and the values of secret query
 * parameters become `[redacted]`; everything else is kept byte for byte. Accepts relative references and
 * text that is not a URL (which only goes through `redactText`). Pure.
 */
export function redactUrl(url: string, rules: RedactionRules = DEFAULT_REDACTION_RULES): string {
  const hashAt = url.indexOf('#');
  const beforeHash = hashAt === -1 ? url : url.slice(0, hashAt);
  const fragment = hashAt === -1 ? '' : url.slice(hashAt);
  const queryAt = beforeHash.indexOf('?');
  let base = queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt);
  const query = queryAt === -1 ? undefined : beforeHash.slice(queryAt + 1);
  base = base.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
  const redactedQuery = query === undefined ? '' : `?${redactQuery(query, rules)}`;
  const redactedFragment = fragment === '' ? '' : `#${redactQuery(fragment.slice(1), rules)}`;
  return `${base}${redactedQuery}${redactedFragment}`;
}

/**
 * Redacts secrets in free text: header lines of secret headers, authorization schemes followed by a
 * credential (`Bearer ...`), JSON Web Tokens, `"field": "value"` and `name=value` pairs for secret field and
 * query parameter names. Best effort for text whose shape is unknown; structured data should go through
 * `redactHeaders`/`redactJson`/`redactUrl` first. Pure.
 */
export function redactText(text: string, rules: RedactionRules = DEFAULT_REDACTION_RULES): string {
  let out = text;
  for (const { pattern, replace } of rules.textPatterns) {
    out = out.replace(pattern, replace as (substring: string, ...args: unknown[]) => string);
  }
  return out;
}
