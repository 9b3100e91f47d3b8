/**
 * Request decoration: the contract's `headers` and `query` on every request, with the builder's own headers
 * winning (except its generic `accept` default), query parameters never duplicated, and no line break ever sent.
 */
import { describe, expect, it } from 'vitest';
import { requestHeadersSchema } from '../../../src/adapters/providers/contract';
import {
  decorateBuilt,
  decorateRequest,
  withQuery,
  type OperationFacts,
} from '../../../src/adapters/providers/decorate';
import { type BuildResult, type ProviderRequest } from '../../../src/adapters/providers/build';

const facts: OperationFacts = {
  operationId: 'op-42',
  traceId: 'trace-7',
  clientReference: 'ref-9',
  token: 'tok_abc',
  nowMs: Date.UTC(2026, 10, 29, 10, 0, 0),
  firstSentAtMs: Date.UTC(2026, 10, 29, 9, 0, 0),
};

const create: ProviderRequest = {
  method: 'POST',
  url: 'https://api.example.test/v1/jobs',
  headers: {
    accept: 'application/json',
    'content-type': 'application/json',
    'idempotency-key': 'tok_abc',
    'x-client-reference': 'ref-9',
  },
  json: { report: 'x' },
};
const status: ProviderRequest = {
  method: 'GET',
  url: 'https://api.example.test/v1/jobs/job_1',
  headers: { accept: 'application/json' },
};

function requestOf(result: BuildResult): ProviderRequest {
  expect(result.kind).toBe('request');
  return (result as Extract<BuildResult, { kind: 'request' }>).request;
}

describe('decorateRequest', () => {
  it('adds every header kind: a fixed value and each operation fact', () => {
    const headers = requestHeadersSchema.parse({
      'X-Api-Client': { value: 'asyncjob' },
      'X-Operation': { from: 'operation_id' },
      'X-Correlation': { from: 'trace_id' },
      'X-Ref': { from: 'client_reference' },
      'X-Token': { from: 'token' },
      'X-Now': { from: 'now_http_date' },
      'Repeatability-First-Sent': { from: 'first_sent_http_date' },
    });
    const out = requestOf(decorateRequest({ headers }, status, facts));
    expect(out.headers).toEqual({
      accept: 'application/json',
      'x-api-client': 'asyncjob',
      'x-operation': 'op-42',
      'x-correlation': 'trace-7',
      'x-ref': 'ref-9',
      'x-token': 'tok_abc',
      'x-now': 'Sun, 29 Nov 2026 10:00:00 GMT',
      'repeatability-first-sent': 'Sun, 29 Nov 2026 09:00:00 GMT',
    });
    expect(out.url).toBe(status.url);
    expect(out.method).toBe('GET');
  });

  it("never overrides the create's own headers (token, client reference, content type), but replaces the generic accept", () => {
    const out = requestOf(
      decorateRequest(
        {
          headers: {
            'Idempotency-Key': { value: 'other' },
            'x-client-reference': { value: 'other' },
            'Content-Type': { value: 'text/plain' },
            Accept: { value: 'application/vnd.acme+json' },
          },
        },
        create,
        facts,
      ),
    );
    expect(out.headers).toEqual({ ...create.headers, accept: 'application/vnd.acme+json' });
    expect(out.json).toEqual(create.json);
  });

  it('does not change the request it was given (pure)', () => {
    const before = structuredClone(create);
    decorateRequest({ headers: { 'X-A': { value: '1' } }, query: { 'api-version': '2024-01-01' } }, create, facts);
    expect(create).toEqual(before);
  });

  it('refuses a header value with a line break, naming the header and not the value; nothing would be sent', () => {
    const result = decorateRequest({ headers: { 'X-Note': { value: 'a\r\nX-Evil: 1' } } }, status, facts);
    expect(result).toMatchObject({ kind: 'refused', errorCategory: 'invalid_input' });
    const problem = (result as Extract<BuildResult, { kind: 'refused' }>).problem;
    expect(problem).toContain('x-note');
    expect(problem).not.toContain('X-Evil');
    expect(
      decorateRequest({ headers: { 'X-Ref': { from: 'client_reference' } } }, status, {
        ...facts,
        clientReference: 'a\nb',
      }).kind,
    ).toBe('refused');
  });

  it('refuses a reserved header even if a contract slipped one through (defence in depth)', () => {
    expect(decorateRequest({ headers: { Cookie: { value: 'a=1' } } }, status, facts)).toMatchObject({
      kind: 'refused',
      errorCategory: 'invalid_input',
    });
  });

  it('appends query parameters to every URL, including one with its own query', () => {
    const query = { 'api-version': '2024-01-01', 'x y': 'a&b=c' };
    expect(requestOf(decorateRequest({ query }, status, facts)).url).toBe(
      'https://api.example.test/v1/jobs/job_1?api-version=2024-01-01&x%20y=a%26b%3Dc',
    );
    const poll = { ...status, url: 'https://api.example.test/operations/1?page=2' };
    expect(requestOf(decorateRequest({ query: { 'api-version': '2024-01-01' } }, poll, facts)).url).toBe(
      'https://api.example.test/operations/1?page=2&api-version=2024-01-01',
    );
  });
});

describe('withQuery', () => {
  it('keeps a parameter the URL already has, as it is, and adds only the missing ones', () => {
    expect(withQuery('https://a.test/op/1?api-version=2023-05-01', { 'api-version': '2024-01-01', other: '1' })).toBe(
      'https://a.test/op/1?api-version=2023-05-01&other=1',
    );
    expect(withQuery('https://a.test/op/1?api%2Dversion=x', { 'api-version': 'y' })).toBe(
      'https://a.test/op/1?api%2Dversion=x',
    );
    expect(withQuery('https://a.test/op/1?flag&api-version', { 'api-version': 'y', flag: '1' })).toBe(
      'https://a.test/op/1?flag&api-version',
    );
  });

  it('never re-encodes or reorders the existing query, and keeps a fragment last', () => {
    expect(withQuery('https://a.test/x?b=%20+&a=1', { c: '2' })).toBe('https://a.test/x?b=%20+&a=1&c=2');
    expect(withQuery('https://a.test/x?', { c: '2' })).toBe('https://a.test/x?c=2');
    expect(withQuery('https://a.test/x?a=1&', { c: '2' })).toBe('https://a.test/x?a=1&c=2');
    expect(withQuery('https://a.test/x#frag', { c: '2' })).toBe('https://a.test/x?c=2#frag');
    expect(withQuery('https://a.test/x', undefined)).toBe('https://a.test/x');
  });
});

describe('decorateBuilt', () => {
  it('passes refusals and contract-less providers through unchanged', () => {
    const refused: BuildResult = { kind: 'refused', errorCategory: 'missing_input', problem: 'no job ID' };
    expect(decorateBuilt({ headers: { 'X-A': { value: '1' } } }, refused, facts)).toBe(refused);
    const built: BuildResult = { kind: 'request', request: status };
    expect(decorateBuilt(undefined, built, facts)).toBe(built);
    expect(decorateBuilt({}, built, facts)).toBe(built);
    expect(requestOf(decorateBuilt({ query: { v: '1' } }, built, facts)).url).toBe(`${status.url}?v=1`);
  });
});
