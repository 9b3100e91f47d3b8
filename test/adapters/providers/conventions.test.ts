/**
 * The convention presets (V1, V2, V4) against the answers their conventions define: Azure's Operation-Location /
 * Azure-AsyncOperation / Location / provisioningState with final-state-via, AIP-151, and plain 202 + Location.
 * Pure: answers as the HTTP layer hands them over.
 */
import { describe, expect, it } from 'vitest';
import {
  buildCreateRequest,
  buildStatusRequest,
  interpretCreate,
  interpretStatus,
  parseProviderContract,
  type ProviderContract,
} from '../../../src/adapters/providers';
import { BASE, answer, valid } from './helpers';

function contract(
  preset: string,
  create: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): ProviderContract {
  return parseProviderContract(
    { preset, name: 'p', baseUrl: BASE, credential: { scheme: 'none' }, create, ...extra },
    'test',
    {},
  );
}

const put = contract('azure-lro', { method: 'PUT', path: '/things/t1' });
const post = contract('azure-lro', { method: 'POST', path: '/things/t1/export' });
const del = contract('azure-lro', { method: 'DELETE', path: '/things/t1' });
const PUT_URL = `${BASE}/things/t1`;

describe('azure-lro: the create answer (V1, V4)', () => {
  it('V1: a PUT answered 201 Creating without headers is pending, polled at the resource URL with the resource reading', () => {
    const o = valid(
      interpretCreate(put, answer(201, { json: { properties: { provisioningState: 'Creating' } } }), 'create', {
        requestUrl: PUT_URL,
      }),
    );
    expect(o).toMatchObject({
      category: 'pending',
      remoteState: 'Creating',
      statusUrl: PUT_URL,
      pollReading: 'resource',
    });
    expect(o.parseProblem).toBeUndefined();
  });

  it('V1: Azure-AsyncOperation wins over Location (priority order); the job is known by its poll URL, no job ID', () => {
    const o = valid(
      interpretCreate(
        put,
        answer(200, {
          json: { properties: { provisioningState: 'Accepted' } },
          headers: { 'Azure-AsyncOperation': `${BASE}/ops/1`, Location: 'somethingBadWhichShouldNotBeUsed' },
        }),
        'create',
        { requestUrl: PUT_URL },
      ),
    );
    expect(o).toMatchObject({ category: 'pending', statusUrl: `${BASE}/ops/1`, pollReading: 'monitor' });
    expect(o.remoteJobId).toBeUndefined();
  });

  it('V1: a 202 is pending whatever its body says (a provisioningState of Succeeded on a 202 is not done)', () => {
    const o = valid(
      interpretCreate(
        put,
        answer(202, {
          json: { properties: { provisioningState: 'Succeeded' } },
          headers: { 'Azure-AsyncOperation': `${BASE}/ops/2` },
        }),
        'create',
        { requestUrl: PUT_URL },
      ),
    );
    expect(o.category).toBe('pending');
  });

  it('C3, V2: a PUT answered 200 with no state is a synchronous success whose result is the answer itself', () => {
    const o = valid(
      interpretCreate(put, answer(200, { json: { id: '100', name: 'foo' } }), 'create', { requestUrl: PUT_URL }),
    );
    expect(o).toMatchObject({ category: 'success', resultReference: { inline: { id: '100', name: 'foo' } } });
  });

  it('V2: a DELETE answered 204 is done and has no result to collect', () => {
    const o = valid(interpretCreate(del, answer(204), 'create', { requestUrl: PUT_URL }));
    expect(o).toMatchObject({ category: 'success', resultReference: { none: true } });
  });

  it('V1, C4: a final answer needs no poll URL, so a foreign one it carries is ignored (noted), never followed', () => {
    const patch = contract('azure-lro', { method: 'PATCH', path: '/things/t1' });
    const o = valid(
      interpretCreate(
        patch,
        answer(200, {
          json: { properties: { provisioningState: 'Succeeded' } },
          headers: { 'Azure-AsyncOperation': 'http://elsewhere.example/crash' },
        }),
        'create',
        { requestUrl: PUT_URL },
      ),
    );
    expect(o).toMatchObject({
      category: 'success',
      resultReference: { inline: { properties: { provisioningState: 'Succeeded' } } },
    });
    expect(o.parseProblem).toBeUndefined();
    expect(o.errorCategory).toBeUndefined();
    expect(o.note).toContain('unusable poll URL was ignored');
  });

  it('C2: a POST answered 202 with no poll URL proves nothing', () => {
    const o = valid(interpretCreate(post, answer(202), 'create', { requestUrl: `${BASE}/things/t1/export` }));
    expect(o.category).toBeUndefined();
    expect(o.parseProblem).toContain('no job ID in the answer');
  });

  it('C4: a poll URL on another origin is refused, never followed', () => {
    const o = valid(
      interpretCreate(post, answer(202, { headers: { 'Azure-AsyncOperation': 'https://elsewhere.example/ops/1' } })),
    );
    expect(o.errorCategory).toBe('foreign_origin');
    expect(o.statusUrl).toBeUndefined();
  });

  it('V1: a poll URL longer than 8192 characters is refused whole, never shortened', () => {
    const long = `${BASE}/ops/${'a'.repeat(9000)}`;
    const o = valid(interpretCreate(post, answer(202, { headers: { 'Operation-Location': long } })));
    expect(o.statusUrl).toBeUndefined();
    expect(o.parseProblem).toContain('refused whole, never shortened');
  });

  it('V4: PUT and DELETE are idempotent and reconciled by repeating the request; POST has no way to reconcile without a token', () => {
    expect(put.create.idempotent).toBe(true);
    expect(put.reconciliation.method).toBe('same_token_resend');
    expect(del.create.body).toEqual({ mode: 'none' });
    expect(post.create.idempotent).toBe(false);
    expect(post.reconciliation.method).toBe('none');
    const built = buildCreateRequest(del, { payload: {}, token: 't'.repeat(22), nowMs: 0 });
    expect(built).toMatchObject({ kind: 'request', request: { method: 'DELETE', url: PUT_URL } });
    expect(built.kind === 'request' && 'json' in built.request).toBe(false);
  });
});

