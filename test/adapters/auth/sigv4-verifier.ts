/**
 * A SigV4 check as AWS makes it, for test servers: the signature of a received request is computed again with
 * `@smithy/signature-v4` from what arrived (method, path, query, the signed headers, the body bytes) and compared,
 * and the body must match its x-amz-content-sha256. So a request passes only when the signature covers exactly
 * what was sent.
 */
import { createHash } from 'node:crypto';
import { type IncomingHttpHeaders } from 'node:http';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { type AwsCredentials } from '../../../src/adapters/auth/aws-sigv4';

/** A request as a server received it. */
export interface ReceivedRequest {
  method: string;
  /** The request target: path and query, as on the request line. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What the server knows: the credentials it issued (by access key ID), its region and service. */
export interface SigV4Expectation {
  credentials: ReadonlyMap<string, AwsCredentials>;
  region: string;
  service: string;
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/;

/** Why a received request's signature does not hold, or undefined when it does. */
export async function sigV4Problem(request: ReceivedRequest, expected: SigV4Expectation): Promise<string | undefined> {
  const authorization = String(request.headers.authorization ?? '');
  const match = AUTHORIZATION.exec(authorization);
  if (match === null) return 'no SigV4 Authorization header';
  const [, keyId, , region, service, signedHeaders] = match;
  const credentials = expected.credentials.get(keyId!);
  if (credentials === undefined) return 'unknown access key';
  if (region !== expected.region || service !== expected.service) return 'wrong scope';
  const bodyHash = createHash('sha256').update(request.body).digest('hex');
  if (request.headers['x-amz-content-sha256'] !== bodyHash) return 'the body does not match x-amz-content-sha256';
  if (request.headers['x-amz-security-token'] !== credentials.sessionToken) return 'wrong session token';
  const names = signedHeaders!.split(';');
  if (!names.includes('host') || !names.includes('x-amz-content-sha256')) return 'host or body hash not signed';
  const headers = Object.fromEntries(names.map((name) => [name, String(request.headers[name] ?? '')]));
  const url = new URL(request.url, `http://${request.headers.host}`);
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const present = query[name];
    query[name] = present === undefined ? value : [...(Array.isArray(present) ? present : [present]), value];
  }
  const amzDate = String(request.headers['x-amz-date']);
  const signingDate = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  const signer = new SignatureV4({ credentials, region: expected.region, service: expected.service, sha256: Sha256 });
  const computed = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: url.hostname,
      ...(url.port === '' ? {} : { port: Number(url.port) }),
      path: url.pathname,
      query,
      headers,
      body: request.body,
    },
    { signingDate },
  );
  return computed.headers.authorization === authorization ? undefined : 'the signature does not match';
}
