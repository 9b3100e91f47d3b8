import { describe, expect, it } from 'vitest';
import { interpretCancel, interpretCreate, interpretReconcile, interpretStatus } from '../../../src/adapters/providers';
import { answer, BASE, preset, valid } from './helpers';

const lro = preset('lro');
const op = (extra: Record<string, unknown>): Record<string, unknown> => ({
  name: 'operations/op-1',
  done: false,
  metadata: { state: 'RUNNING', progress_percent: 25, update_time: '2026-11-29T10:20:31Z' },
  ...extra,
});

describe('lro dialect', () => {
  it('C2: a 200 operation is accepted; the job ID drops the operations/ prefix', () => {
    const o = valid(
      interpretCreate(
        lro,
        answer(200, {
          json: op({ metadata: { state: 'PENDING', progress_percent: 0, update_time: '2026-11-29T10:20:31Z' } }),
        }),
      ),
    );
    expect(o).toMatchObject({
      httpStatus: 200,
      remoteJobId: 'op-1',
      remoteState: 'PENDING',
      category: 'pending',
      progress: 0,
    });
    expect(o.statusUrl).toBeUndefined();
    expect(o.parseProblem).toBeUndefined();
  });

  it('I2: 409 ABORTED for a reused request_id keeps the provider error', () => {
    const o = valid(
      interpretCreate(
        lro,
        answer(409, { json: { error: { code: 409, status: 'ABORTED', message: 'request_id reused' } } }),
      ),
    );
    expect(o).toMatchObject({
      errorCategory: 'http_4xx',
      providerError: { code: '409', message: 'request_id reused' },
    });
  });

  it('P1: done false with RUNNING is pending', () => {
    const o = valid(interpretStatus(lro, answer(200, { json: op({}) }), { jobId: 'op-1' }));
    expect(o).toMatchObject({
      remoteState: 'RUNNING',
      category: 'pending',
      progress: 0.25,
      providerTimestamp: '2026-11-29T10:20:31Z',
    });
  });

  it('S1, R2: done with a response is success with its result reference and integrity data', () => {
    const sha = 'c'.repeat(64);
    const o = valid(
      interpretStatus(
        lro,
        answer(200, {
          json: op({
            done: true,
            metadata: { state: 'SUCCEEDED', progress_percent: 100 },
            response: { result_uri: `${BASE}/v1/results/op-1`, sha256: sha, size_bytes: 2048, record_count: 12 },
          }),
        }),
        { jobId: 'op-1' },
      ),
    );
    expect(o).toMatchObject({
      category: 'success',
      resultReference: { url: `${BASE}/v1/results/op-1`, sha256: sha, sizeBytes: 2048, recordCount: 12 },
    });
    expect(o.parseProblem).toBeUndefined();
  });

  it('S2: done with an error is failure with the provider error', () => {
    const o = valid(
      interpretStatus(
        lro,
        answer(200, {
          json: op({ done: true, metadata: { state: 'FAILED' }, error: { code: 3, message: 'invalid argument' } }),
        }),
      ),
    );
    expect(o).toMatchObject({
      remoteState: 'FAILED',
      category: 'failure',
      providerError: { code: '3', message: 'invalid argument' },
    });
  });

  it('X2: done with error.code 1 is cancelled, even without a state word', () => {
    const o = valid(
      interpretStatus(
        lro,
        answer(200, { json: { name: 'operations/op-1', done: true, error: { code: 1, message: 'CANCELLED' } } }),
      ),
    );
    expect(o).toMatchObject({ remoteState: 'done:cancelled', category: 'cancelled' });
  });

  it('P7: SUCCEEDED without a response (done false) is a contradiction: unknown', () => {
    expect(interpretStatus(lro, answer(200, { json: op({ metadata: { state: 'SUCCEEDED' } }) })).category).toBe(
      'unknown',
    );
  });

  it('P7: done with a response but no result_uri is not ready', () => {
    const o = valid(
      interpretStatus(
        lro,
        answer(200, { json: op({ done: true, metadata: { state: 'SUCCEEDED' }, response: { size_bytes: 3 } }) }),
      ),
    );
    expect(o.category).toBe('success');
    expect(o.resultReference?.url).toBeUndefined();
    expect(o.parseProblem).toContain('without a result reference (field response.result_uri) is not ready');
  });

  it('P1: an unlisted state while not done is unknown', () => {
    expect(interpretStatus(lro, answer(200, { json: op({ metadata: { state: 'PAUSED' } }) })).category).toBe('unknown');
  });

  it('F8: done that is not a boolean is named', () => {
    const o = valid(interpretStatus(lro, answer(200, { json: op({ done: 'yes' }) })));
    expect(o.parseProblem).toBe('field done is not a boolean');
    expect(o.category).toBeUndefined();
  });

  it('R2: a sha256 that is not 64 hex characters is named', () => {
    const o = interpretStatus(
      lro,
      answer(200, { json: op({ done: true, response: { result_uri: '/r', sha256: 'xyz' } }) }),
    );
    expect(o.parseProblem).toContain('field response.sha256 is not a hex SHA-256');
    expect(o.resultReference?.sha256).toBeUndefined();
  });

  it('X1: 200 {} to cancel is accepted with no state claimed', () => {
    const o = valid(interpretCancel(lro, answer(200, { json: {} }), { jobId: 'op-1' }));
    expect(o).toMatchObject({ action: 'cancel', httpStatus: 200, remoteJobId: 'op-1' });
    expect(o.category).toBeUndefined();
    expect(o.errorCategory).toBeUndefined();
    expect(o.parseProblem).toBeUndefined();
  });

  it('U2: lookup by token finds the operation', () => {
    const { observation, matches } = interpretReconcile(lro, answer(200, { json: { operations: [op({})] } }));
    expect(matches).toEqual([{ remoteJobId: 'op-1', remoteState: 'RUNNING', category: 'pending' }]);
    expect(observation.remoteJobId).toBe('op-1');
  });
});
