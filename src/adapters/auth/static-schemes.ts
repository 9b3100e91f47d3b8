/**
 * The schemes that send a secret as it is, read by reference at each request (T4): `bearer` (`Authorization:
 * Bearer <secret>`), `header` (the secret as the value of a named header), `basic` (RFC 7617: `Authorization:
 * Basic base64(user:password)`) and `query` (an API key as a query parameter, added at the last moment and
 * redacted in every recorded URL). None has anything to renew after a 401.
 */
import { type Authorisation, CredentialUnavailableError, type RequestAuthoriser } from '../http';
import { readSecret, readSetting, type Environment } from './secret-reference';
import { type CredentialReference } from '../providers/contract/credential';

type StaticScheme = Extract<CredentialReference, { scheme: 'bearer' | 'header' | 'basic' | 'query' }>;

/** RFC 7617 2: the user-pass is `user-id ":" password`, UTF-8, base64; a user-id has no colon. */
function basicCredentials(username: string, password: string): string {
  if (username.includes(':')) throw new CredentialUnavailableError('the basic user name contains ":" (RFC 7617)');
  return Buffer.from(`${username}:${password}`, 'utf8').toString('base64');
}

/** What one scheme adds for `secret`. Pure. */
function authorisationOf(reference: StaticScheme, secret: string, env: Environment): Authorisation {
  switch (reference.scheme) {
    case 'bearer':
      return { headers: { authorization: `Bearer ${secret}` }, secrets: [`Bearer ${secret}`, secret] };
    case 'header':
      return { headers: { [reference.headerName]: secret }, secrets: [secret] };
    case 'basic': {
      const encoded = basicCredentials(readSetting(reference.username, reference.usernameEnv, env), secret);
      return { headers: { authorization: `Basic ${encoded}` }, secrets: [`Basic ${encoded}`, encoded, secret] };
    }
    case 'query':
      return { query: { name: reference.parameter, value: secret }, secrets: [secret] };
  }
}

/** An authoriser for a scheme that sends its secret as it is; the secret is read again for every request. */
export function staticAuthoriser(reference: StaticScheme, env: Environment): RequestAuthoriser {
  return {
    authorise: async () => authorisationOf(reference, await readSecret(reference, env), env),
  };
}
