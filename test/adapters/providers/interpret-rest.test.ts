import { describe, expect, it } from 'vitest';
import {
  countBatchItems,
  interpretCancel,
  interpretCreate,
  interpretReconcile,
  interpretStatus,
  readResultIntegrity,
} from '../../../src/adapters/providers';
import { BASE, answer, preset, valid } from './helpers';

const rest = preset('rest');
const created = { job_id: 'job-7', state: 'queued', status_url: `${BASE}/v1/jobs/job-7` };

describe('rest dialect: create', () => {
  it('C2, H2: 202 + Location names the job and its status URL', () => {
    const o = valid(interpretCreate(rest, answer(202, { headers: { location: '/v1/jobs/job-7' }, json: created })));
    expect(o).toMatchObject({
      action: 'create',
      transport: 'response',
      httpStatus: 202,
      remoteJobId: 'job-7',
      statusUrl: `${BASE}/v1/jobs/job-7`,
      remoteState: 'queued',
      category: 'pending',
      providerRequestId: 'req-1',
    });
    expect(o.parseProblem).toBeUndefined();
  });

  it('C3: a synchronous 200 success carries its result inline', () => {
    const o = valid(
      interpretCreate(rest, answer(200, { json: { job_id: 'job-8', state: 'succeeded', result: { rows: 3 } } })),
    );
    expect(o).toMatchObject({
      httpStatus: 200,
      remoteJobId: 'job-8',
      category: 'success',
      resultReference: { inline: { rows: 3 } },
    });
    expect(o.parseProblem).toBeUndefined();
  });

  it('C3: a synchronous success without its result field is not ready', () => {
    const o = valid(interpretCreate(rest, answer(200, { json: { job_id: 'job-8', state: 'succeeded' } })));
    expect(o.category).toBe('success');
    expect(o.parseProblem).toContain('inline field result');
  });

  it('R2: an inline result larger than maxInlineBytes is not carried', () => {
    const small = { ...rest, result: { ...rest.result, maxInlineBytes: 65_536 } };
    const o = valid(
      interpretCreate(small, answer(200, { json: { job_id: 'j', state: 'succeeded', result: 'x'.repeat(70_000) } })),
    );
    expect(o.resultReference?.inline).toBeUndefined();
    expect(o.parseProblem).toContain('maxInlineBytes');
  });

  it('I2: 422 idempotency_key_reused is a refusal with the provider error, not a job', () => {
    const o = valid(
      interpretCreate(
        rest,
        answer(422, { json: { error: { code: 'idempotency_key_reused', message: 'key reused with another body' } } }),
      ),
    );
    expect(o).toMatchObject({
      httpStatus: 422,
      errorCategory: 'http_4xx',
      providerError: { code: 'idempotency_key_reused', message: 'key reused with another body' },
    });
    expect(o.remoteJobId).toBeUndefined();
    expect(o.category).toBeUndefined();
  });

  it('H4: 401 is auth_denied', () => {
    const o = valid(interpretCreate(rest, answer(401, { json: { error: { code: 'unauthenticated' } } })));
    expect(o).toMatchObject({ errorCategory: 'auth_denied', providerError: { code: 'unauthenticated' } });
  });

  it('C2: a 202 without a job ID proves nothing', () => {
    const o = valid(interpretCreate(rest, answer(202, { json: { state: 'queued' } })));
    expect(o.remoteJobId).toBeUndefined();
    expect(o.category).toBeUndefined();
    expect(o.parseProblem).toContain(
      'no job ID in the answer (body field job_id, header location, body field status_url missing)',
    );
  });

  it('C2: a 202 naming the job without a state word is accepted and polled: its state is unknown until the first status read', () => {
    const o = valid(interpretCreate(rest, answer(202, { json: { job_id: 'job-7' } })));
    expect(o).toMatchObject({ remoteJobId: 'job-7', category: 'pending' });
    expect(o.remoteState).not.toBe('succeeded');
    expect(o.resultReference).toBeUndefined();
    expect(o.parseProblem).toBeUndefined();
  });

  it('C2: a 201 naming the job by its Location alone, with an empty body, is accepted and polled there', () => {
    const o = valid(interpretCreate(rest, answer(201, { headers: { location: '/v1/jobs/job-9' } })));
    expect(o).toMatchObject({ remoteJobId: 'job-9', statusUrl: `${BASE}/v1/jobs/job-9`, category: 'pending' });
    expect(o.parseProblem).toBeUndefined();
  });

  it('C2: a state word of the wrong type is still a problem, even beside a job ID (never read as pending)', () => {
    const o = valid(interpretCreate(rest, answer(202, { json: { job_id: 'job-7', state: 5 } })));
    expect(o.remoteJobId).toBe('job-7');
    expect(o.category).toBeUndefined();
    expect(o.parseProblem).toContain('field state is not a string');
  });

  it('C2, C3: a 200 naming the job without a state word is accepted and polled, never a synchronous success', () => {
    const o = valid(interpretCreate(rest, answer(200, { json: { job_id: 'job-8', result: { rows: 3 } } })));
    expect(o).toMatchObject({ remoteJobId: 'job-8', category: 'pending' });
    expect(o.resultReference).toBeUndefined();
  });

  it('F8: a mistyped job ID is named', () => {
    const o = valid(interpretCreate(rest, answer(202, { json: { job_id: { id: 1 }, state: 'queued' } })));
    expect(o.parseProblem).toContain('body field job_id is not a string');
    expect(o.category).toBeUndefined();
  });

  it('C4: a Location on another origin is never followed', () => {
    const o = valid(
      interpretCreate(
        rest,
        answer(202, { headers: { location: 'https://evil.example/v1/jobs/job-7' }, json: created }),
      ),
    );
    expect(o.errorCategory).toBe('foreign_origin');
    expect(o.statusUrl).toBeUndefined();
    expect(o.parseProblem).toContain('another origin (evil.example)');
    expect(o.remoteJobId).toBe('job-7');
    expect(o.category).toBeUndefined();
  });

  it('F8: an HTML page in a 202 is a parse problem', () => {
    const o = valid(
      interpretCreate(
        rest,
        answer(202, { text: '<!DOCTYPE html><html>oops</html>', headers: { 'content-type': 'text/html' } }),
      ),
    );
    expect(o.parseProblem).toContain('HTML page');
    expect(o.category).toBeUndefined();
  });
});