describe('a create answer naming a status monitor (V5)', () => {
  const patch = contract('azure-lro', { method: 'PATCH', path: '/things/t1' });
  const writes = { PUT: put, PATCH: patch };
  const MONITOR = `${BASE}/operations/op-1`;
  const created = (method: 'PUT' | 'PATCH', status: number, name: string, json: unknown) =>
    valid(
      interpretCreate(writes[method], answer(status, { json, headers: { [name]: MONITOR } }), 'create', {
        requestUrl: PUT_URL,
      }),
    );

  it.each([
    ['PUT', 200, 'Operation-Location'],
    ['PUT', 200, 'Azure-AsyncOperation'],
    ['PUT', 201, 'Operation-Location'],
    ['PUT', 201, 'Azure-AsyncOperation'],
    ['PATCH', 200, 'Operation-Location'],
    ['PATCH', 200, 'Azure-AsyncOperation'],
    ['PATCH', 201, 'Operation-Location'],
    ['PATCH', 201, 'Azure-AsyncOperation'],
  ] as const)(
    'V5: a %s answered %i with %s and a body without provisioningState is pending at the monitor, never done',
    (method, status, name) => {
      const o = created(method, status, name, { id: '/things/t1', name: 't1', properties: { size: 3 } });
      expect(o).toMatchObject({ category: 'pending', statusUrl: MONITOR, pollReading: 'monitor' });
      expect(o.resultReference).toBeUndefined();
      expect(o.parseProblem).toBeUndefined();
    },
  );

  it.each([
    ['PUT', 200, 'Operation-Location'],
    ['PUT', 200, 'Azure-AsyncOperation'],
    ['PUT', 201, 'Operation-Location'],
    ['PUT', 201, 'Azure-AsyncOperation'],
    ['PATCH', 200, 'Operation-Location'],
    ['PATCH', 200, 'Azure-AsyncOperation'],
    ['PATCH', 201, 'Operation-Location'],
    ['PATCH', 201, 'Azure-AsyncOperation'],
  ] as const)(
    'V5: a %s answered %i with %s and provisioningState Succeeded in the body is done (the only exception)',
    (method, status, name) => {
      const body = { id: '/things/t1', properties: { provisioningState: 'Succeeded' } };
      const o = created(method, status, name, body);
      expect(o).toMatchObject({ category: 'success', remoteState: 'Succeeded', resultReference: { inline: body } });
      expect(o.parseProblem).toBeUndefined();
    },
  );

  it.each([
    ['PUT', 200, 'Operation-Location'],
    ['PUT', 200, 'Azure-AsyncOperation'],
    ['PUT', 201, 'Operation-Location'],
    ['PUT', 201, 'Azure-AsyncOperation'],
    ['PATCH', 200, 'Operation-Location'],
    ['PATCH', 200, 'Azure-AsyncOperation'],
    ['PATCH', 201, 'Operation-Location'],
    ['PATCH', 201, 'Azure-AsyncOperation'],
  ] as const)(
    'V5: a %s answered %i with %s and provisioningState Failed in the body is failed, with the provider error',
    (method, status, name) => {
      const o = created(method, status, name, {
        properties: { provisioningState: 'Failed' },
        error: { code: 'Conflict', message: 'the name is taken' },
      });
      expect(o).toMatchObject({
        category: 'failure',
        remoteState: 'Failed',
        providerError: { code: 'Conflict', message: 'the name is taken' },
      });
      expect(o.resultReference).toBeUndefined();
    },
  );

  it('V5: a non-final provisioningState (Creating) beside a monitor is pending at the monitor', () => {
    const o = created('PUT', 201, 'Operation-Location', { properties: { provisioningState: 'Creating' } });
    expect(o).toMatchObject({ category: 'pending', remoteState: 'Creating', statusUrl: MONITOR });
  });

  it('V5: a POST answered 200 with Operation-Location and an empty body is pending at the monitor', () => {
    const o = valid(interpretCreate(post, answer(200, { headers: { 'Operation-Location': MONITOR } })));
    expect(o).toMatchObject({ category: 'pending', statusUrl: MONITOR, pollReading: 'monitor' });
  });

  it('V5: without a monitor the HTTP status still decides: a PUT answered 201 with a Location to the resource is done', () => {
    const o = created('PUT', 201, 'Location', { id: '/things/t1' });
    expect(o).toMatchObject({ category: 'success', resultReference: { inline: { id: '/things/t1' } } });
  });

  it('V5, C4: a monitor on another origin is never followed, and the answer is not taken as done either', () => {
    const o = valid(
      interpretCreate(
        put,
        answer(201, { json: { id: '/things/t1' }, headers: { 'Operation-Location': 'https://elsewhere.example/op' } }),
        'create',
        { requestUrl: PUT_URL },
      ),
    );
    expect(o.category).toBeUndefined();
    expect(o.errorCategory).toBe('foreign_origin');
    expect(o.resultReference).toBeUndefined();
  });

  it('V5: the rule follows the reading, not a header name: any poll URL read with another reading than the create answer is a monitor', () => {
    const custom = parseProviderContract(
      {
        name: 'p',
        baseUrl: BASE,
        credential: { scheme: 'none' },
        create: {
          method: 'PUT',
          path: '/widgets/w1',
          acceptedStatuses: [200, 201],
          statusUrl: [{ from: 'body', field: 'links.operation', reading: 'operation' }],
          readState: true,
        },
        status: {
          useStatusUrl: true,
          whenNoState: { success: [200, 201] },
          readings: {
            operation: {
              stateField: 'phase',
              stateTable: { pending: ['busy'], success: ['ready'], failure: ['broken'] },
            },
          },
        },
        result: { url: [{ from: 'inline' }] },
        reconciliation: { method: 'none' },
        collectSafeToRepeat: true,
      },
      'test',
      {},
    );
    const o = valid(interpretCreate(custom, answer(201, { json: { links: { operation: '/ops/7' } } })));
    expect(o).toMatchObject({ category: 'pending', statusUrl: `${BASE}/ops/7`, pollReading: 'operation' });
    const done = valid(
      interpretStatus(custom, answer(200, { json: { phase: 'ready' } }), {
        statusUrl: `${BASE}/ops/7`,
        pollReading: 'operation',
      }),
    );
    expect(done.category).toBe('success');
  });

  it('V5: http-202-location: a create answered 201 with a Location is polled there; one without a Location is done', () => {
    const plain = contract('http-202-location', { path: '/reports' });
    const named = valid(interpretCreate(plain, answer(201, { json: { id: 7 }, headers: { Location: '/reports/7' } })));
    expect(named).toMatchObject({ category: 'pending', statusUrl: `${BASE}/reports/7`, pollReading: 'monitor' });
    expect(named.resultReference).toBeUndefined();
    const sync = valid(interpretCreate(plain, answer(200, { json: { total: 3 } })));
    expect(sync).toMatchObject({ category: 'success', resultReference: { inline: { total: 3 } } });
  });

  it('V5: google-lro: the create answer is the operation itself, so done: true there is the monitor saying so', () => {
    const google = contract('google-lro', { path: '/v1/projects/p/things:export' });
    const o = valid(
      interpretCreate(google, answer(200, { json: { name: 'operations/9', done: true, response: { rows: 1 } } })),
    );
    expect(o).toMatchObject({ category: 'success', remoteJobId: 'operations/9' });
  });
});

