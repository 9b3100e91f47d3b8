/**
 * The credential at the moment of sending (T4): resolved once per request, only for a URL already known to be on
 * the provider's origin (C4), and scrubbed from everything the exchange returns, even where the provider echoes it.
 */
import { type CredentialHeader, type ResolvedHttpClientOptions, isHeaderName, isHeaderValue } from './options';
import { REDACTED } from './redact';

/** The resolved credential header (none when the provider needs none), or why it is unusable. */
export type ResolvedCredential =
  | { readonly ok: true; readonly header: CredentialHeader | undefined }
  | { readonly ok: false; readonly message: string };

/**
 * Calls the credential supplier and checks what it returned. Never throws: a failing supplier is a refusal whose
 * message keeps only the error's name and code (its message may quote the secret or its source).
 */
export async function resolveCredential(
  credential: ResolvedHttpClientOptions['credential'],
): Promise<ResolvedCredential> {
  if (credential === undefined) return { ok: true, header: undefined };
  let header: unknown;
  try {
    header = typeof credential === 'function' ? await credential() : await credential.header();
  } catch (err) {
    const failure = err as { name?: unknown; code?: unknown };
    const code = typeof failure?.code === 'string' ? ` (${failure.code})` : '';
    return {
      ok: false,
      message: `the credential supplier failed: ${typeof failure?.name === 'string' ? failure.name : 'error'}${code}`,
    };
  }
  const candidate = header as Partial<CredentialHeader> | null | undefined;
  if (!candidate || typeof candidate.headerName !== 'string' || !isHeaderName(candidate.headerName)) {
    return { ok: false, message: 'the credential supplier returned no valid headerName' };
  }
  const value = candidate.headerValue;
  if (typeof value !== 'string' || value.length === 0 || !isHeaderValue(value)) {
    return { ok: false, message: 'the credential supplier returned no valid headerValue' };
  }
  return { ok: true, header: { headerName: candidate.headerName, headerValue: value } };
}

/** The strings to scrub for a credential: its value and, for `Scheme token`, the token alone; longest first. */
export function secretsOf(credential: CredentialHeader | undefined): string[] {
  if (!credential) return [];
  const value = credential.headerValue.trim();
  const secrets = [value];
  const space = value.indexOf(' ');
  if (space !== -1) secrets.push(value.slice(space + 1).trim());
  return secrets.filter((secret) => secret.length >= 6).sort((a, b) => b.length - a.length);
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
