/** How `asyncjob adapter explain` states a credential: what is sent and where each secret is read, never a value. */
import { type CredentialReference } from '../providers/contract/credential';
import { type SecretReference } from './secret-reference';

function secretSource(reference: SecretReference): string {
  return reference.secretEnv !== undefined
    ? `environment variable ${reference.secretEnv}`
    : `the file ${reference.secretFile}`;
}

function settingSource(literal: string | undefined, envName: string | undefined): string {
  return literal !== undefined ? literal : `the value of environment variable ${envName}`;
}

const READ_AT_EACH_REQUEST = 'read by the worker from';
const TO_THIS_ORIGIN = 'sent to this origin only (T4)';

/** The explain lines of a credential (the first starts `credential:`, the rest are indented). Pure. */
export function describeCredential(credential: CredentialReference): string[] {
  switch (credential.scheme) {
    case 'none':
      return ['no credential is sent'];
    case 'bearer':
    case 'header': {
      const how =
        credential.scheme === 'bearer' ? 'Authorization: Bearer <secret>' : `header ${credential.headerName}: <secret>`;
      return [
        `credential: ${how}, the secret ${READ_AT_EACH_REQUEST} ${secretSource(credential)} at each request, ${TO_THIS_ORIGIN}`,
      ];
    }
    case 'basic':
      return [
        `credential: Authorization: Basic base64(<user>:<password>) (RFC 7617), ${TO_THIS_ORIGIN}`,
        `  user: ${settingSource(credential.username, credential.usernameEnv)}`,
        `  password: ${READ_AT_EACH_REQUEST} ${secretSource(credential)} at each request`,
      ];
    case 'query':
      return [
        `credential: query parameter ${credential.parameter}=<secret>, added to every request URL at the last moment and recorded as [redacted], ${TO_THIS_ORIGIN}`,
        `  secret: ${READ_AT_EACH_REQUEST} ${secretSource(credential)} at each request`,
      ];
    case 'oauth2-client-credentials':
      return oauth2Lines(credential);
    case 'aws-sigv4':
      return [
        `credential: AWS Signature Version 4, region ${credential.region}, service ${credential.service}: signs the method, path, query, headers (host included) and the body's SHA-256 (x-amz-content-sha256) exactly as sent, ${TO_THIS_ORIGIN}`,
        credential.profile === undefined
          ? '  AWS credentials: the standard chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, then the shared config and credentials files), at each request'
          : `  AWS credentials: profile ${credential.profile} of the shared config and credentials files, at each request`,
        '  a session token is sent as x-amz-security-token, signed',
      ];
  }
}

function oauth2Lines(credential: Extract<CredentialReference, { scheme: 'oauth2-client-credentials' }>): string[] {
  const scopes =
    credential.scopes === undefined || credential.scopes.length === 0 ? 'none' : credential.scopes.join(' ');
  return [
    `credential: Authorization: Bearer <access token>, OAuth2 client credentials from ${credential.tokenUrl} (asked at that origin only; redirects are not followed), ${TO_THIS_ORIGIN}`,
    `  client ID: ${settingSource(credential.clientId, credential.clientIdEnv)}; client secret ${READ_AT_EACH_REQUEST} ${secretSource(credential)}, sent ${credential.clientAuthentication === 'basic' ? 'by HTTP Basic' : 'in the form body'}`,
    `  scopes: ${scopes}${credential.audience === undefined ? '' : `; audience: ${credential.audience}`}`,
    '  the token is cached per worker, refreshed before it expires; a failing token endpoint sends nothing (credential_unavailable)',
    '  after a 401, a request that is safe to resend (a read, a lookup, a create with an idempotency token) is resent once with a new token; both answers are recorded',
  ];
}
