/**
 * URL rules of a provider contract (C4): every URL a request goes to is built from the contract's `baseUrl`
 * or read from an answer and then checked to be on the same origin. A URL elsewhere is refused, never followed,
 * so credentials never leave the configured origin. Pure.
 */

/** A resolved URL, or why it was refused. */
export type ResolvedUrl =
  { ok: true; url: string } | { ok: false; errorCategory: 'foreign_origin' | 'invalid_url'; problem: string };

/**
 * Resolves `candidate` (absolute, or relative to `baseUrl` as a browser would) and accepts it only on the origin
 * of `baseUrl`, over http(s), without user info. `what` names the value in the problem text.
 */
export function resolveOnOrigin(baseUrl: string, candidate: string, what: string): ResolvedUrl {
  const base = new URL(baseUrl);
  let url: URL;
  try {
    url = new URL(candidate, base);
  } catch {
    return { ok: false, errorCategory: 'invalid_url', problem: `${what} is not a valid URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      ok: false,
      errorCategory: 'invalid_url',
      problem: `${what} uses the scheme ${url.protocol.slice(0, 20)}, not http(s)`,
    };
  }
  if (url.origin !== base.origin) {
    return {
      ok: false,
      errorCategory: 'foreign_origin',
      problem: `${what} is on another origin (${url.host.slice(0, 200)}), not ${base.host}; it is not followed (C4)`,
    };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, errorCategory: 'invalid_url', problem: `${what} carries user info; it is not followed` };
  }
  url.hash = '';
  return { ok: true, url: url.toString() };
}

/**
 * Expands a contract path template (`/v1/jobs/{jobId}`, `/v1/jobs?client_reference={clientReference}`) under
 * `baseUrl`'s path, percent-encoding every value so it stays one path segment or one query value.
 */
export function expandTemplate(
  baseUrl: string,
  template: string,
  values: Readonly<Record<string, string | undefined>>,
): { ok: true; url: string } | { ok: false; problem: string } {
  let missing: string | undefined;
  let unsafe: string | undefined;
  const expanded = template.replace(/\{(\+?)([^{}]*)\}/g, (_m, reserved: string, name: string) => {
    const value = values[name];
    if (value === undefined || value === '') {
      missing ??= name;
      return '';
    }
    if (reserved === '') return encodeURIComponent(value);
    // {+name}: a path value keeps its slashes, but can never climb out of the template's place.
    const segments = value.split('/');
    if (segments.some((s) => s === '' || s === '.' || s === '..')) unsafe ??= name;
    return segments.map(encodeURIComponent).join('/');
  });
  if (missing !== undefined) return { ok: false, problem: `the path template ${template} needs {${missing}}` };
  if (unsafe !== undefined) return { ok: false, problem: `{+${unsafe}} holds an empty, "." or ".." path segment` };
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  return { ok: true, url: `${base.origin}${prefix}${expanded}` };
}
