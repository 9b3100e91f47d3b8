import { describe, expect, it } from 'vitest';
import {
  interpretCancel,
  interpretCreate,
  interpretReconcile,
  interpretStatus,
  readResultIntegrity,
} from '../../../src/adapters/providers';
import { answer, BASE, preset, valid } from './helpers';

const ol = preset('operation-location');

describe('operation-location dialect', () => {
  it('H2: 202 + Operation-Location + Retry-After with an empty body is accepted', () => {
    const o = valid(
      interpretCreate(
        ol,
        answer(202, { headers: { 'operation-location': `${BASE}/v1/operations/abc-1`, 'retry-after': '2' } }),
      ),
    );
    expect(o).toMatchObject({
      httpStatus: 202,
      remoteJobId: 'abc-1',
      statusUrl: `${BASE}/v1/operations/abc-1`,
      retryAfter: '2',
      category: 'pending',
    });
    expect(o.remoteState).toBeUndefined();
    expect(o.parseProblem).toBeUndefined();
  });

  it('C2: a 202 without Operation-Location proves nothing', () => {
    const o = valid(interpretCreate(ol, answer(202, {})));
    expect(o.remoteJobId).toBeUndefined();
    expect(o.category).toBeUndefined();
    expect(o.parseProblem).toContain('no job ID');
  });

  it('C4: an Operation-Location on another origin is refused', () => {
    const o = valid(
      interpretCreate(
        ol,
        answer(202, { headers: { 'operation-location': 'http://169.254.169.254/v1/operations/abc-1' } }),
      ),
    );
    expect(o).toMatchObject({ errorCategory: 'foreign_origin', remoteJobId: 'abc-1' });
    expect(o.statusUrl).toBeUndefined();
    expect(o.category).toBeUndefined();
  });

  it('C4: a port change is another origin', () => {
    const o = interpretCreate(
      ol,
      answer(202, { headers: { 'operation-location': 'http://127.0.0.1:4011/v1/operations/abc-1' } }),
    );
    expect(o.errorCategory).toBe('foreign_origin');
  });

  it('C2: a 200 is not an accepted answer in this dialect', () => {
    expect(interpretCreate(ol, answer(200, { json: {} })).errorCategory).toBe('http_unexpected');
  });

  it('P3: a running status keeps Retry-After and percentCompleted', () => {
    const o = valid(
      interpretStatus(
        ol,
        answer(200, {
          headers: { 'retry-after': '5' },
          json: {
            id: 'abc-1',
            status: 'Running',
            createdDateTime: '2026-11-29T10:00:00Z',
            lastUpdatedDateTime: '2026-11-29T10:01:00Z',
            percentCompleted: 60,
          },
        }),
        { jobId: 'abc-1' },
      ),
    );
    expect(o).toMatchObject({
      remoteState: 'Running',
      category: 'pending',
      retryAfter: '5',
      progress: 0.6,
      providerTimestamp: '2026-11-29T10:01:00Z',
    });
  });

  it('R1: Succeeded carries resourceLocation on the same origin', () => {
    const o = valid(
      interpretStatus(
        ol,
        answer(200, { json: { id: 'abc-1', status: 'Succeeded', resourceLocation: `${BASE}/v1/results/abc-1` } }),
      ),
    );
    expect(o).toMatchObject({ category: 'success', resultReference: { url: `${BASE}/v1/results/abc-1` } });
  });

  it.each([
    ['NotStarted', 'pending'],
    ['Failed', 'failure'],
    ['Canceled', 'cancelled'],
    ['Cancelled', 'unknown'],
  ] as const)('P1: %s is %s', (status, category) => {
    expect(interpretStatus(ol, answer(200, { json: { id: 'abc-1', status } })).category).toBe(category);
  });

  it('X3: a DELETE answered 409 after the job is final is a 4xx fact', () => {
    const o = valid(
      interpretCancel(ol, answer(409, { json: { error: { code: 'Conflict', message: 'already final' } } })),
    );
    expect(o).toMatchObject({ errorCategory: 'http_4xx', providerError: { code: 'Conflict' } });
  });

  it('X1: 202 to DELETE is accepted', () => {
    const o = valid(interpretCancel(ol, answer(202, {})));
    expect(o.errorCategory).toBeUndefined();
    expect(o.parseProblem).toBeUndefined();
  });

  it('U2: a same-token resend is reconciled as a create answer', () => {
    const { observation, matches } = interpretReconcile(
      ol,
      answer(202, {
        headers: { 'operation-location': `${BASE}/v1/operations/abc-1`, 'repeatability-result': 'accepted' },
      }),
    );
    expect(observation.action).toBe('reconcile');
    expect(matches).toEqual([{ remoteJobId: 'abc-1', remoteState: undefined, category: 'pending' }]);
  });

  it('R2: a base64 x-ms-content-sha256 is normalised to hex', () => {
    const hex = 'ab'.repeat(32);
    const b64 = Buffer.from(hex, 'hex').toString('base64');
    expect(readResultIntegrity(ol, { 'x-ms-content-sha256': b64, 'content-length': '9' })).toMatchObject({
      sha256: hex,
      sizeBytes: 9,
      problems: [],
    });
    expect(readResultIntegrity(ol, { 'x-ms-content-sha256': 'AAAA' }).problems).toEqual([
      'header x-ms-content-sha256 is not a base64 SHA-256',
    ]);
  });
});
