/**
 * Request templates: every call (create, status, cancel, result, reconciliation, token paging) takes a path
 * (RFC 6570 level 3), query, headers and a body (JSON template or raw, with its content type) over the same
 * variables; validation refuses a placeholder no variable of that call can fill, a `{+name}` that can never keep a
 * slash, and a header the builder would override.
 */
import { describe, expect, it } from 'vitest';
import {
  adapterFromContract,
  parseProviderContract,
  ProviderContractError,
  type BuildResult,
  type ProviderContract,
} from '../../../src/adapters/providers';
import { answer, BASE } from './helpers';

const NOW = Date.UTC(2026, 10, 29, 10, 20, 31);
const TOKEN = 'tok_0123456789abcdef0123456789abcdef';
const FACTS = { token: TOKEN, clientReference: 'ref-1', operationId: 'op-1', nowMs: NOW };

/** A minimal valid document; `over` replaces whole sections. */
function doc(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'tpl',
    baseUrl: `${BASE}/api`,
    credential: { scheme: 'none' },
    create: { path: '/jobs', jobId: [{ from: 'body', field: 'id' }] },
    status: { path: '/jobs/{jobId}', stateField: 'state', stateTable: { pending: ['run'], success: ['ok'] } },
    result: { url: [{ from: 'inline' }] },
    reconciliation: { method: 'none' },
    collectSafeToRepeat: true,
    ...over,
  };
}

const status = (over: Record<string, unknown>) => ({
  status: { stateField: 'state', stateTable: { pending: ['run'], success: ['ok'] }, ...over },
});

function contract(over: Record<string, unknown> = {}): ProviderContract {
  return parseProviderContract(doc(over), 'tpl');
}

