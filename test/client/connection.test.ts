import { describe, expect, it } from 'vitest';
import { AsyncJobClient, temporalConnectionSettings } from '../../src/client';
import { ConfigError, loadConfig } from '../../src/config';

const files: Record<string, string> = { '/tls/client.pem': 'CERT', '/tls/client.key': 'KEY', '/tls/ca.pem': 'CA' };
const read = (path: string): Buffer => {
  const text = files[path];
  if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
  return Buffer.from(text);
};

describe('temporalConnectionSettings (Temporal environment conventions)', () => {
  it('defaults to a plain local connection in the default namespace', () => {
    expect(temporalConnectionSettings(loadConfig({}), read)).toEqual({
      address: '127.0.0.1:7233',
      namespace: 'default',
    });
  });

  it('reads mTLS files, the CA and the server name', () => {
    const settings = temporalConnectionSettings(
      loadConfig({
        TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
        TEMPORAL_NAMESPACE: 'ns.acct',
        TEMPORAL_TLS_CERT: '/tls/client.pem',
        TEMPORAL_TLS_KEY: '/tls/client.key',
        TEMPORAL_TLS_CA: '/tls/ca.pem',
        TEMPORAL_TLS_SERVER_NAME: 'ns.acct.tmprl.cloud',
      }),
      read,
    );
    expect(settings.address).toBe('ns.acct.tmprl.cloud:7233');
    expect(settings.namespace).toBe('ns.acct');
    expect(settings.tls?.serverNameOverride).toBe('ns.acct.tmprl.cloud');
    expect(settings.tls?.serverRootCACertificate?.toString()).toBe('CA');
    expect(settings.tls?.clientCertPair?.crt.toString()).toBe('CERT');
    expect(settings.tls?.clientCertPair?.key.toString()).toBe('KEY');
    expect(settings.apiKey).toBeUndefined();
  });

  it('turns TLS on for an API key (Temporal Cloud requires it)', () => {
    expect(temporalConnectionSettings(loadConfig({ TEMPORAL_API_KEY: 'k-123' }), read)).toEqual({
      address: '127.0.0.1:7233',
      namespace: 'default',
      tls: {},
      apiKey: 'k-123',
    });
  });

  it('names the variable whose TLS file cannot be read, without the file contents', () => {
    const config = loadConfig({ TEMPORAL_TLS_CERT: '/tls/client.pem', TEMPORAL_TLS_KEY: '/tls/missing.key' });
    expect(() => temporalConnectionSettings(config, read)).toThrow(
      expect.objectContaining({ code: 'ASYNCJOB_ERR_CONFIG_INVALID' }),
    );
    expect(() => temporalConnectionSettings(config, read)).toThrow(
      /^TEMPORAL_TLS_KEY: cannot read \/tls\/missing.key: ENOENT/,
    );
  });

  it('AsyncJobClient.connect fails fast on a bad environment, listing every problem, before any network call', async () => {
    const err = await AsyncJobClient.connect({
      env: { TEMPORAL_TLS_CERT: '/tls/client.pem', ASYNCJOB_LOG_LEVEL: 'loud' },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ASYNCJOB_LOG_LEVEL/),
        expect.stringMatching(/TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together/),
      ]),
    );
  });

  it('AsyncJobClient.connect reports an unreachable server as ASYNCJOB_ERR_CONNECTION naming the address', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const err = await AsyncJobClient.connect({ env: { TEMPORAL_ADDRESS: '127.0.0.1:1' }, connectTimeoutMs: 500 }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_CONNECTION', address: '127.0.0.1:1' });
    expect((err as Error).message).toMatch(/^cannot reach Temporal at 127\.0\.0\.1:1: /);
  });
});
