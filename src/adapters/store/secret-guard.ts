/**
 * A defensive check (T4): the store records what it is given, but refuses anything that carries a
 * credential. Callers redact before recording; this is the last line that catches a forgotten redaction.
 * The error names where the secret was found, never the secret itself.
 */
import { StoreError } from './store-errors';

const AUTH_HEADER = /^(proxy-)?authorization$/i;
const REDACTION_MARKER = /^(\[redacted\]|<redacted>|redacted|\*+)$/i;
// A token is long: `WWW-Authenticate: Bearer realm="api"` (a challenge, not a credential) must stay recordable.
const BEARER_VALUE = /\bbearer\s+[A-Za-z0-9\-._~+/]{16,}=*/i;
const AUTH_IN_TEXT = /\b(proxy-)?authorization\s*[:=]\s*(?!\[redacted\]|<redacted>|\*+)\S{4,}/i;

/**
 * Throws `ASYNCJOB_ERR_SECRET_IN_RECORD` when `value` holds an Authorization header value, a bearer token, or
 * one of `forbiddenValues` (configured secret strings, e.g. the provider credentials the worker holds).
 * Redaction markers (`[redacted]`, `***`) under an Authorization key are accepted; forbidden values shorter than
 * 4 characters are ignored (they would match everywhere). Pure; safe to repeat.
 */
export function assertNoSecrets(what: string, value: unknown, forbiddenValues: readonly string[] = []): void {
  const forbidden = forbiddenValues.filter((v) => v.length >= 4);
  const visit = (v: unknown, path: string): void => {
    if (typeof v === 'string') {
      if (BEARER_VALUE.test(v) || AUTH_IN_TEXT.test(v)) refuse(what, path, 'a bearer token or Authorization value');
      if (forbidden.some((secret) => v.includes(secret))) refuse(what, path, 'a configured secret value');
      return;
    }
    if (Array.isArray(v)) {
      v.forEach((item: unknown, i) => visit(item, `${path}[${i}]`));
      return;
    }
    if (v !== null && typeof v === 'object') {
      for (const [key, child] of Object.entries(v as Record<string, unknown>)) {
        const childPath = `${path}.${key}`;
        if (AUTH_HEADER.test(key) && !(typeof child === 'string' && REDACTION_MARKER.test(child.trim()))) {
          refuse(what, childPath, 'an Authorization header value');
        }
        if (forbidden.some((secret) => key.includes(secret))) refuse(what, childPath, 'a configured secret value');
        visit(child, childPath);
      }
    }
  };
  visit(value, '$');
}

function refuse(what: string, path: string, kind: string): never {
  throw new StoreError(
    'ASYNCJOB_ERR_SECRET_IN_RECORD',
    `${what} contains ${kind} at ${path}; redact it before recording`,
    [{ path, message: `contains ${kind}` }],
  );
}
