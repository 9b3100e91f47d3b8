import { describe, expect, it } from 'vitest';
import {
  adapterFromContract,
  buildCancelRequest,
  buildCreateRequest,
  buildReconcileRequest,
  buildResultRequest,
  buildStatusRequest,
  parseProviderContract,
  refusedObservation,
  BUILT_IN_PRESETS,
} from '../../../src/adapters/providers';
import { observationSchema } from '../../../src/core/observation';
import { BASE, preset } from './helpers';

const rest = preset('rest');
const lro = preset('lro');
const ol = preset('operation-location');
const NOW = Date.UTC(2026, 10, 29, 10, 20, 31);
const TOKEN = 'tok_0123456789abcdef0123456789abcdef';

function request(result: ReturnType<typeof buildCreateRequest>) {
  if (result.kind !== 'request') throw new Error(`refused: ${result.problem}`);
  return result.request;
}

describe('building requests', () => {
  it('I1: rest sends the token in Idempotency-Key and the reference in the body', () => {
    const r = request(
      buildCreateRequest(rest, { payload: { report: 'q3' }, token: TOKEN, clientReference: 'op-1', nowMs: NOW }),
    );
    expect(r).toEqual({
      method: 'POST',
      url: `${BASE}/v1/jobs`,
      headers: { accept: 'application/json', 'content-type': 'application/json', 'idempotency-key': TOKEN },
      json: { report: 'q3', client_reference: 'op-1' },
    });
  });

  it('I1: lro sends the token as request_id in the body, never in a header', () => {
    const r = request(buildCreateRequest(lro, { payload: { report: 'q3' }, token: TOKEN, nowMs: NOW }));
    expect(r.url).toBe(`${BASE}/v1/operations:start`);
    expect(r.json).toEqual({ report: 'q3', request_id: TOKEN });
    expect(Object.values(r.headers)).not.toContain(TOKEN);
  });

  it('I1, I3: operation-location sends Repeatability headers; a resend keeps the first-sent date', () => {
    const first = request(buildCreateRequest(ol, { payload: { doc: 1 }, token: TOKEN, nowMs: NOW }));
    expect(first.headers['repeatability-request-id']).toBe(TOKEN);
    expect(first.headers['repeatability-first-sent']).toBe('Sun, 29 Nov 2026 10:20:31 GMT');
    const again = request(
      buildCreateRequest(ol, { payload: { doc: 1 }, token: TOKEN, nowMs: NOW + 60_000, firstSentAtMs: NOW }),
    );
    expect(again).toEqual(first);
  });

  it('I2: a payload that already holds the reserved token field with another value is refused', () => {
    const result = buildCreateRequest(lro, { payload: { request_id: 'other' }, token: TOKEN, nowMs: NOW });
    expect(result).toEqual({
      kind: 'refused',
      errorCategory: 'invalid_input',
      problem: 'the payload already has a different "request_id", which the contract reserves',
    });
  });

  it('refuses a token with a line break (header injection)', () => {
    expect(buildCreateRequest(rest, { payload: {}, token: 'a\r\nx: y', clientReference: 'op', nowMs: NOW }).kind).toBe(
      'refused',
    );
  });

  it('T4: no request carries a credential; the HTTP layer adds it', () => {
    const all = [
      buildCreateRequest(rest, { payload: {}, token: TOKEN, clientReference: 'op-1', nowMs: NOW }),
      buildStatusRequest(rest, { jobId: 'j' }),
      buildCancelRequest(rest, { jobId: 'j' }),
      buildResultRequest(rest, { jobId: 'j' }),
      buildReconcileRequest(rest, { clientReference: 'op-1', nowMs: NOW }),
    ];
    for (const result of all) expect(Object.keys(request(result).headers)).not.toContain('authorization');
  });

  it('C4: the status URL from the create answer is used when on the origin', () => {
    expect(request(buildStatusRequest(ol, { jobId: 'abc', statusUrl: `${BASE}/v1/operations/abc` })).url).toBe(
      `${BASE}/v1/operations/abc`,
    );
  });

  it('C4: a status URL on another origin is refused, never requested', () => {
    const result = buildStatusRequest(ol, { jobId: 'abc', statusUrl: 'https://evil.example/v1/operations/abc' });
    expect(result).toMatchObject({ kind: 'refused', errorCategory: 'foreign_origin' });
    if (result.kind !== 'refused') throw new Error('expected refusal');
    const observation = observationSchema.parse(refusedObservation('status', result, NOW));
    expect(observation).toMatchObject({ transport: 'refused', errorCategory: 'foreign_origin' });
  });

  it('C4: a result URL on another origin or scheme is refused', () => {
    expect(buildResultRequest(lro, { resultUrl: 'http://10.0.0.1/x' })).toMatchObject({
      kind: 'refused',
      errorCategory: 'foreign_origin',
    });
    expect(buildResultRequest(lro, { resultUrl: 'file:///etc/passwd' })).toMatchObject({
      kind: 'refused',
      errorCategory: 'invalid_url',
    });
    expect(buildResultRequest(lro, { jobId: 'op-1' })).toMatchObject({
      kind: 'refused',
      errorCategory: 'missing_input',
    });
  });

  it('job IDs are percent-encoded so they stay one path segment', () => {
    expect(request(buildStatusRequest(rest, { jobId: '../admin?x=1' })).url).toBe(`${BASE}/v1/jobs/..%2Fadmin%3Fx%3D1`);
    expect(request(buildCancelRequest(lro, { jobId: 'op-1' }))).toMatchObject({
      method: 'POST',
      url: `${BASE}/v1/operations/op-1:cancel`,
    });
    expect(request(buildCancelRequest(ol, { jobId: 'abc' }))).toMatchObject({
      method: 'DELETE',
      url: `${BASE}/v1/operations/abc`,
    });
  });

  it('keeps a path prefix of baseUrl', () => {
    const contract = parseProviderContract(structuredClone(BUILT_IN_PRESETS.rest), 'rest', {
      baseUrl: 'https://api.example.com/reports/',
    });
    expect(request(buildStatusRequest(contract, { jobId: 'j' })).url).toBe('https://api.example.com/reports/v1/jobs/j');
  });

  it('U2: reconciliation requests per dialect', () => {
    expect(request(buildReconcileRequest(rest, { clientReference: 'op 1', nowMs: NOW })).url).toBe(
      `${BASE}/v1/jobs?client_reference=op%201`,
    );
    expect(request(buildReconcileRequest(lro, { token: TOKEN, nowMs: NOW })).url).toBe(
      `${BASE}/v1/operations?request_id=${TOKEN}`,
    );
    const resend = request(buildReconcileRequest(ol, { token: TOKEN, payload: { doc: 1 }, nowMs: NOW }));
    expect(resend).toMatchObject({ method: 'POST', url: `${BASE}/v1/analyze`, json: { doc: 1 } });
    expect(buildReconcileRequest(ol, { token: TOKEN, nowMs: NOW })).toMatchObject({
      kind: 'refused',
      errorCategory: 'missing_input',
    });
  });

  it('U2: a provider without reconciliation or cancel refuses as unsupported', () => {
    const doc = structuredClone(BUILT_IN_PRESETS.rest) as Record<string, unknown>;
    doc.reconciliation = { method: 'none' };
    delete doc.cancel;
    const adapter = adapterFromContract(parseProviderContract(doc, 'bare', { baseUrl: BASE }));
    expect(adapter.buildReconcileRequest({ clientReference: 'op', nowMs: NOW })).toMatchObject({
      kind: 'refused',
      errorCategory: 'unsupported',
    });
    expect(adapter.buildCancelRequest({ jobId: 'j' })).toMatchObject({ kind: 'refused', errorCategory: 'unsupported' });
    expect(adapter.cancel).toEqual({ supported: false });
    // The rest preset's create carries an idempotency token: re-sending it cannot start a second job (E3).
    expect(adapter.capabilities).toEqual({ cancel: false, repeatableCollect: true, sameTokenResend: true });
  });
});
