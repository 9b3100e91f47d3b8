/**
 * The schemes that send a secret as it is (bearer, header, basic, query): each reads its secret by reference at
 * every request and says which strings to scrub; a missing reference is a refusal naming it, never a value.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { authoriserFor } from '../../../src/adapters/auth';
import { CredentialUnavailableError, type OutgoingRequest } from '../../../src/adapters/http';
import { type CredentialReference } from '../../../src/adapters/providers/contract';

const REQUEST: OutgoingRequest = {
  method: 'GET',
  url: new URL('https://api.example/v1/jobs/1'),
  headers: { host: 'api.example' },
  body: undefined,
};

async function authorise(credential: CredentialReference, env: NodeJS.ProcessEnv = {}) {
  return authoriserFor(credential, { env })!.authorise(REQUEST);
}

describe('credential references (T4)', () => {
  it('T4: resolves a bearer token from the environment at each request', async () => {
    const env: NodeJS.ProcessEnv = { REPORTS_TOKEN: 'first' };
    const authoriser = authoriserFor({ scheme: 'bearer', secretEnv: 'REPORTS_TOKEN' }, { env })!;
    expect(await authoriser.authorise(REQUEST)).toEqual({
      headers: { authorization: 'Bearer first' },
      secrets: ['Bearer first', 'first'],
    });
    env.REPORTS_TOKEN = 'rotated';
    expect((await authoriser.authorise(REQUEST)).headers).toEqual({ authorization: 'Bearer rotated' });
    expect(authoriser.renew).toBeUndefined();
  });

  it('T4: resolves a custom header from a secret file, trimmed', async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'secret-')), 'key');
    await writeFile(file, 'abc123\n');
    expect(await authorise({ scheme: 'header', headerName: 'x-api-key', secretFile: file })).toEqual({
      headers: { 'x-api-key': 'abc123' },
      secrets: ['abc123'],
    });
  });

  it('T4: a missing secret is a refusal naming the reference, never a value', async () => {
    await expect(authorise({ scheme: 'bearer', secretEnv: 'NOPE_TOKEN' })).rejects.toThrow(
      new CredentialUnavailableError('credential environment variable NOPE_TOKEN is not set'),
    );
    await expect(authorise({ scheme: 'bearer', secretFile: '/nonexistent/secret' })).rejects.toThrow(
      /credential file \/nonexistent\/secret cannot be read \(ENOENT\)/,
    );
    await expect(authorise({ scheme: 'bearer', secretEnv: 'SPLIT' }, { SPLIT: 'a\r\nX-Evil: 1' })).rejects.toThrow(
      'credential environment variable SPLIT contains a line break',
    );
  });

  it('needs no authoriser for scheme none', () => {
    expect(authoriserFor({ scheme: 'none' })).toBeUndefined();
  });
});

describe('basic (RFC 7617, T4)', () => {
  it('T4: sends base64 of user:password; the password and its encodings are scrubbed, the user name is not', async () => {
    const auth = await authorise(
      { scheme: 'basic', username: 'Aladdin', secretEnv: 'REPORTS_PASSWORD' },
      { REPORTS_PASSWORD: 'open sesame' },
    );
    // RFC 7617 section 2's example.
    expect(auth.headers).toEqual({ authorization: 'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==' });
    expect(auth.secrets).toEqual(['Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==', 'QWxhZGRpbjpvcGVuIHNlc2FtZQ==', 'open sesame']);
  });

  it('T4: takes the user name from an environment variable, UTF-8, and refuses one with a colon', async () => {
    const auth = await authorise(
      { scheme: 'basic', usernameEnv: 'REPORTS_USER', secretEnv: 'REPORTS_PASSWORD' },
      { REPORTS_USER: 'test', REPORTS_PASSWORD: '123£' },
    );
    // RFC 7617 section 2.1's UTF-8 example.
    expect(auth.headers).toEqual({ authorization: 'Basic dGVzdDoxMjPCow==' });
    await expect(
      authorise(
        { scheme: 'basic', usernameEnv: 'REPORTS_USER', secretEnv: 'REPORTS_PASSWORD' },
        { REPORTS_USER: 'a:b', REPORTS_PASSWORD: 'pw' },
      ),
    ).rejects.toThrow('the basic user name contains ":" (RFC 7617)');
    await expect(
      authorise(
        { scheme: 'basic', usernameEnv: 'REPORTS_USER', secretEnv: 'REPORTS_PASSWORD' },
        { REPORTS_PASSWORD: 'pw' },
      ),
    ).rejects.toThrow('environment variable REPORTS_USER is not set');
  });
});

describe('query API key (T4)', () => {
  it('T4: adds the key as a query parameter, read at each request', async () => {
    expect(
      await authorise({ scheme: 'query', parameter: 'key', secretEnv: 'MAPS_KEY' }, { MAPS_KEY: 'AIza-1' }),
    ).toEqual({
      query: { name: 'key', value: 'AIza-1' },
      secrets: ['AIza-1'],
    });
  });
});
