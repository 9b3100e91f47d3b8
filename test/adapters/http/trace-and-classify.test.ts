import { describe, expect, it } from 'vitest';
import {
  classifyTransportFailure,
  newSpanId,
  traceHeaders,
  w3cTraceIdFor,
  type ExchangePhase,
} from '../../../src/adapters/http';

describe('trace headers (T1)', () => {
  it.each([
    ['4bf92f3577b34da6a3ce929d0e0e4736', '4bf92f3577b34da6a3ce929d0e0e4736'],
    ['4BF92F3577B34DA6A3CE929D0E0E4736', '4bf92f3577b34da6a3ce929d0e0e4736'],
  ])('T1: a 32-hex trace ID %s is used as the W3C trace ID', (traceId, expected) => {
    expect(w3cTraceIdFor(traceId)).toBe(expected);
  });

  it.each(['op-1', 'trace/with spaces inside', '00000000000000000000000000000000', 'a'.repeat(200)])(
    'T1: any other trace ID (%s) maps deterministically to a valid non-zero 32-hex trace ID',
    (traceId) => {
      const id = w3cTraceIdFor(traceId);
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(id).not.toMatch(/^0+$/);
      expect(w3cTraceIdFor(traceId)).toBe(id);
    },
  );

  it('T1: different operations get different W3C traces; span IDs are fresh and valid', () => {
    expect(w3cTraceIdFor('op-1')).not.toBe(w3cTraceIdFor('op-2'));
    const spans = new Set(Array.from({ length: 50 }, () => newSpanId()));
    expect(spans.size).toBe(50);
    for (const s of spans) expect(s).toMatch(/^[0-9a-f]{16}$/);
    expect(traceHeaders('op-1')).toEqual({
      'x-trace-id': 'op-1',
      traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/),
    });
  });

  it.each([
    ['', 'traceId'],
    [' padded', 'traceId'],
    ['line\nbreak', 'traceId'],
    ['é', 'traceId'],
    ['a'.repeat(201), 'traceId'],
  ])('T1: a trace ID that cannot be a header value (%j) is our fault, naming the field', (traceId, field) => {
    expect(() => traceHeaders(traceId)).toThrow(
      expect.objectContaining({ code: 'ASYNCJOB_ERR_HTTP_INVALID_REQUEST', field }),
    );
  });

  it.each(['0000000000000000', 'ABCDEF0123456789', '123'])('T1: span ID %s is refused', (spanId) => {
    expect(() => traceHeaders('t', spanId)).toThrow(expect.objectContaining({ field: 'spanId' }));
  });
});

describe('classifyTransportFailure (U1)', () => {
  it.each<[ExchangePhase, string | undefined, string, string]>([
    ['connecting', 'ECONNREFUSED', 'not_sent', 'connect_refused'],
    ['connecting', 'ENOTFOUND', 'not_sent', 'dns'],
    ['connecting', 'EAI_AGAIN', 'not_sent', 'dns'],
    ['connecting', 'UND_ERR_CONNECT_TIMEOUT', 'not_sent', 'connect_timeout'],
    ['connecting', 'ERR_TLS_CERT_ALTNAME_INVALID', 'not_sent', 'tls'],
    ['connecting', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'not_sent', 'tls'],
    ['connecting', 'ECONNRESET', 'not_sent', 'connect_reset'],
    ['connecting', undefined, 'not_sent', 'connect_failed'],
    ['writing_request', 'ECONNRESET', 'ambiguous', 'reset_after_send'],
    ['writing_request', 'EPIPE', 'ambiguous', 'reset_after_send'],
    ['awaiting_headers', 'UND_ERR_HEADERS_TIMEOUT', 'ambiguous', 'timeout_after_send'],
    ['awaiting_headers', 'UND_ERR_SOCKET', 'ambiguous', 'reset_after_send'],
    ['awaiting_headers', 'ECONNREFUSED', 'ambiguous', 'transport_error_after_send'],
    ['awaiting_headers', undefined, 'ambiguous', 'transport_error_after_send'],
    ['reading_body', 'UND_ERR_BODY_TIMEOUT', 'ambiguous', 'body_timeout'],
    ['reading_body', 'UND_ERR_SOCKET', 'ambiguous', 'truncated'],
    ['reading_body', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'ambiguous', 'truncated'],
  ])('U1: %s + %s -> %s/%s (after the request starts, never not_sent)', (phase, code, outcome, errorCategory) => {
    expect(classifyTransportFailure(phase, { code, message: 'x' })).toEqual({ outcome, errorCategory });
  });
});
