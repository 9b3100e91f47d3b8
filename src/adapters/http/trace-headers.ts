/**
 * The trace headers sent on every call (T1): `X-Trace-ID` with the operation's trace ID as given, and a W3C
 * `traceparent` whose trace ID is that trace ID when it already is 32 lower-case hex digits, or else derived
 * from it deterministically (the first 128 bits of its SHA-256), so every call of one operation carries the
 * same W3C trace. Each call gets a fresh span ID unless the caller passes one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { InvalidHttpRequestError } from './errors';

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
/** Printable ASCII without spaces at the ends: safe as a header value and in logs. */
const TRACE_ID_TEXT = /^[\x21-\x7e](?:[\x20-\x7e]{0,198}[\x21-\x7e])?$/;

/** Returns the 32-hex W3C trace ID for an operation's trace ID. Deterministic; never all zeros. */
export function w3cTraceIdFor(traceId: string): string {
  const candidate = traceId.toLowerCase();
  if (HEX32.test(candidate) && !/^0+$/.test(candidate)) return candidate;
  const derived = createHash('sha256').update(traceId, 'utf8').digest('hex').slice(0, 32);
  return /^0+$/.test(derived) ? `${derived.slice(0, 31)}1` : derived;
}

/** Returns a fresh random 16-hex span ID (never all zeros). */
export function newSpanId(): string {
  for (;;) {
    const id = randomBytes(8).toString('hex');
    if (!/^0+$/.test(id)) return id;
  }
}

/** The two trace headers of one call. */
export interface TraceHeaders {
  /** `X-Trace-ID` value: the operation's trace ID verbatim. */
  readonly 'x-trace-id': string;
  /** `traceparent` value: `00-<32 hex>-<16 hex>-01`. */
  readonly traceparent: string;
}

/**
 * Builds the trace headers for one call. Throws `InvalidHttpRequestError` (our fault) when `traceId` is not
 * 1-200 printable ASCII characters or `spanId` is not 16 lower-case hex digits (and not all zeros).
 */
export function traceHeaders(traceId: string, spanId?: string): TraceHeaders {
  if (typeof traceId !== 'string' || !TRACE_ID_TEXT.test(traceId)) {
    throw new InvalidHttpRequestError('traceId', 'must be 1-200 printable ASCII characters without surrounding spaces');
  }
  if (spanId !== undefined && (!HEX16.test(spanId) || /^0+$/.test(spanId))) {
    throw new InvalidHttpRequestError('spanId', 'must be 16 lower-case hex digits, not all zeros');
  }
  return { 'x-trace-id': traceId, traceparent: `00-${w3cTraceIdFor(traceId)}-${spanId ?? newSpanId()}-01` };
}
