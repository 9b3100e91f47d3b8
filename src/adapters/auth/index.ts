/**
 * Auth schemes as data (T4): a provider document's `credential` becomes the request authoriser its HTTP client
 * calls at the moment of each request, for the provider's origin only. Secrets are named by reference and read by
 * the worker; none enters workflow inputs, history, the journal, logs or tool output.
 */
import { type RequestAuthoriser } from '../http';
import { type CredentialReference } from '../providers/contract/credential';
import { standardAwsChain, sigV4Authoriser, type AwsCredentialChain } from './aws-sigv4';
import { oauth2Authoriser } from './oauth2-client-credentials';
import { type Environment } from './secret-reference';
import { staticAuthoriser } from './static-schemes';

/** Options of {@link authoriserFor}. */
export interface AuthoriserOptions {
  /** Where `secretEnv`, `usernameEnv` and `clientIdEnv` are read; `process.env` by default. */
  readonly env?: Environment;
  /** Epoch-ms clock (token expiry, signing date); `Date.now` by default. */
  readonly nowMs?: () => number;
  /** Connect, headers and body timeouts of a token request, ms; 10 000 by default. */
  readonly tokenTimeoutMs?: number;
  /** Where AWS credentials come from; the standard AWS chain by default. */
  readonly awsChain?: AwsCredentialChain;
}

/** The authoriser of a credential reference; undefined for `none`. Reads nothing until the first request. */
export function authoriserFor(
  credential: CredentialReference,
  options: AuthoriserOptions = {},
): RequestAuthoriser | undefined {
  const env = options.env ?? process.env;
  const nowMs = options.nowMs ?? (() => Date.now());
  switch (credential.scheme) {
    case 'none':
      return undefined;
    case 'bearer':
    case 'header':
    case 'basic':
    case 'query':
      return staticAuthoriser(credential, env);
    case 'oauth2-client-credentials':
      return oauth2Authoriser(credential, { env, nowMs, timeoutMs: options.tokenTimeoutMs ?? 10_000 });
    case 'aws-sigv4':
      return sigV4Authoriser(credential, { nowMs, chain: options.awsChain ?? standardAwsChain });
  }
}
