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

/**
 * How an answer's body is read (V6): `json` parses it whatever its content type; `text` and `binary` never parse
 * it. Absent: JSON when its content type is none, `application/json`, `*+json`, `text/json` or one of
 * `jsonContentTypes` (lower-case media types, no parameters).
 */
export interface BodyReading {
  readonly format?: 'json' | 'text' | 'binary';
  readonly jsonContentTypes?: readonly string[];
}

function isJsonContentType(contentType: string | undefined, jsonContentTypes: readonly string[]): boolean {
  if (contentType === undefined) return true;
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  return (
    mediaType === 'application/json' ||
    mediaType.endsWith('+json') ||
    mediaType === 'text/json' ||
    jsonContentTypes.includes(mediaType)
  );
}

/**
 * A read body as redacted text and, when it is to be read as JSON (see {@link BodyReading}) and parses, redacted
 * JSON; `bodyParseError` says why a body to be read as JSON is not, or that its content type is not JSON. A
 * `text` or `binary` body is only text. The JSON is parsed from the bytes, then redacted field by field.
 */
export function decodeBody(
  bytes: Buffer,
  contentType: string | undefined,
  rules: RedactionRules,
  reading: BodyReading = {},
): { bodyText?: string; bodyJson?: unknown; bodyParseError?: string } {
  if (bytes.length === 0) return {};
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const bodyText = redactText(text, rules);
  if (reading.format === 'text' || reading.format === 'binary') return { bodyText };
  if (reading.format !== 'json' && !isJsonContentType(contentType, reading.jsonContentTypes ?? [])) {
    return { bodyText, bodyParseError: `the content type ${contentType ?? ''} is not JSON` };
  }
  try {
    return { bodyText, bodyJson: redactJson(JSON.parse(text), rules) };
  } catch (err) {
    return { bodyText, bodyParseError: `the body is not valid JSON: ${(err as Error).message.slice(0, 200)}` };
  }
}