describe('azure-lro: status answers (V1, V2)', () => {
  const monitor = { statusUrl: `${BASE}/ops/1`, pollReading: 'monitor' };

  it('P1: a monitor saying InProgress is pending; Succeeded is success with the result at the resource URL for a PUT', () => {
    expect(valid(interpretStatus(put, answer(200, { json: { status: 'InProgress' } }), monitor)).category).toBe(
      'pending',
    );
    const done = valid(
      interpretStatus(put, answer(200, { json: { status: 'Succeeded' } }), { ...monitor, requestUrl: PUT_URL }),
    );
    expect(done).toMatchObject({ category: 'success', resultReference: { url: PUT_URL } });
  });

  it("V2: a POST monitor that succeeded points at the create answer's Location (final-state-via location)", () => {
    const done = valid(
      interpretStatus(post, answer(200, { json: { status: 'succeeded' } }), {
        ...monitor,
        createHeaders: { location: `${BASE}/results/9` },
      }),
    );
    expect(done).toMatchObject({ category: 'success', resultReference: { url: `${BASE}/results/9` } });
  });

  it('S2: a monitor answer without a status field is not success (never guessed)', () => {
    const o = valid(interpretStatus(put, answer(200, { json: {} }), monitor));
    expect(o.category).toBeUndefined();
    expect(o.parseProblem).toContain('field status is missing');
  });

  it('S2: an answer that is not valid JSON is never read as a state', () => {
    const o = valid(
      interpretStatus(
        put,
        answer(200, { text: '{ "status": "Accepted"', parseError: 'Unexpected end of JSON input' }),
        monitor,
      ),
    );
    expect(o.category).toBeUndefined();
    expect(o.parseProblem).toContain('not valid JSON');
  });

  it('V1: at a Location, 202 with no body is pending and a new Location moves polling there (same origin)', () => {
    const here = { statusUrl: `${BASE}/post/1`, pollReading: 'resource' };
    const o = valid(interpretStatus(post, answer(202, { headers: { Location: `${BASE}/post/newuri/1` } }), here));
    expect(o).toMatchObject({ category: 'pending', statusUrl: `${BASE}/post/newuri/1` });
    const same = valid(interpretStatus(post, answer(202, { headers: { Location: `${BASE}/post/1` } }), here));
    expect(same.statusUrl).toBeUndefined();
  });

  it('V2: at a Location, 200 with a body is done and the body is the result; 204 of a POST is done with none', () => {
    const here = { statusUrl: `${BASE}/post/1`, pollReading: 'resource' };
    expect(valid(interpretStatus(post, answer(200, { json: [{ id: '100' }] }), here))).toMatchObject({
      category: 'success',
      resultReference: { inline: [{ id: '100' }] },
    });
    expect(valid(interpretStatus(post, answer(204), here))).toMatchObject({
      category: 'success',
      resultReference: { none: true },
    });
  });

  it('P1: provisioningState Failed and Canceled are final, with the provider error', () => {
    const failed = valid(
      interpretStatus(
        put,
        answer(200, {
          json: { properties: { provisioningState: 'Failed' }, error: { code: 'Quota', message: 'no quota left' } },
        }),
        { statusUrl: PUT_URL, pollReading: 'resource' },
      ),
    );
    expect(failed).toMatchObject({ category: 'failure', providerError: { code: 'Quota', message: 'no quota left' } });
    expect(
      valid(
        interpretStatus(put, answer(200, { json: { properties: { provisioningState: 'Canceled' } } }), {
          statusUrl: PUT_URL,
          pollReading: 'resource',
        }),
      ).category,
    ).toBe('cancelled');
  });

  it("H3/P6: a 400 from the poll URL is an HTTP fact with the provider's message, not a job state", () => {
    const o = valid(interpretStatus(put, answer(400, { json: { message: 'Expected bad request message' } }), monitor));
    expect(o).toMatchObject({ errorCategory: 'http_4xx', providerError: { message: 'Expected bad request message' } });
    expect(o.category).toBeUndefined();
  });
});

