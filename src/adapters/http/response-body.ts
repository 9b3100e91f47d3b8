/**
 * What happens to an answer's body: read bounded into memory and decoded (`send`), or streamed to a sink
 * (`download`, 2xx only); and the small readers of the answer's headers both need.
 */
import { type Writable } from 'node:stream';
import { type IncomingHttpHeaders } from 'node:http';
import { redactJson, redactText, type RedactionRules } from './redact';

/** Where `download` writes the body: a Node writable (not ended by us) or a callback awaited per chunk. */
export type DownloadSink = Writable | ((chunk: Uint8Array) => Promise<void> | void);

/** How an exchange takes its body: into memory, or chunk by chunk into a sink (awaited before the next chunk). */
export type BodyMode =
  { readonly kind: 'buffer' } | { readonly kind: 'sink'; readonly write: (chunk: Uint8Array) => Promise<void> };

/** The sink as one awaited write per chunk. */
export function sinkWriter(sink: DownloadSink): (chunk: Uint8Array) => Promise<void> {
  if (typeof sink === 'function') return async (chunk) => sink(chunk);
  return (chunk) =>
    new Promise<void>((resolve, reject) => {
      sink.write(chunk, (err) => (err ? reject(err) : resolve()));
    });
}

/** Response headers as lists of values under lower-case names (undici already lower-cases and decodes latin1). */
export function headerLists(headers: IncomingHttpHeaders): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? [...value] : [value];
  }
  return out;
}

/** The announced body length, when the answer has a body and a well-formed Content-Length. */
export function announcedLength(
  headers: Readonly<Record<string, string[]>>,
  method: string,
  status: number,
): number | undefined {
  const contentLength = headers['content-length']?.[0]?.trim();
  const bodyless = method === 'HEAD' || status === 204 || status === 304;
  return !bodyless && contentLength !== undefined && /^\d+$/.test(contentLength) ? Number(contentLength) : undefined;
}

/** The provider's request ID from the first of `names` present, redacted, at most 500 characters. */
export function providerRequestIdOf(
  headers: Readonly<Record<string, string[]>>,
  names: readonly string[],
  rules: RedactionRules,
): string | undefined {
  for (const name of names) {
    const value = headers[name.toLowerCase()]?.[0]?.trim();
    if (value) return redactText(value.slice(0, 500), rules);
  }
  return undefined;
}

function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return true;
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || mediaType.endsWith('+json') || mediaType === 'text/json';
}

/** A read body as redacted text and, when its content type is JSON (or absent) and it parses, redacted JSON. */
export function decodeBody(
  bytes: Buffer,
  contentType: string | undefined,
  rules: RedactionRules,
): { bodyText?: string; bodyJson?: unknown; bodyParseError?: string } {
  if (bytes.length === 0) return {};
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const bodyText = redactText(text, rules);
  if (!isJsonContentType(contentType)) {
    return { bodyText, bodyParseError: `the content type ${contentType ?? ''} is not JSON` };
  }
  try {
    return { bodyText, bodyJson: redactJson(JSON.parse(text), rules) };
  } catch (err) {
    return { bodyText, bodyParseError: `the body is not valid JSON: ${(err as Error).message.slice(0, 200)}` };
  }
}