describe('rest dialect: status', () => {
  const running = {
    job_id: 'job-7',
    state: 'running',
    updated_at: '2026-11-29T10:20:31Z',
    progress: 40,
    poll_after_seconds: 30,
    next_check_at: '2026-11-29T10:21:01Z',
    expires_at: '2026-11-30T10:00:00Z',
  };

  it('P6, P8: 200 running is pending, with progress as a fraction and raw hints', () => {
    const o = valid(interpretStatus(rest, answer(200, { json: running }), { jobId: 'job-7' }));
    expect(o).toMatchObject({
      action: 'status',
      remoteJobId: 'job-7',
      remoteState: 'running',
      category: 'pending',
      progress: 0.4,
      providerTimestamp: '2026-11-29T10:20:31Z',
      expiresAt: '2026-11-30T10:00:00Z',
      hints: { pollAfterSeconds: 30, nextCheckAt: '2026-11-29T10:21:01Z' },
    });
  });

  it('P8: progress 100 while running is still pending', () => {
    expect(interpretStatus(rest, answer(200, { json: { ...running, progress: 100 } })).category).toBe('pending');
  });

  it('R1: succeeded carries the result URL from the answer', () => {
    const o = valid(
      interpretStatus(
        rest,
        answer(200, { json: { job_id: 'job-7', state: 'succeeded', result_url: '/v1/jobs/job-7/result' } }),
        { jobId: 'job-7' },
      ),
    );
    expect(o).toMatchObject({ category: 'success', resultReference: { url: `${BASE}/v1/jobs/job-7/result` } });
  });

  it('R1: succeeded without result_url falls back to the documented template', () => {
    const o = valid(
      interpretStatus(rest, answer(200, { json: { job_id: 'job-7', state: 'succeeded' } }), { jobId: 'job/7' }),
    );
    expect(o.resultReference?.url).toBe(`${BASE}/v1/jobs/job%2F7/result`);
  });

  it('C4: a result URL on another origin is dropped and flagged', () => {
    const o = valid(
      interpretStatus(
        rest,
        answer(200, { json: { job_id: 'job-7', state: 'succeeded', result_url: 'http://127.0.0.1:9999/steal' } }),
        { jobId: 'job-7' },
      ),
    );
    expect(o.errorCategory).toBe('foreign_origin');
    expect(o.resultReference?.url).toBeUndefined();
  });

  it('S2: failed keeps the provider error', () => {
    const o = valid(
      interpretStatus(
        rest,
        answer(200, { json: { job_id: 'job-7', state: 'failed', error: { code: 'bad_input', message: 'row 3' } } }),
      ),
    );
    expect(o).toMatchObject({ category: 'failure', providerError: { code: 'bad_input', message: 'row 3' } });
  });

  it.each([
    ['cancelled', 'cancelled'],
    ['expired', 'expired'],
    ['queued', 'pending'],
    ['manual_review', 'unknown'],
    ['Succeeded', 'unknown'],
  ] as const)('P1: state %s is %s', (state, category) => {
    expect(valid(interpretStatus(rest, answer(200, { json: { job_id: 'j', state } }))).category).toBe(category);
  });

  it('H3: 404 is not_found with the job ID kept', () => {
    const o = valid(interpretStatus(rest, answer(404, { json: { error: { code: 'not_found' } } }), { jobId: 'job-7' }));
    expect(o).toMatchObject({ httpStatus: 404, errorCategory: 'not_found', remoteJobId: 'job-7' });
    expect(o.category).toBeUndefined();
  });

  it('H1: 429 keeps Retry-After', () => {
    const o = valid(interpretStatus(rest, answer(429, { headers: { 'retry-after': '7' } })));
    expect(o).toMatchObject({ errorCategory: 'rate_limited', retryAfter: '7' });
  });

  it('H1, H5: 503 with an HTTP-date Retry-After and an HTML page is a 5xx fact, not a parse problem', () => {
    const o = valid(
      interpretStatus(
        rest,
        answer(503, {
          headers: { 'retry-after': 'Sun, 29 Nov 2026 10:22:31 GMT', 'content-type': 'text/html' },
          text: '<html>Service Unavailable</html>',
        }),
      ),
    );
    expect(o).toMatchObject({
      httpStatus: 503,
      errorCategory: 'http_5xx',
      retryAfter: 'Sun, 29 Nov 2026 10:22:31 GMT',
      providerError: { message: 'an HTML error page' },
    });
    expect(o.parseProblem).toBeUndefined();
  });

  it('S2, F8: a 200 that is not JSON is a parse problem without a category', () => {
    const o = valid(interpretStatus(rest, answer(200, { text: 'OK', headers: { 'content-type': 'text/plain' } })));
    expect(o.parseProblem).toBe('the body is not JSON (text/plain)');
    expect(o.category).toBeUndefined();
  });

  it('S2, F8: a truncated JSON body is a parse problem', () => {
    const o = valid(
      interpretStatus(rest, answer(200, { text: '{"state":"runn', parseError: 'Unexpected end of JSON input' })),
    );
    expect(o.parseProblem).toContain('not valid JSON');
  });

  it('F8: mistyped fields are named; a readable state is still classified', () => {
    const o = valid(
      interpretStatus(rest, answer(200, { json: { job_id: 'j', state: 'running', progress: '40%', updated_at: 17 } })),
    );
    expect(o.category).toBe('pending');
    expect(o.progress).toBeUndefined();
    expect(o.parseProblem).toContain('field progress is not a number in 0..100');
    expect(o.parseProblem).toContain('field updated_at is not a string');
  });

  it('F8: a mistyped or missing state is named and not classified', () => {
    expect(interpretStatus(rest, answer(200, { json: { job_id: 'j', state: 3 } }))).toMatchObject({
      parseProblem: 'field state is not a string',
    });
    const missing = interpretStatus(rest, answer(200, { json: { job_id: 'j' } }));
    expect(missing.parseProblem).toBe('field state is missing');
    expect(missing.category).toBeUndefined();
  });

  it('F8: huge strings are cut to the observation limits', () => {
    const o = valid(
      interpretStatus(
        rest,
        answer(200, {
          json: { state: 'x'.repeat(10_000), error: { code: 'c'.repeat(1000), message: 'm'.repeat(10_000) } },
        }),
      ),
    );
    expect(o.remoteState?.length).toBe(500);
    expect(o.category).toBe('unknown');
    expect(o.providerError?.code?.length).toBe(200);
  });
});

