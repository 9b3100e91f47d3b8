import { describe, expect, it } from 'vitest';
import { parseStoreLocation } from '../../src/adapters/store/open-store';

describe('store locations', () => {
  it.each([
    ['sqlite:.asyncjob/asyncjob.db', { engine: 'sqlite', path: '.asyncjob/asyncjob.db' }],
    ['sqlite:/var/lib/asyncjob.db', { engine: 'sqlite', path: '/var/lib/asyncjob.db' }],
    ['postgres://u@db:5432/asyncjob', { engine: 'postgres', connectionString: 'postgres://u@db:5432/asyncjob' }],
    ['postgresql://u@db/asyncjob', { engine: 'postgres', connectionString: 'postgresql://u@db/asyncjob' }],
  ])('parses %s', (location, expected) => {
    expect(parseStoreLocation(location)).toEqual(expected);
  });

  it('T4: refuses an unknown location without echoing a password', () => {
    let message = '';
    try {
      parseStoreLocation('mysql://root:hunter22@db/x');
    } catch (err) {
      expect(err).toMatchObject({ code: 'ASYNCJOB_ERR_STORE_LOCATION' });
      message = (err as Error).message;
    }
    expect(message).toContain('use sqlite:PATH or postgres://');
    expect(message).not.toContain('hunter22');
    expect(() => parseStoreLocation('sqlite:')).toThrow(/needs a file path/);
  });
});
