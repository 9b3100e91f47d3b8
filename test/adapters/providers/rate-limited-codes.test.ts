/**
 * `providerError.rateLimitedCodes` (H1): a provider that says "not now" with an error code rather than a 429 (AWS
 * answers 400 `ThrottlingException`) is read as rate limited, whatever the HTTP status; any other error code keeps
 * its status's meaning. Pure: answers as the HTTP layer hands them over.
 */
import { describe, expect, it } from 'vitest';
import { interpretCreate, interpretStatus, parseProviderContract } from '../../../src/adapters/providers';
import { BASE, answer, valid } from './helpers';

const contract = parseProviderContract(
  {
    name: 'throttles-with-400',
    baseUrl: BASE,
    credential: { scheme: 'none' },
    create: { path: '/jobs', jobId: [{ from: 'body', field: 'id' }], acceptedStatuses: [200] },
    status: { path: '/jobs/{jobId}', stateField: 'state', stateTable: { pending: ['running'], success: ['done'] } },
    providerError: {
      codeField: ['__type'],
      messageField: ['message'],
      rateLimitedCodes: ['ThrottlingException', 'TooManyRequestsException'],
    },
    result: { url: [{ from: 'inline' }] },
    reconciliation: { method: 'none' },
    collectSafeToRepeat: true,
  },
  'test',
  {},
);

const error = (status: number, type: string) => answer(status, { json: { __type: type, message: 'Rate exceeded' } });

describe('providerError.rateLimitedCodes (H1)', () => {
  it.each([
    [400, 'ThrottlingException'],
    [400, 'com.amazonaws.textract#ThrottlingException'],
    [503, 'TooManyRequestsException'],
  ])('H1: a %i answer with code %s to a status read is rate limited, like a 429', (status, type) => {
    const o = valid(interpretStatus(contract, error(status, type)));
    expect(o.signal).toBe('rate_limited');
    expect(o.errorCategory).toBe('rate_limited');
    expect(o.providerError).toMatchObject({ code: type, message: 'Rate exceeded' });
  });

  it('H1: a 400 ThrottlingException answer to a create is rate limited (the provider started nothing)', () => {
    expect(valid(interpretCreate(contract, error(400, 'ThrottlingException'))).signal).toBe('rate_limited');
  });

  it('any other code keeps its status: a 400 is a refusal, a 503 unavailable', () => {
    expect(valid(interpretCreate(contract, error(400, 'ValidationException'))).signal).toBe('client_error');
    expect(valid(interpretStatus(contract, error(503, 'ServiceUnavailable'))).signal).toBe('unavailable');
  });
});
