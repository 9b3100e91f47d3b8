/**
 * AWS Signature Version 4 as a request authoriser (T4), signed by `@smithy/signature-v4` with
 * `@aws-crypto/sha256-js` (never a signer of our own). The signature covers the request exactly as it goes on the
 * wire: method, path, query, every header the HTTP layer sends but the trace and hop-by-hop headers AWS's own
 * signers leave out (the `host` header included, pinned to what undici sends) and the SHA-256 of the body bytes, sent as `x-amz-content-sha256`. Credentials come from the standard AWS
 * chain at the moment of each request (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, then the
 * shared config and credentials files; with `profile`, that profile), cached and refreshed by the chain; a session
 * token is sent as `x-amz-security-token`, and signed.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { CredentialUnavailableError, type OutgoingRequest, type RequestAuthoriser } from '../http';
import { type CredentialReference } from '../providers/contract/credential';

type SigV4Reference = Extract<CredentialReference, { scheme: 'aws-sigv4' }>;

/** AWS credentials as the chain gives them. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
}

/** Where AWS credentials come from: the standard chain for a profile (or none), called at each request. */
export type AwsCredentialChain = (profile: string | undefined) => () => Promise<AwsCredentials>;

/** The standard AWS chain of `@aws-sdk/credential-provider-node`, memoised and refreshed by it. */
export const standardAwsChain: AwsCredentialChain = (profile) =>
  defaultProvider(profile === undefined ? {} : { profile });

/** The request in the form the signer takes: the query decoded into names and values, as a server reads it. */
function signable(request: OutgoingRequest) {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(request.url.search)) {
    const present = query[name];
    query[name] = present === undefined ? value : [...(Array.isArray(present) ? present : [present]), value];
  }
  return {
    method: request.method,
    protocol: request.url.protocol,
    hostname: request.url.hostname,
    ...(request.url.port === '' ? {} : { port: Number(request.url.port) }),
    path: request.url.pathname,
    query,
    headers: { ...request.headers, host: request.url.host },
    ...(request.body === undefined ? {} : { body: request.body }),
  };
}

/**
 * Headers sent but never signed, as AWS's own signers leave them out (botocore's list): trace context that
 * proxies and tracers rewrite on the way, and hop-by-hop headers. A server that verifies with AWS's rules drops
 * them from the canonical request, so signing one is a signature it refuses.
 */
const UNSIGNED_HEADERS = new Set([
  'baggage',
  'connection',
  'expect',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'traceparent',
  'tracestate',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'x-amzn-trace-id',
]);

/** Options of {@link sigV4Authoriser}. */
interface SigV4Options {
  /** Epoch-ms clock: the signing date. */
  readonly nowMs: () => number;
  /** Where credentials come from; {@link standardAwsChain} unless a test gives another. */
  readonly chain: AwsCredentialChain;
}

/** An authoriser signing every request with SigV4 for the document's region and service. */
export function sigV4Authoriser(reference: SigV4Reference, options: SigV4Options): RequestAuthoriser {
  const credentials = options.chain(reference.profile);
  const source = reference.profile === undefined ? 'the standard AWS chain' : `AWS profile ${reference.profile}`;
  return {
    async authorise(request) {
      let resolved: AwsCredentials;
      try {
        resolved = await credentials();
      } catch (err) {
        const name = (err as { name?: unknown }).name;
        throw new CredentialUnavailableError(
          `no AWS credentials from ${source}${typeof name === 'string' ? ` (${name})` : ''}`,
        );
      }
      const signer = new SignatureV4({
        service: reference.service,
        region: reference.region,
        credentials: resolved,
        sha256: Sha256,
        // S3 alone signs the path as sent; every other service signs it URI-encoded once more.
        uriEscapePath: reference.service !== 's3',
        applyChecksum: true,
      });
      const signed = await signer.sign(signable(request), {
        signingDate: new Date(options.nowMs()),
        unsignableHeaders: UNSIGNED_HEADERS,
      });
      const added: Record<string, string> = {};
      for (const [name, value] of Object.entries(signed.headers)) {
        if (request.headers[name] !== value) added[name] = value;
      }
      return {
        headers: { ...added, host: request.url.host },
        secrets: [resolved.secretAccessKey, ...(resolved.sessionToken === undefined ? [] : [resolved.sessionToken])],
      };
    },
  };
}
