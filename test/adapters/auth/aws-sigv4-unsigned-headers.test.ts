/**
 * SigV4 leaves out of the signature exactly the headers AWS's own signers leave out (botocore's list): trace context
 * and hop-by-hop headers, which tracers and proxies rewrite on the way. A server that verifies as AWS does drops them
 * from the canonical request (moto's server refuses a signed `traceparent` with 403 SignatureDoesNotMatch), so they
 * are sent but never signed; every other header is signed.
 */
import { describe, expect, it } from 'vitest';
import { authoriserFor } from '../../../src/adapters/auth';

const KEYS = { accessKeyId: 'AKIDEXAMPLEUNSIGNED1', secretAccessKey: 'sak_unsigned_headers_example' };

async function signedHeadersOf(headers: Record<string, string>): Promise<string[]> {
  const authoriser = authoriserFor(
    { scheme: 'aws-sigv4', region: 'us-east-1', service: 'transcribe' },
    { nowMs: () => Date.UTC(2026, 11, 3, 8, 0, 0), awsChain: () => () => Promise.resolve(KEYS) },
  )!;
  const added = await authoriser.authorise({
    method: 'POST',
    url: new URL('https://transcribe.us-east-1.amazonaws.com/'),
    headers,
    body: new TextEncoder().encode('{}'),
  });
  const authorization = Object.entries(added.headers ?? {}).find(
    ([name]) => name.toLowerCase() === 'authorization',
  )?.[1];
  return /SignedHeaders=([^,]+)/.exec(String(authorization))![1]!.split(';');
}

describe('aws-sigv4: the headers it signs', () => {
  it('T4: traceparent, tracestate and baggage are sent unsigned; the call headers and the trace ID header are signed', async () => {
    const signed = await signedHeadersOf({
      accept: 'application/json',
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': 'Transcribe.GetTranscriptionJob',
      'x-trace-id': '3bea7a5ff86fb94fec7ed87794dd86fb',
      traceparent: '00-3bea7a5ff86fb94fec7ed87794dd86fb-1fa5d546bb0d8e0e-01',
      tracestate: 'vendor=1',
      baggage: 'tenant=a',
      'user-agent': 'asyncjob/0.1',
    });
    expect(signed).toEqual(
      expect.arrayContaining(['accept', 'content-type', 'host', 'x-amz-content-sha256', 'x-amz-target', 'x-trace-id']),
    );
    for (const unsigned of ['traceparent', 'tracestate', 'baggage', 'user-agent'])
      expect(signed).not.toContain(unsigned);
  });
});
