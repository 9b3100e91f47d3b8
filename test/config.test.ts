import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';

describe('loadConfig', () => {
  it('has working defaults for the embedded setup', () => {
    expect(loadConfig({})).toMatchObject({
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_NAMESPACE: 'default',
      ASYNCJOB_STORE: 'sqlite:.asyncjob/asyncjob.db',
      ASYNCJOB_TASK_QUEUE: 'asyncjob',
    });
  });

  it('lists every problem at once, naming each variable', () => {
    let error: unknown;
    try {
      loadConfig({
        ASYNCJOB_STORE: 'mysql://x',
        ASYNCJOB_WEBHOOK_PORT: 'abc',
        TEMPORAL_TLS_CERT: '/c.pem',
        ASYNCJOB_LOG_LEVEL: 'loud',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['ASYNCJOB_STORE', 'ASYNCJOB_WEBHOOK_PORT', 'TEMPORAL_TLS_CERT', 'ASYNCJOB_LOG_LEVEL'])
      expect(problems).toContain(name);
  });
});