describe('rest dialect: cancel, reconcile, result', () => {
  it('X1: 202 cancelling is recorded, and is not a cancellation', () => {
    const o = valid(
      interpretCancel(rest, answer(202, { json: { job_id: 'job-7', state: 'cancelling' } }), { jobId: 'job-7' }),
    );
    expect(o).toMatchObject({ action: 'cancel', httpStatus: 202, remoteState: 'cancelling', category: 'pending' });
    expect(o.errorCategory).toBeUndefined();
  });

  it.each([501, 405])(
    'X1: a cancel answered %i is the signal unsupported: the provider does not support cancel for this job',
    (status) => {
      const o = valid(
        interpretCancel(rest, answer(status, { json: { error: { code: 'NotSupported', message: 'no cancel' } } }), {
          jobId: 'job-7',
        }),
      );
      expect(o).toMatchObject({
        action: 'cancel',
        httpStatus: status,
        signal: 'unsupported',
        errorCategory: 'unsupported',
        remoteJobId: 'job-7',
        providerError: { code: 'NotSupported', message: 'no cancel' },
      });
      expect(o.category).toBeUndefined();
    },
  );

  it('X1: other refusals keep their HTTP category (a 500 or a 404 is not unsupported)', () => {
    expect(valid(interpretCancel(rest, answer(500))).errorCategory).toBe('http_5xx');
    expect(valid(interpretCancel(rest, answer(404))).errorCategory).toBe('not_found');
  });

  it('X2: 409 already_terminal keeps the final state the provider reports', () => {
    const o = valid(
      interpretCancel(rest, answer(409, { json: { error: { code: 'already_terminal' }, state: 'succeeded' } })),
    );
    expect(o).toMatchObject({
      errorCategory: 'http_4xx',
      providerError: { code: 'already_terminal' },
      remoteState: 'succeeded',
      category: 'success',
    });
  });

  it('U2: list by client reference returns the matching job', () => {
    const { observation, matches } = interpretReconcile(
      rest,
      answer(200, { json: { jobs: [{ job_id: 'job-7', state: 'running', created_at: '2026-11-29T10:00:00Z' }] } }),
    );
    valid(observation);
    expect(matches).toEqual([
      { remoteJobId: 'job-7', remoteState: 'running', category: 'pending', createdAt: '2026-11-29T10:00:00Z' },
    ]);
    expect(observation).toMatchObject({ action: 'reconcile', remoteJobId: 'job-7', category: 'pending' });
  });

  it('U2: an empty list is no match (the create never arrived)', () => {
    const { observation, matches } = interpretReconcile(rest, answer(200, { json: { jobs: [] } }));
    expect(matches).toEqual([]);
    expect(observation.remoteJobId).toBeUndefined();
    expect(observation.parseProblem).toBeUndefined();
  });

  it('U3: two jobs for one reference are multiple_matches', () => {
    const { observation, matches } = interpretReconcile(
      rest,
      answer(200, {
        json: {
          jobs: [
            { job_id: 'a', state: 'running' },
            { job_id: 'b', state: 'queued' },
          ],
        },
      }),
    );
    expect(matches.map((m) => m.remoteJobId)).toEqual(['a', 'b']);
    expect(observation.errorCategory).toBe('multiple_matches');
    expect(observation.remoteJobId).toBeUndefined();
  });

  it('F8: a list field that is not an array is named', () => {
    const { observation } = interpretReconcile(rest, answer(200, { json: { jobs: { a: 1 } } }));
    expect(observation.parseProblem).toBe('field jobs is not an array');
  });

  it('R2: result headers give hex SHA-256, size and record count', () => {
    const sha = 'AB'.repeat(32);
    expect(
      readResultIntegrity(rest, {
        'x-content-sha256': sha,
        'content-length': '120',
        'x-record-count': '3',
        'content-type': 'application/json',
      }),
    ).toEqual({
      sha256: sha.toLowerCase(),
      sizeBytes: 120,
      recordCount: 3,
      contentType: 'application/json',
      contentTypeAccepted: true,
      problems: [],
    });
    expect(readResultIntegrity(rest, { 'x-content-sha256': 'nothex', 'x-record-count': '-1' }).problems).toEqual([
      'header x-content-sha256 is not a hex SHA-256',
      'header x-record-count is not a non-negative integer',
    ]);
  });

  it('R3: batch items are counted and failed items listed', () => {
    const count = countBatchItems(rest, {
      items: [{ id: 'a', status: 'ok' }, { id: 'b', status: 'failed' }, { id: 'c', status: 'ok' }, { id: 'd' }],
    });
    expect(count).toEqual({
      total: 4,
      succeeded: 2,
      failed: 2,
      failedItemIds: ['b', 'd'],
      failedIdsTruncated: false,
      problems: ['items[3].status is missing or not a string'],
    });
  });
});
