import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { credentialSupplier } from '../../src/adapters/secrets';

describe('credential references (T4)', () => {
  it('T4: resolves a bearer token from the environment at call time', async () => {
    const env: NodeJS.ProcessEnv = { REPORTS_TOKEN: 'first' };
    const supply = credentialSupplier({ scheme: 'bearer', secretEnv: 'REPORTS_TOKEN' }, env);
    expect(await supply()).toEqual({ headerName: 'authorization', headerValue: 'Bearer first' });
    env.REPORTS_TOKEN = 'rotated';
    expect(await supply()).toEqual({ headerName: 'authorization', headerValue: 'Bearer rotated' });
  });

  it('T4: resolves a custom header from a secret file, trimmed', async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'secret-')), 'key');
    await writeFile(file, 'abc123\n');
    const supply = credentialSupplier({ scheme: 'header', headerName: 'X-Api-Key', secretFile: file });
    expect(await supply()).toEqual({ headerName: 'x-api-key', headerValue: 'abc123' });
  });

  it('T4: a missing secret is a typed error naming the reference, never a value', async () => {
    const supply = credentialSupplier({ scheme: 'bearer', secretEnv: 'NOPE_TOKEN' }, {});
    await expect(supply()).rejects.toMatchObject({
      code: 'ASYNCJOB_ERR_CREDENTIAL_MISSING',
      message: expect.stringContaining('NOPE_TOKEN'),
    });
    const fromFile = credentialSupplier({ scheme: 'bearer', secretFile: '/nonexistent/secret' });
    await expect(fromFile()).rejects.toMatchObject({ code: 'ASYNCJOB_ERR_CREDENTIAL_MISSING' });
  });

  it('needs no credential for scheme none', async () => {
    expect(await credentialSupplier({ scheme: 'none' })()).toBeUndefined();
  });
});