/** The problems validation names, as `path: message`. */
function problems(over: Record<string, unknown>): string[] {
  try {
    parseProviderContract(doc(over), 'tpl');
  } catch (error) {
    if (error instanceof ProviderContractError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

function request(result: BuildResult) {
  if (result.kind !== 'request') throw new Error(`refused: ${result.problem}`);
  return result.request;
}

describe('paths: RFC 6570 level 3', () => {
  it('{name} is one percent-encoded segment; {+name} keeps "/" and refuses an empty, "." or ".." segment', () => {
    const c = contract({ ...status({ path: '/ops/{jobId}/{+jobId}' }) });
    const adapter = adapterFromContract(c);
    expect(request(adapter.buildStatusRequest({ jobId: 'operations/a b' })).url).toBe(
      `${BASE}/api/ops/operations%2Fa%20b/operations/a%20b`,
    );
    for (const jobId of ['operations//x', 'operations/../admin', './x'])
      expect(adapter.buildStatusRequest({ jobId })).toMatchObject({ kind: 'refused', errorCategory: 'missing_input' });
  });

  it('a value that would make a "." or ".." segment is refused, never resolved away', () => {
    const adapter = adapterFromContract(contract());
    expect(adapter.buildStatusRequest({ jobId: '..' })).toMatchObject({
      kind: 'refused',
      errorCategory: 'missing_input',
    });
  });

  it('{?a,b}, {&a}, {/a} and {.a} leave an unset variable out; {name} refuses the build without one', () => {
    const c = contract({
      variables: { region: { default: 'eu' }, tag: {} },
      ...status({ path: '/jobs/{jobId}{/region}{.tag}{?region,tag}{&operationId}' }),
    });
    const adapter = adapterFromContract(c);
    expect(request(adapter.buildStatusRequest({ jobId: 'j1', operationId: 'op 1' })).url).toBe(
      `${BASE}/api/jobs/j1/eu?region=eu&operationId=op%201`,
    );
    expect(request(adapter.buildStatusRequest({ jobId: 'j1', variables: { region: 'us/east', tag: 'v2' } })).url).toBe(
      `${BASE}/api/jobs/j1/us%2Feast.v2?region=us%2Feast&tag=v2`,
    );
    expect(adapter.buildStatusRequest({})).toMatchObject({
      kind: 'refused',
      errorCategory: 'missing_input',
      problem: 'the path template /jobs/{jobId}{/region}{.tag}{?region,tag}{&operationId} needs {jobId}',
    });
  });

  it('validation refuses a fragment, a level 4 modifier and a stray brace', () => {
    expect(problems(status({ path: '/jobs/{jobId}{#x}' }))).toContain(
      'status.path: not an RFC 6570 level 3 template: {#x}: a fragment is never sent to the provider',
    );
    expect(problems(status({ path: '/jobs/{jobId:3}' }))[0]).toContain('level 3');
    expect(problems(status({ path: '/jobs/{jobId' }))[0]).toContain('a "{" without its "}"');
  });
});

describe('query parameters', () => {
  it('are value templates, percent-encoded as one component; one naming an unset variable is left out', () => {
    const c = contract({
      variables: { filter: {} },
      ...status({ path: '/jobs/{jobId}', query: { view: 'full', ref: 'r-{clientReference}', filter: '{filter}' } }),
    });
    const adapter = adapterFromContract(c);
    expect(request(adapter.buildStatusRequest({ ...FACTS, jobId: 'j1' })).url).toBe(
      `${BASE}/api/jobs/j1?view=full&ref=r-ref-1`,
    );
    expect(request(adapter.buildStatusRequest({ ...FACTS, jobId: 'j1', variables: { filter: 'a&b=c' } })).url).toBe(
      `${BASE}/api/jobs/j1?view=full&ref=r-ref-1&filter=a%26b%3Dc`,
    );
  });

  it('take {name} placeholders only; RFC 6570 forms go in the path', () => {
    expect(problems(status({ path: '/jobs/{jobId}', query: { a: '{?jobId}' } }))).toContain(
      'status.query.a: a query value takes {name} placeholders only (RFC 6570 forms such as {?name} go in the path)',
    );
  });
});

describe('headers', () => {
  it('a header template inserts the values as they are; an unset one refuses the build', () => {
    const c = contract({
      ...status({ path: '/jobs/{jobId}', headers: { 'X-Job': { template: 'job {jobId} for {operationId}' } } }),
    });
    const adapter = adapterFromContract(c);
    expect(request(adapter.buildStatusRequest({ ...FACTS, jobId: 'j/1' })).headers).toEqual({
      accept: 'application/json',
      'x-job': 'job j/1 for op-1',
    });
    expect(adapter.buildStatusRequest({ jobId: 'j1' })).toMatchObject({
      kind: 'refused',
      errorCategory: 'missing_input',
      problem: 'header X-Job needs {operationId}',
    });
  });

  it('a value with a line break refuses the build (header injection)', () => {
    const c = contract({
      variables: { note: {} },
      ...status({ path: '/j/{jobId}', headers: { 'X-N': { template: '{note}' } } }),
    });
    expect(
      adapterFromContract(c).buildStatusRequest({ jobId: 'j', variables: { note: 'a\r\nX-Evil: 1' } }),
    ).toMatchObject({ kind: 'refused', errorCategory: 'invalid_input' });
  });

  it("a call's own accept replaces the builder's default", () => {
    const c = contract({
      ...status({ path: '/j/{jobId}', headers: { Accept: { value: 'application/vnd.acme+json' } } }),
    });
    expect(request(adapterFromContract(c).buildStatusRequest({ jobId: 'j' })).headers).toEqual({
      accept: 'application/vnd.acme+json',
    });
  });
});

describe('bodies and their content type', () => {
  const aws = {
    variables: { pageSize: { type: 'integer', default: '1000' }, bucket: { required: true } },
    ...status({
      method: 'POST',
      path: '/',
      headers: { 'X-Amz-Target': { value: 'Textract.GetDocumentTextDetection' } },
      body: {
        json: {
          JobId: '{jobId}',
          MaxResults: '{pageSize}',
          Where: 's3://{bucket}/in',
          Tags: ['{bucket}', '{missing}'],
        },
        contentType: 'application/x-amz-json-1.1',
      },
    }),
  };

  it('a JSON template: an exact placeholder takes the value (an integer variable as a number), an unset one is left out', () => {
    const c = contract({ ...aws, variables: { ...aws.variables, missing: {} } });
    const built = request(adapterFromContract(c).buildStatusRequest({ jobId: 'j1', variables: { bucket: 'docs' } }));
    expect(built).toEqual({
      method: 'POST',
      url: `${BASE}/api/`,
      headers: {
        accept: 'application/json',
        'content-type': 'application/x-amz-json-1.1',
        'x-amz-target': 'Textract.GetDocumentTextDetection',
      },
      json: { JobId: 'j1', MaxResults: 1000, Where: 's3://docs/in', Tags: ['docs'] },
    });
  });

  it('a JSON template string naming an unset variable inside other text refuses the build', () => {
    const c = contract({ ...aws, variables: { ...aws.variables, missing: {} } });
    expect(adapterFromContract(c).buildStatusRequest({ jobId: 'j1' })).toMatchObject({
      kind: 'refused',
      errorCategory: 'missing_input',
      problem: 'the body template needs {bucket}',
    });
  });

  it('a raw body is sent as written with its values, under its declared content type', () => {
    const c = contract({
      ...status({
        method: 'POST',
        path: '/query',
        body: { raw: 'job={jobId}&ref={clientReference}', contentType: 'application/x-www-form-urlencoded' },
      }),
    });
    expect(request(adapterFromContract(c).buildStatusRequest({ ...FACTS, jobId: 'j1' }))).toEqual({
      method: 'POST',
      url: `${BASE}/api/query`,
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'job=j1&ref=ref-1',
    });
    expect(problems(status({ method: 'POST', path: '/q', body: { raw: 'x' } }))[0]).toMatch(/^status\.body/);
  });

  it("a GET sends no body; a raw body needs its content type; a JSON body's defaults to application/json", () => {
    expect(problems(status({ path: '/j/{jobId}', body: { json: {} } }))).toContain(
      'status.body: a GET sends no body: set method: POST',
    );
    const c = contract({ ...status({ method: 'POST', path: '/j', body: { json: { id: '{jobId}' } } }) });
    expect(request(adapterFromContract(c).buildStatusRequest({ jobId: 'j' })).headers['content-type']).toBe(
      'application/json',
    );
  });

  it('the create body declares its content type (default application/json); a template places the payload', () => {
    const plain = request(adapterFromContract(contract()).buildCreateRequest({ ...FACTS, payload: { a: 1 } }));
    expect(plain.headers['content-type']).toBe('application/json');
    const c = contract({
      create: {
        path: '/',
        body: {
          mode: 'template',
          json: { Input: '{payload}', Ref: '{clientReference}', Target: 'x' },
          contentType: 'application/x-amz-json-1.1',
        },
        idempotencyToken: { in: 'body', field: 'ClientRequestToken' },
        jobId: [{ from: 'body', field: 'JobId' }],
      },
    });
    expect(request(adapterFromContract(c).buildCreateRequest({ ...FACTS, payload: { doc: 'a.pdf' } }))).toEqual({
      method: 'POST',
      url: `${BASE}/api/`,
      headers: { accept: 'application/json', 'content-type': 'application/x-amz-json-1.1' },
      json: { Input: { doc: 'a.pdf' }, Ref: 'ref-1', Target: 'x', ClientRequestToken: TOKEN },
    });
  });
});

describe('placeholders each call can fill', () => {
  it.each([
    [
      { create: { path: '/jobs/{jobId}', jobId: [{ from: 'body', field: 'id' }] } },
      'create.path: {jobId} has no value in the create request (allowed here: {token}, {clientReference}, {operationId})',
    ],
    [
      status({ path: '/jobs/{id}' }),
      'status.path: unknown placeholder {id} (allowed here: {jobId}, {pollUrl}, {token}, {clientReference}, {operationId}; or declare it under variables)',
    ],
    [
      status({ method: 'POST', path: '/j', body: { json: { p: '{payload}' } } }),
      'status.body.json.p: {payload} is the whole payload: only a member of create.body.json that is exactly "{payload}" takes it',
    ],
    [
      { cancel: { method: 'POST', path: '/jobs/{jobId}:cancel', idempotent: true, query: { page: '{nextToken}' } } },
      "cancel.query.page: {nextToken} is the next page's token: only the result request names it, with result.paging.nextTokenField",
    ],
    [
      {
        reconciliation: {
          method: 'lookup_by_token',
          path: '/jobs/{jobId}',
          listField: 'jobs',
          jobId: [{ field: 'id' }],
        },
        create: {
          path: '/jobs',
          idempotencyToken: { in: 'header', name: 'Idempotency-Key' },
          jobId: [{ from: 'body', field: 'id' }],
        },
      },
      'reconciliation.path: {jobId} has no value in the reconciliation request (allowed here: {token}, {clientReference}, {operationId})',
    ],
    [
      {
        result: {
          url: [{ from: 'template', path: '/jobs/{jobId}/out', headers: { 'X-B': { template: '{bucket}' } } }],
        },
      },
      'result.url[0].headers.X-B.template: unknown placeholder {bucket} (allowed here: {jobId}, {pollUrl}, {token}, {clientReference}, {operationId}; or declare it under variables)',
    ],
  ])(
    'refuses a placeholder no variable of that call can fill, naming the call and the placeholder (%#)',
    (over, message) => {
      expect(problems(over)).toContain(message);
    },
  );

  it('a declared variable may be named by every call', () => {
    expect(
      problems({
        variables: { scope: { reserved: true, required: true } },
        create: { path: '/{+scope}/jobs', jobId: [{ from: 'body', field: 'id' }] },
        ...status({ path: '/{+scope}/jobs/{jobId}' }),
      }),
    ).toEqual([]);
  });

  it('{+clientReference} is refused: a client reference can never carry a slash', () => {
    expect(problems({ create: { path: '/{+clientReference}/jobs', jobId: [{ from: 'body', field: 'id' }] } })).toEqual([
      'create.path: {+clientReference} can never keep a slash: a client reference is letters, digits, ".", "_", ":" and "-" (write {clientReference})',
    ]);
  });

  it('{+name} of a variable not declared reserved is refused', () => {
    expect(
      problems({ variables: { scope: {} }, create: { path: '/{+scope}', jobId: [{ from: 'body', field: 'id' }] } }),
    ).toEqual([
      'create.path: {+scope} keeps slashes, but variable scope is not declared reserved: true (its values hold no "/")',
    ]);
  });

  it('is reported with the other problems of a malformed document, not on the next run', () => {
    expect(problems({ ...status({ path: '/jobs/{id}' }), collectSafeToRepeat: 'yes' })).toHaveLength(2);
  });
});

describe('headers the builder would override', () => {
  it('a content-type header is refused, contract-wide or per call: the body declares its content type', () => {
    expect(problems({ headers: { 'Content-Type': { value: 'application/xml' } } })).toEqual([
      "headers.Content-Type: declare the body's content type as body.contentType (create.body.contentType for the create): the builder sets content-type from it, and a header would silently lose",
    ]);
    expect(
      problems({
        create: {
          path: '/j',
          headers: { 'content-type': { value: 'text/plain' } },
          jobId: [{ from: 'body', field: 'id' }],
        },
      })[0],
    ).toMatch(/^create\.headers\.content-type: declare the body's content type/);
  });

  it("a contract-wide header that a call also sets is refused (the call's value would replace it there)", () => {
    expect(
      problems({
        headers: { 'X-A': { value: '1' } },
        ...status({ path: '/j/{jobId}', headers: { 'x-a': { value: '2' } } }),
      }),
    ).toEqual([
      "status.headers.x-a: x-a is also a contract-wide header, which this call's value would replace: declare it in one place",
    ]);
  });

  it('a header the create sets itself for the token or the client reference is refused', () => {
    const create = (headers?: Record<string, unknown>) => ({
      path: '/j',
      idempotencyToken: { in: 'header', name: 'Idempotency-Key' },
      clientReference: { in: 'header', name: 'X-Ref' },
      ...(headers !== undefined ? { headers } : {}),
      jobId: [{ from: 'body', field: 'id' }],
    });
    expect(problems({ create: create(), headers: { 'Idempotency-Key': { from: 'operation_id' } } })).toEqual([
      'headers.Idempotency-Key: the create sets idempotency-key itself (create.idempotencyToken): this value would be overridden',
    ]);
    expect(problems({ create: create({ 'x-ref': { value: 'fixed' } }) })).toEqual([
      'create.headers.x-ref: the create sets x-ref itself (create.clientReference): this value would be overridden',
    ]);
  });
});

describe('token paging', () => {
  const paged = {
    ...status({ method: 'POST', path: '/', body: { json: { JobId: '{jobId}' } } }),
    result: {
      url: [
        { from: 'template', method: 'POST', path: '/', body: { json: { JobId: '{jobId}', NextToken: '{nextToken}' } } },
      ],
      paging: { itemsField: 'Blocks', nextTokenField: 'NextToken' },
    },
  };

  it('the result request is sent without the token first, then again with each next token', () => {
    const adapter = adapterFromContract(contract(paged));
    expect(request(adapter.buildResultRequest({ jobId: 'j1' })).json).toEqual({ JobId: 'j1' });
    expect(request(adapter.buildResultRequest({ jobId: 'j1', resultUrl: `${BASE}/api/` }))).toMatchObject({
      method: 'POST',
      json: { JobId: 'j1' },
    });
    expect(request(adapter.buildResultRequest({ jobId: 'j1', nextToken: 'a/b+c==' }))).toEqual({
      method: 'POST',
      url: `${BASE}/api/`,
      headers: { accept: '*/*', 'content-type': 'application/json' },
      json: { JobId: 'j1', NextToken: 'a/b+c==' },
    });
  });

  it('needs a result request naming {nextToken}; exactly one of nextLinkField and nextTokenField', () => {
    expect(
      problems({
        result: { url: [{ from: 'template', path: '/r/{jobId}' }], paging: { itemsField: 'x', nextTokenField: 'n' } },
      }),
    ).toEqual([
      'result.paging.nextTokenField: token paging sends the result request again with the token: give result.url a { from: template } source naming {nextToken} (in its query or body)',
    ]);
    expect(
      problems({
        result: { url: [{ from: 'inline' }], paging: { itemsField: 'x', nextLinkField: 'l', nextTokenField: 'n' } },
      }),
    ).toContain(
      'result.paging.nextLinkField: give exactly one of nextLinkField (a next-page URL) or nextTokenField (a next-page token)',
    );
  });
});

describe('reconciliation and cancel requests', () => {
  it('a list by client reference may POST a body and headers', () => {
    const c = contract({
      create: { path: '/jobs', clientReference: { in: 'body', field: 'ref' }, jobId: [{ from: 'body', field: 'id' }] },
      reconciliation: {
        method: 'list_by_client_reference',
        httpMethod: 'POST',
        path: '/',
        headers: { 'X-Amz-Target': { value: 'Svc.ListJobs' } },
        body: { json: { Filter: '{clientReference}' } },
        listField: 'Jobs',
        jobId: [{ field: 'JobId' }],
      },
    });
    expect(request(adapterFromContract(c).buildReconcileRequest({ ...FACTS }))).toEqual({
      method: 'POST',
      url: `${BASE}/api/`,
      headers: { accept: 'application/json', 'content-type': 'application/json', 'x-amz-target': 'Svc.ListJobs' },
      json: { Filter: 'ref-1' },
    });
  });

  it('a cancel takes query, headers and body too', () => {
    const c = contract({
      cancel: { method: 'POST', path: '/', idempotent: true, body: { json: { JobId: '{jobId}' } }, query: { v: '2' } },
    });
    expect(request(adapterFromContract(c).buildCancelRequest({ jobId: 'j1' }))).toEqual({
      method: 'POST',
      url: `${BASE}/api/?v=2`,
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      json: { JobId: 'j1' },
    });
  });
});

describe('the result request template', () => {
  it('V2: a template naming an operation variable is located with the variables and sent as its template says', () => {
    const c = contract({
      variables: { scope: { reserved: true, required: true } },
      create: { path: '/{+scope}/jobs', jobId: [{ from: 'body', field: 'id' }] },
      ...status({ path: '/{+scope}/jobs/{jobId}' }),
      result: {
        url: [
          { from: 'template', method: 'POST', path: '/{+scope}/jobs/{jobId}:export', body: { json: { all: true } } },
        ],
      },
    });
    const adapter = adapterFromContract(c);
    const variables = { scope: 'projects/p1' };
    const observation = adapter.interpretStatus(answer(200, { json: { state: 'ok' } }), { jobId: 'j1', variables });
    const resultUrl = observation.resultReference?.url;
    expect(resultUrl).toBe(`${BASE}/api/projects/p1/jobs/j1:export`);
    expect(request(adapter.buildResultRequest({ jobId: 'j1', variables, resultUrl }))).toEqual({
      method: 'POST',
      url: `${BASE}/api/projects/p1/jobs/j1:export`,
      headers: { accept: '*/*', 'content-type': 'application/json' },
      json: { all: true },
    });
    expect(request(adapter.buildResultRequest({ resultUrl: `${BASE}/api/elsewhere` }))).toEqual({
      method: 'GET',
      url: `${BASE}/api/elsewhere`,
      headers: { accept: '*/*' },
    });
  });
});

describe('a result template after a create answer that is already final', () => {
  it('V2: the result URL is built with the operation variables, as after a status read', () => {
    const c = contract({
      variables: { tenant: { required: true } },
      create: {
        path: '/jobs',
        acceptedStatuses: [200, 202],
        readState: true,
        jobId: [{ from: 'body', field: 'id' }],
      },
      result: { url: [{ from: 'template', path: '/{tenant}/jobs/{jobId}/result' }] },
    });
    const done = answer(200, { json: { id: 'j1', state: 'ok' } });
    const read = adapterFromContract(c).interpretCreate(done, { variables: { tenant: 'acme' } });
    expect(read.resultReference?.url).toBe(`${BASE}/api/acme/jobs/j1/result`);
  });
});
