/**
 * The answers of faults that break the exchange rather than the provider's logic: a simulated HTTP error, a
 * malformed body (not JSON, an HTML page, key fields missing, wrong types, a huge stream), and a truncated body.
 */
import type { ServerResponse } from 'node:http';
import type { SimResponse } from './dialects/types';
import type { Exchange } from './exchange';
import type { Fault } from './faults';

const ERROR_CODES: Record<number, string> = {
  401: 'unauthenticated',
  403: 'permission_denied',
  404: 'not_found',
  429: 'rate_limited',
  500: 'internal',
  502: 'bad_gateway',
  503: 'unavailable',
  504: 'gateway_timeout',
};

/** The answer of an `http_error` fault, with its Retry-After (seconds, an HTTP-date from `nowMs`, or raw). */
export function httpErrorAnswer(fault: Extract<Fault, { kind: 'http_error' }>, nowMs: number): SimResponse {
  const headers: Record<string, string> = {};
  if (fault.retryAfterSeconds !== undefined) headers['retry-after'] = String(fault.retryAfterSeconds);
  else if (fault.retryAfterDateInSeconds !== undefined)
    headers['retry-after'] = new Date(nowMs + fault.retryAfterDateInSeconds * 1000).toUTCString();
  else if (fault.retryAfterRaw !== undefined) headers['retry-after'] = fault.retryAfterRaw;
  return {
    status: fault.status,
    headers,
    json: { error: { code: ERROR_CODES[fault.status] ?? 'error', message: `simulated ${fault.status}` } },
  };
}

const HTML_ERROR_PAGE =
  '<!DOCTYPE html><html><head><title>Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>';

/** Answers with a broken version of the provider's `response` (the request was processed). */
export function answerMalformed(
  exchange: Exchange,
  response: SimResponse,
  fault: Extract<Fault, { kind: 'malformed' }>,
): void {
  const status = fault.status ?? response.status;
  switch (fault.body) {
    case 'non_json':
      return exchange.answer({
        status,
        raw: Buffer.from('this is not JSON {"state": '),
        contentType: 'application/json',
      });
    case 'html':
      return exchange.answer({ status, raw: Buffer.from(HTML_ERROR_PAGE), contentType: 'text/html; charset=utf-8' });
    case 'missing_fields':
      return exchange.answer({ status, headers: response.headers, json: withoutKeyFields(response.json ?? {}) });
    case 'wrong_types':
      return exchange.answer({ status, headers: response.headers, json: wrongTypes(response.json ?? {}) });
    case 'huge':
      exchange.recordStatus(status);
      return streamHuge(exchange.res, status, fault.sizeBytes ?? 8 * 1024 * 1024, exchange.record.requestId);
  }
}

/** Sends the full Content-Length but only half the bytes, then closes the socket. */
export function answerTruncated(exchange: Exchange, response: SimResponse): void {
  const { res, record } = exchange;
  exchange.recordStatus(response.status);
  const bytes = response.raw ?? Buffer.from(JSON.stringify(response.json ?? {}));
  res.writeHead(response.status, {
    ...response.headers,
    'x-request-id': record.requestId,
    'content-type': response.contentType ?? 'application/json',
    'content-length': bytes.length,
  });
  res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.socket?.destroy());
}

/** The fields a client needs to understand an answer; `missing_fields` removes them. */
const KEY_FIELDS = new Set(['state', 'status', 'done', 'job_id', 'id', 'name', 'metadata', 'status_url']);

function withoutKeyFields(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter(([key]) => !KEY_FIELDS.has(key)));
}

function wrongTypes(value: unknown): unknown {
  if (typeof value === 'string') return 12345;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return { not: 'an array' };
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, wrongTypes(field)]));
  return 'null';
}

/** Streams a JSON-looking body of `sizeBytes`, honouring back-pressure; stops if the client goes away. */
function streamHuge(res: ServerResponse, status: number, sizeBytes: number, requestId: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId });
  const chunk = Buffer.alloc(64 * 1024, 0x78);
  const head = Buffer.from('{"padding":"');
  res.write(head);
  let sent = head.length;
  const pump = (): void => {
    while (sent < sizeBytes) {
      if (res.destroyed) return;
      const size = Math.min(chunk.length, sizeBytes - sent);
      sent += size;
      if (!res.write(chunk.subarray(0, size))) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
}
