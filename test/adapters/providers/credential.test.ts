/**
 * The credential schemes a provider document may name (T4): each one validates, with every problem named by its
 * field, and the explain lines state what is sent and where each secret is read, never a value.
 */
import { describe, expect, it } from 'vitest';
import { BUILT_IN_PRESETS, ProviderContractError, parseProviderContract } from '../../../src/adapters/providers';
import { describeContract } from '../../../src/adapters/providers/explain';
import { BASE } from './helpers';

function withCredential(credential: unknown) {
  const doc = structuredClone(BUILT_IN_PRESETS.rest) as Record<string, unknown>;
  doc.credential = credential;
  return parseProviderContract(doc, 'x', { baseUrl: BASE });
}

function issuesOf(credential: unknown): { path: string; message: string }[] {
  try {
    withCredential(credential);
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderContractError);
    return [...(error as ProviderContractError).issues];
  }
  throw new Error('expected the document to be refused');
}

const VALID: Record<string, unknown> = {
  bearer: { scheme: 'bearer', secretEnv: 'REPORTS_TOKEN' },
  header: { scheme: 'header', headerName: 'x-api-key', secretFile: '/run/secrets/key' },
  basic: { scheme: 'basic', username: 'reports', secretEnv: 'REPORTS_PASSWORD' },
  'basic, user by variable': { scheme: 'basic', usernameEnv: 'REPORTS_USER', secretFile: '/run/secrets/pw' },
  query: { scheme: 'query', parameter: 'api_key', secretEnv: 'MAPS_KEY' },
  oauth2: {
    scheme: 'oauth2-client-credentials',
    tokenUrl: 'https://login.example/oauth2/token',
    clientId: 'reports',
    secretEnv: 'REPORTS_CLIENT_SECRET',
    scopes: ['jobs.read', 'jobs.write'],
    audience: 'https://api.example',
    clientAuthentication: 'body',
  },
  'oauth2 on loopback http': {
    scheme: 'oauth2-client-credentials',
    tokenUrl: 'http://127.0.0.1:8080/token',
    clientIdEnv: 'REPORTS_CLIENT_ID',
    secretFile: '/run/secrets/client',
  },
  'aws-sigv4': { scheme: 'aws-sigv4', region: 'us-east-1', service: 'textract' },
  'aws-sigv4 with a profile': { scheme: 'aws-sigv4', region: 'eu-west-2', service: 'transcribe', profile: 'jobs' },
  none: { scheme: 'none' },
};

describe('credential schemes (T4)', () => {
  it.each(Object.entries(VALID))('T4: %s validates', (_name, credential) => {
    expect(withCredential(credential).credential).toMatchObject(credential as object);
  });

  it('T4: oauth2 defaults to HTTP Basic client authentication', () => {
    expect(withCredential(VALID['oauth2 on loopback http']).credential).toMatchObject({
      clientAuthentication: 'basic',
    });
  });

  it.each([
    [
      'a token URL over plain http off loopback',
      { tokenUrl: 'http://login.example/token' },
      'credential.tokenUrl',
      'must be https: (http: only on a loopback host: localhost, 127.0.0.1, [::1])',
    ],
    [
      'a token URL with user information',
      { tokenUrl: 'https://id:pw@login.example/token' },
      'credential.tokenUrl',
      'must not carry credentials (name the client secret by reference)',
    ],
    [
      'both clientId and clientIdEnv',
      { clientIdEnv: 'REPORTS_CLIENT_ID' },
      'credential.clientId',
      'give exactly one of clientId or clientIdEnv',
    ],
    [
      'two secret references',
      { secretFile: '/run/secrets/client' },
      'credential.secretEnv',
      'give exactly one of secretEnv or secretFile',
    ],
    [
      'a scope with a space',
      { scopes: ['jobs read'] },
      'credential.scopes[0]',
      'a scope is printable ASCII without spaces, quotes or "\\"',
    ],
  ])('T4: oauth2 refuses %s', (_what, patch, path, message) => {
    expect(issuesOf({ ...(VALID.oauth2 as object), ...patch })).toContainEqual({ path, message });
  });

  it('T4: every scheme names what is missing or wrong, by field', () => {
    expect(issuesOf({ scheme: 'basic', secretEnv: 'PW' })).toContainEqual({
      path: 'credential.username',
      message: 'give exactly one of username or usernameEnv',
    });
    expect(issuesOf({ scheme: 'basic', username: 'a:b', secretEnv: 'PW' })).toContainEqual({
      path: 'credential.username',
      message: 'a user name has no ":" and no control character (RFC 7617)',
    });
    expect(issuesOf({ scheme: 'query', parameter: 'api key', secretEnv: 'K' })).toContainEqual({
      path: 'credential.parameter',
      message: 'a query parameter name such as api_key',
    });
    expect(issuesOf({ scheme: 'query', parameter: 'key' })).toContainEqual({
      path: 'credential.secretEnv',
      message: 'give exactly one of secretEnv or secretFile',
    });
    const sigv4 = issuesOf({ scheme: 'aws-sigv4', region: 'US East', service: 'Textract!', secretEnv: 'X' });
    expect(sigv4).toContainEqual({ path: 'credential.region', message: 'an AWS region such as us-east-1' });
    expect(sigv4).toContainEqual({ path: 'credential.service', message: 'an AWS signing name such as textract' });
    expect(sigv4.some((i) => i.path === 'credential' && i.message.includes('secretEnv'))).toBe(true);
  });

  it('T4: explain states each scheme, where each secret is read, never a value', () => {
    const lines = (credential: unknown): string =>
      describeContract(withCredential(credential))
        .sections.find((s) => s.id === 'provider')!
        .lines.join('\n');
    expect(lines(VALID.basic)).toContain('credential: Authorization: Basic base64(<user>:<password>) (RFC 7617)');
    expect(lines(VALID.basic)).toContain('password: read by the worker from environment variable REPORTS_PASSWORD');
    expect(lines(VALID.query)).toContain('credential: query parameter api_key=<secret>');
    expect(lines(VALID.oauth2)).toContain(
      'OAuth2 client credentials from https://login.example/oauth2/token (asked at that origin only',
    );
    expect(lines(VALID.oauth2)).toContain('scopes: jobs.read jobs.write; audience: https://api.example');
    expect(lines(VALID.oauth2)).toContain('is resent once with a new token');
    expect(lines(VALID['aws-sigv4'])).toContain(
      'credential: AWS Signature Version 4, region us-east-1, service textract',
    );
    expect(lines(VALID['aws-sigv4 with a profile'])).toContain('AWS credentials: profile jobs');
  });
});