describe('google-lro (AIP-151)', () => {
  const google = contract('google-lro', { path: '/v1/projects/p/things:export' });

  it('reads the Operation, polls /v1/{+name} keeping its slashes, and takes the response as the result', () => {
    const created = valid(
      interpretCreate(google, answer(200, { json: { name: 'projects/p/operations/42', done: false } })),
    );
    expect(created).toMatchObject({ remoteJobId: 'projects/p/operations/42', category: 'pending' });
    expect(buildStatusRequest(google, { jobId: 'projects/p/operations/42' })).toMatchObject({
      request: { url: `${BASE}/v1/projects/p/operations/42` },
    });
    expect(buildStatusRequest(google, { jobId: 'projects/../secrets' })).toMatchObject({ kind: 'refused' });
    const done = valid(
      interpretStatus(
        google,
        answer(200, { json: { name: 'projects/p/operations/42', done: true, response: { rows: 3 } } }),
      ),
    );
    expect(done).toMatchObject({ category: 'success', resultReference: { inline: { rows: 3 } } });
  });
});

describe('http-202-location', () => {
  const plain = contract('http-202-location', { path: '/reports' });

  it('202 + Location is pending at the Location; 200 there is done with the body as the result', () => {
    const created = valid(interpretCreate(plain, answer(202, { headers: { Location: '/reports/status/7' } })));
    expect(created).toMatchObject({ category: 'pending', statusUrl: `${BASE}/reports/status/7` });
    expect(valid(interpretStatus(plain, answer(202), { statusUrl: `${BASE}/reports/status/7` })).category).toBe(
      'pending',
    );
    expect(
      valid(interpretStatus(plain, answer(200, { json: { total: 3 } }), { statusUrl: `${BASE}/reports/status/7` })),
    ).toMatchObject({
      category: 'success',
      resultReference: { inline: { total: 3 } },
    });
  });
});

describe('preset: merging (V1)', () => {
  it('the document wins over the preset, lists replace, null removes', () => {
    const custom = contract(
      'azure-lro',
      { method: 'POST', path: '/x' },
      {
        status: {
          readings: {
            monitor: { stateField: 'status', stateTable: { success: ['Done'] }, result: [{ from: 'inline' }] },
          },
        },
        cancel: null,
      },
    );
    expect(custom.status.readings?.monitor?.result).toEqual([{ from: 'inline' }]);
    expect(custom.status.readings?.resource?.stateField).toEqual(['properties.provisioningState', 'provisioningState']);
  });

  it('an unknown preset is named with the known ones', () => {
    expect(() => contract('azure', { path: '/x' })).toThrow(
      /preset: no preset "azure" \(known: azure-lro, google-lro, http-202-location, aws-json, rest, lro, operation-location\)/,
    );
  });
});
