/**
 * Reconciliation by lookup (U2): one request naming our operation, a 2xx naming the job = found, an answer the
 * contract's `absent` names = no job was created, anything else as the answer policy's reconcile row says.
 * Pure: answers as the HTTP layer hands them over, their signals looked up in the policy table.
 */
import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_PRESETS,
  adapterFromContract,
  buildReconcileRequest,
  interpretReconcile,
  parseProviderContract,
  ProviderContractError,
  type ProviderContract,
} from '../../../src/adapters/providers';
import { explainContract } from '../../../src/adapters/providers/explain';
import { ANSWER_POLICY } from '../../../src/core/answer-policy';
import { BASE, answer, valid } from './helpers';

/** The rest preset, tokenless, reconciled by one lookup by client reference. */
function lookupDocument(lookup: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const rest = structuredClone(BUILT_IN_PRESETS.rest) as Record<string, unknown> & { create: Record<string, unknown> };
  delete rest.create.idempotencyToken;
  delete rest.webhook;
  return {
    ...rest,
    name: 'lookup',
    reconciliation: {
      method: 'lookup',
      path: '/v1/jobs/by-reference/{clientReference}',
      jobId: [{ from: 'body', field: 'job_id' }],
      ...lookup,
    },
    ...extra,
  };
}

function lookupContract(lookup: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): ProviderContract {
  return parseProviderContract(lookupDocument(lookup, extra), 'test', { baseUrl: BASE });
}

/** The contract's validation problems, as `path: message` lines. */
function problems(document: unknown): string[] {
  try {
    parseProviderContract(document, 'test', { baseUrl: BASE });
    return [];
  } catch (error) {
    if (!(error instanceof ProviderContractError)) throw error;
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
}

const byReference = lookupContract();
/** AWS-style: an unknown job is a 400 whose `__type` names it. */
const awsStyle = lookupContract(
  { absent: { errorCodes: ['ResourceNotFoundException', 'BadRequestException'] } },
  { providerError: { codeField: '__type', messageField: ['message', 'Message'] } },
);

/** The answer policy's reaction to a lookup observation. */
function reaction(observation: { signal: keyof (typeof ANSWER_POLICY)['reconcile'] }) {
  return ANSWER_POLICY.reconcile[observation.signal];
}

describe('reconciliation by lookup: the contract (U2)', () => {
  it('U2: a lookup validates with its defaults: absent is HTTP 404', () => {
    const reconciliation = byReference.reconciliation;
    expect(reconciliation).toMatchObject({ method: 'lookup', absent: { statuses: [404] } });
    expect(adapterFromContract(byReference).reconciliationMethod).toBe('lookup');
  });

  it('U2: the lookup request is a GET of its path with the client reference', () => {
    const built = buildReconcileRequest(byReference, { clientReference: 'op-1', token: 'tok', nowMs: 0 });
    expect(built).toMatchObject({
      kind: 'request',
      request: { method: 'GET', url: `${BASE}/v1/jobs/by-reference/op-1` },
    });
  });

  it('U2: explain says how the lookup finds the job and what "no such job" is', () => {
    const text = explainContract(awsStyle).join('\n');
    expect(text).toContain(`GET ${BASE}/v1/jobs/by-reference/{clientReference} (one lookup)`);
    expect(text).toContain('job ID from body field `job_id`');
    expect(text).toContain(
      'no such job: HTTP 404, a 2xx with an empty body, or a 4xx with the error code ResourceNotFoundException, BadRequestException',
    );
  });

  it.each([
    [
      'a placeholder the create does not send',
      { path: '/v1/jobs/by-token/{token}' },
      {},
      'reconciliation: the lookup names the job by {token}, but the create does not send it: give create.idempotencyToken',
    ],
    [
      'an error code without providerError.codeField',
      { absent: { errorCodes: ['NotFound'] } },
      { providerError: undefined },
      'reconciliation.absent.errorCodes: error codes are read with providerError.codeField: give it',
    ],
    [
      'a status that never says "no such job"',
      { absent: { statuses: [404, 429] } },
      {},
      'reconciliation.absent.statuses[1]: only a 4xx other than 401, 403 and 429 can say "no such job"',
    ],
    ['a lookup without jobId', { jobId: undefined }, {}, 'reconciliation.jobId:'],
  ])('U2: validation refuses %s', (_what, lookup, extra, expected) => {
    const document = lookupDocument(lookup, extra);
    expect(problems(document).join('\n')).toContain(expected);
  });
});

describe('reconciliation by lookup: the answers (U2)', () => {
  it('U2: 200 names the job by a body field: found, with its state', () => {
    const { observation, matches } = interpretReconcile(
      byReference,
      answer(200, { json: { job_id: 'job-7', state: 'running' } }),
    );
    valid(observation);
    expect(observation).toMatchObject({
      action: 'reconcile',
      signal: 'ok',
      remoteJobId: 'job-7',
      remoteState: 'running',
      category: 'pending',
    });
    expect(matches).toEqual([{ remoteJobId: 'job-7', remoteState: 'running', category: 'pending' }]);
    expect(reaction(observation)).toEqual({ kind: 'read' });
  });

  it('U2: 200 names the job by a header (its last path segment): found', () => {
    const contract = lookupContract({
      jobId: [{ from: 'header', name: 'Location', extract: 'last_path_segment' }],
    });
    const { observation, matches } = interpretReconcile(
      contract,
      answer(200, { headers: { location: '/v1/jobs/job-9' } }),
    );
    valid(observation);
    expect(observation).toMatchObject({ signal: 'ok', remoteJobId: 'job-9' });
    expect(observation.parseProblem).toBeUndefined();
    expect(matches).toEqual([{ remoteJobId: 'job-9' }]);
  });

  it.each([
    ['404', answer(404, { json: { error: { code: 'not_found' } } })],
    ['404 without a body', answer(404)],
    ['204', answer(204)],
    ['200 with an empty JSON object', answer(200, { json: {} })],
  ])('U2: %s is "no such job": the signal not_found, read as no job', (_what, given) => {
    const { observation, matches } = interpretReconcile(byReference, given);
    valid(observation);
    expect(observation).toMatchObject({ signal: 'not_found', errorCategory: 'job_absent' });
    expect(observation.remoteJobId).toBeUndefined();
    expect(matches).toEqual([]);
    expect(reaction(observation)).toEqual({ kind: 'no_job' });
  });

  it.each([['ResourceNotFoundException'], ['com.amazonaws.transcribe#BadRequestException']])(
    'U2: 400 with a declared error code (%s) is "no such job"',
    (code) => {
      const { observation } = interpretReconcile(awsStyle, answer(400, { json: { __type: code, message: 'gone' } }));
      valid(observation);
      expect(observation).toMatchObject({ signal: 'not_found', errorCategory: 'job_absent', httpStatus: 400 });
      expect(reaction(observation)).toEqual({ kind: 'no_job' });
    },
  );

  it('U2: 400 with another error code is not "no such job": a refusal, and the create stays unknown', () => {
    const { observation } = interpretReconcile(
      awsStyle,
      answer(400, { json: { __type: 'ValidationException', message: 'bad name' } }),
    );
    valid(observation);
    expect(observation).toMatchObject({
      signal: 'client_error',
      errorCategory: 'http_4xx',
      providerError: { code: 'ValidationException', message: 'bad name' },
    });
    expect(reaction(observation)).toEqual({ kind: 'escalate', reason: 'create_unknown' });
  });

  it('U2: a 404 the contract does not declare absent is a refusal, never "no such job"', () => {
    const contract = lookupContract(
      { absent: { statuses: [410], errorCodes: ['JobNotFound'] } },
      { providerError: { codeField: 'error.code' } },
    );
    const { observation } = interpretReconcile(contract, answer(404, { json: { error: { code: 'NoSuchRoute' } } }));
    expect(observation).toMatchObject({ signal: 'client_error', errorCategory: 'undeclared_not_found' });
    expect(reaction(observation)).toEqual({ kind: 'escalate', reason: 'create_unknown' });
    const gone = interpretReconcile(contract, answer(410)).observation;
    expect(gone).toMatchObject({ signal: 'not_found', errorCategory: 'job_absent' });
  });

  it('U2, H4: a declared error code never makes a 401, 403 or 429 "no such job"', () => {
    for (const status of [401, 403, 429]) {
      const { observation } = interpretReconcile(
        awsStyle,
        answer(status, { json: { __type: 'ResourceNotFoundException' } }),
      );
      expect(observation.signal).not.toBe('not_found');
    }
  });

  it.each([
    [500, 'server_error'],
    [502, 'server_error'],
    [503, 'unavailable'],
    [429, 'rate_limited'],
  ] as const)('U2: %i is read by its status and retried as the policy says', (status, signal) => {
    const { observation } = interpretReconcile(byReference, answer(status));
    expect(observation.signal).toBe(signal);
    expect(reaction(observation).kind).toBe('retry');
  });

  it('U2: an answer that never arrived (ambiguous) is retried within the transport budget', () => {
    expect(ANSWER_POLICY.reconcile.ambiguous).toEqual({ kind: 'retry', budget: 'transport' });
    expect(ANSWER_POLICY.reconcile.not_sent).toEqual({ kind: 'retry', budget: 'transport' });
  });

  it('U2, S2: a 2xx with a body but no job ID is unreadable, never "no such job"', () => {
    const { observation, matches } = interpretReconcile(byReference, answer(200, { json: { state: 'running' } }));
    valid(observation);
    expect(observation).toMatchObject({ signal: 'unreadable' });
    expect(observation.parseProblem).toContain('names no job (body field job_id missing)');
    expect(matches).toEqual([]);
    expect(reaction(observation)).toEqual({ kind: 'retry', budget: 'transport' });
  });

  it('U2, S2: a 2xx whose body is not JSON is unreadable', () => {
    const { observation } = interpretReconcile(
      byReference,
      answer(200, { text: '<html>hi</html>', headers: { 'content-type': 'text/html' } }),
    );
    expect(observation).toMatchObject({ signal: 'unreadable' });
  });
});
