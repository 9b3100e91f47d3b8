/**
 * `explainContract`: what an adapter will send and read, in plain words, computed from the validated contract
 * (preset merged, defaults applied), on the three convention presets and a simulator preset.
 */
import { describe, expect, it } from 'vitest';
import { parseProviderContract, type ProviderContract } from '../../../src/adapters/providers';
import { describeContract, explainContract } from '../../../src/adapters/providers/explain';
import { BASE, preset } from './helpers';

function withPreset(
  name: string,
  create: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): ProviderContract {
  return parseProviderContract(
    { preset: name, name: 'p', baseUrl: BASE, credential: { scheme: 'none' }, create, ...extra },
    'test',
    {},
  );
}

/** The lines of one section, by its stable id. */
function section(
  contract: ProviderContract,
  id: string,
  options: { preset?: string; baseUrlLabel?: string } = {},
): string[] {
  const found = describeContract(contract, options).sections.find((s) => s.id === id);
  if (found === undefined) throw new Error(`no section ${id}`);
  return found.lines;
}

const text = (lines: string[]): string => lines.join('\n');

describe('explainContract on azure-lro', () => {
  const put = withPreset('azure-lro', { method: 'PUT', path: '/things/t1' });
  const post = withPreset('azure-lro', { method: 'POST', path: '/things/t1/export' });

  it('names the create request, the body and that no token is sent', () => {
    const create = text(section(put, 'create'));
    expect(create).toContain(`PUT ${BASE}/things/t1`);
    expect(create).toContain('body: the payload is the whole JSON body');
    expect(create).toContain('idempotency token: not sent');
    expect(create).toContain('accepted when the answer is HTTP 200, 201, 202, 204');
    expect(create).toContain('read with reading "resource"');
  });

  it("V5: says the monitors end the job, not the create answer's HTTP status, and that a job named without a state is polled (C2)", () => {
    const create = text(section(put, 'create'));
    expect(create).toContain(
      "a poll URL from header operation-location or header azure-asyncoperation names a status monitor: the job is running until the monitor says it is done, whatever the create answer's HTTP status; only a final state word in the create answer ends it there (V5)",
    );
    expect(create).toContain('an answer that names the job but states no state is pending');
    expect(text(section(preset('rest'), 'create'))).not.toContain('status monitor');
  });

  it('lists the poll URL sources in priority order with the reading each uses (V1)', () => {
    const job = section(put, 'job');
    expect(job).toContain('job ID: none is read; the job is known by its poll URL alone');
    const i = job.findIndex((l) => l.startsWith('poll URL'));
    expect(job.slice(i + 1, i + 5)).toEqual([
      '  1. header operation-location: read with reading "monitor"',
      '  2. header azure-asyncoperation: read with reading "monitor"',
      '  3. header location: read with reading "resource"',
      '  4. the URL the create request was sent to: read with reading "resource"',
    ]);
    // A POST does not poll the URL it posted to.
    expect(text(section(post, 'job'))).not.toContain('the URL the create request was sent to');
  });

  it('says how each reading decides the state: pendingStatuses, the state field, the table, whenNoState', () => {
    const status = section(put, 'status');
    const monitor = status.indexOf('reading "monitor":');
    expect(monitor).toBeGreaterThan(0);
    expect(status[monitor + 1]).toBe('  HTTP 202: pending, whatever the body says');
    expect(status[monitor + 2]).toBe('  the state is the word in `status` (the first present)');
    expect(status[monitor + 3]).toMatch(
      /^ {2}state table \(case-insensitive\): pending: NotStarted, .*; success: Succeeded; failure: Failed; cancelled: Canceled, Cancelled$/,
    );
    expect(text(status)).toContain('the state is the word in `properties.provisioningState`, else `provisioningState`');
    expect(text(status)).toContain('an answer that states no state: HTTP 200, 201, 204 means success');
  });

  it('gives the result per reading: final-state-via original-uri for a PUT, location for a POST', () => {
    const putResult = text(section(put, 'result'));
    expect(putResult).toMatch(
      /on a success read with reading "monitor", instead:\n {2}1\. GET the URL in field `resourceLocation`.*\n {2}2\. GET the URL the create request wrote \(final-state-via original-uri\)/,
    );
    expect(putResult).toContain('a success without a result is not ready');
    const postResult = text(section(post, 'result'));
    expect(postResult).toMatch(
      /on a success read with reading "monitor", instead:\n {2}1\. GET the URL the create answer gave in header location \(final-state-via location\)/,
    );
    expect(postResult).toContain('a result is not required');
  });

  it('shows a document override of status.readings.monitor.result, not the preset', () => {
    const custom = withPreset(
      'azure-lro',
      { method: 'POST', path: '/x' },
      { status: { readings: { monitor: { result: [{ from: 'status_field', field: 'output.url' }] } } } },
    );
    const result = text(section(custom, 'result'));
    expect(result).toMatch(
      /on a success read with reading "monitor", instead:\n {2}1\. GET the URL in field `output\.url` of the answer that reported success\non a success read with reading "resource"/,
    );
    expect(result).toContain("on a success read with the status section's own rules: the same");
  });

  it('V4: a PUT is repeated as it was; a POST without a token is escalated, never repeated', () => {
    expect(text(section(put, 'reconciliation'))).toContain('the PUT is sent again as it was: it is idempotent (V4)');
    expect(text(section(post, 'reconciliation'))).toContain('nothing is repeated');
    expect(text(section(post, 'reconciliation'))).toContain('escalates (create_unknown)');
  });

  it('says there is no cancel and no webhook', () => {
    expect(section(put, 'cancel')).toEqual([
      'the provider offers no cancel: a cancel request is refused (ASYNCJOB_ERR_CANCEL_UNSUPPORTED)',
    ]);
    expect(section(put, 'webhook')).toEqual(['none: the job is followed by polling alone']);
  });
});

describe('explainContract on google-lro and http-202-location', () => {
  it('google-lro: the job ID is the Operation name, read at /v1/{+jobId}, AIP-151 derivation, result in response', () => {
    const google = withPreset('google-lro', { path: '/v1/projects/p/things:export' });
    expect(section(google, 'job')).toContain('  1. body field `name`');
    const status = text(section(google, 'status'));
    expect(status).toContain(`GET ${BASE}/v1/{+jobId}`);
    expect(status).toContain(
      'AIP-151: while `done` is not true the job is pending; when it is true, `error` means failure (cancelled when `error.code` is 1) and `response` means success',
    );
    expect(text(section(google, 'result'))).toContain(
      '1. field `response` of the answer that reported success is the result',
    );
    expect(text(section(google, 'cancel'))).toContain(`POST ${BASE}/v1/{+jobId}:cancel, sent once`);
  });

  it('http-202-location: polled at Location, 202 pending, 200/201/204 done with the body as the result', () => {
    const plain = withPreset('http-202-location', { path: '/reports' });
    expect(section(plain, 'job')).toContain('  1. header location: read with reading "monitor"');
    const status = text(section(plain, 'status'));
    expect(status).toContain('reading "monitor":');
    expect(status).toContain('GET the poll URL from the create answer');
    expect(status).toContain('moves polling there, same origin only');
    expect(status).toContain('HTTP 202: pending, whatever the body says');
    expect(status).toContain('an answer that states no state: HTTP 200, 201, 204 means success');
    expect(text(section(plain, 'result'))).toContain('the body of the answer that reported success is the result');
  });
});

describe('explainContract on the simulator rest preset', () => {
  const rest = preset('rest');

  it('states the credential by reference, the token header, the client reference and the synchronous success', () => {
    expect(text(section(rest, 'provider'))).toContain(
      'Authorization: Bearer <secret>, the secret read by the worker from environment variable ASYNCJOB_SIMULATOR_TOKEN',
    );
    const create = text(section(rest, 'create'));
    expect(create).toContain(
      'idempotency token: in header idempotency-key, the same on every repeat of this create (I1)',
    );
    expect(create).toContain('in body field `client_reference`');
    expect(create).toContain(
      'synchronous success (C3): HTTP 200 means done at once; the result is field `result` of that answer',
    );
  });

  it('names integrity checks, the batch shape, cancel, list reconciliation, the webhook and the poll hints', () => {
    expect(text(section(rest, 'result'))).toContain('SHA-256 (hex) from header x-content-sha256 of the result answer');
    expect(text(section(rest, 'result'))).toContain(
      'batch (R3): items in `items`, ID `id`, failed when `status` is failed',
    );
    expect(text(section(rest, 'cancel'))).toContain(
      `POST ${BASE}/v1/jobs/{jobId}/cancel, sent once (X1, X3); repeating it is harmless`,
    );
    expect(text(section(rest, 'cancel'))).toContain(
      'HTTP 501 or 405: the provider does not support cancel for this job; escalated as such, never sent again (X1)',
    );
    expect(text(section(rest, 'reconciliation'))).toContain(
      `GET ${BASE}/v1/jobs?client_reference={clientReference} (by the client reference)`,
    );
    expect(text(section(rest, 'webhook'))).toContain(
      'POST /webhooks/rest at the webhook receiver; signature in header x-signature',
    );
    expect(text(section(rest, 'status'))).toContain(
      'poll hints: seconds to wait in `poll_after_seconds`, the next check time in `next_check_at`',
    );
  });

  it('renders numbered sections under a heading; the base URL label replaces the base URL', () => {
    const lines = explainContract(rest, { baseUrlLabel: '${SIM_URL}' });
    expect(lines[0]).toMatch(/^rest: The simulator's rest dialect/);
    expect(lines.filter((l) => /^\d+\. /.test(l))).toEqual([
      '1. Provider',
      '2. Create',
      '3. Job ID and poll URL',
      '4. Status',
      '5. Result',
      '6. Cancel',
      '7. Reconciliation',
      '8. Webhook',
      '9. Timing and budgets',
    ]);
    expect(lines).toContain('   POST ${SIM_URL}/v1/jobs');
    expect(lines.join('\n')).not.toContain(BASE);
  });

  it('is computed from the validated contract: defaults appear although the document omits them', () => {
    const minimal = parseProviderContract(
      {
        name: 'm',
        baseUrl: BASE,
        credential: { scheme: 'none' },
        create: { path: '/jobs', jobId: [{ from: 'body', field: 'id' }] },
        status: { path: '/jobs/{jobId}', stateField: 'state', stateTable: { pending: ['run'], success: ['ok'] } },
        result: { url: [{ from: 'template', path: '/jobs/{jobId}/out' }] },
        reconciliation: { method: 'none' },
        collectSafeToRepeat: false,
        policy: { baseDelayMs: 10000 },
      },
      'm',
    );
    expect(text(section(minimal, 'create'))).toContain(`POST ${BASE}/jobs`);
    expect(text(section(minimal, 'create'))).toContain('accepted when the answer is HTTP 202, 201');
    expect(text(section(minimal, 'create'))).toContain('the create answer is not read for a state');
    expect(text(section(minimal, 'provider'))).toContain('header x-request-id');
    expect(text(section(minimal, 'result'))).toContain(
      'fetching the result is never repeated (R5): a failed download escalates to a human',
    );
    expect(text(section(minimal, 'policy'))).toContain('poll policy: baseDelayMs 10000 (default 5000)');
  });
});

describe('explainContract: each call as it is sent (request templates)', () => {
  const rpc = parseProviderContract(
    {
      name: 'rpc',
      baseUrl: BASE,
      credential: { scheme: 'none' },
      headers: { 'X-Client': { value: 'asyncjob' } },
      variables: {
        scope: { reserved: true, required: true, pattern: '^projects/[^/]+$', description: 'the project' },
        pageSize: { type: 'integer', default: '100' },
      },
      create: {
        path: '/{+scope}/jobs',
        query: { dryRun: 'false' },
        headers: { 'X-Target': { value: 'Svc.Start' } },
        body: { mode: 'template', json: { Input: '{payload}' }, contentType: 'application/x-amz-json-1.1' },
        jobId: [{ from: 'body', field: 'JobId' }],
      },
      status: {
        method: 'POST',
        path: '/{+scope}/jobs:get',
        headers: { Accept: { value: 'application/vnd.svc+json' }, 'X-Job': { template: 'job {jobId}' } },
        body: { json: { JobId: '{jobId}', Max: '{pageSize}' } },
        stateField: 'state',
        stateTable: { pending: ['run'], success: ['ok'] },
      },
      result: {
        url: [
          {
            from: 'template',
            method: 'POST',
            path: '/{+scope}/jobs:result',
            body: { raw: 'job={jobId}&next={nextToken}', contentType: 'application/x-www-form-urlencoded' },
          },
        ],
        paging: { itemsField: 'items', nextTokenField: 'next' },
      },
      cancel: { method: 'POST', path: '/{+scope}/jobs:cancel', idempotent: true, body: { json: { JobId: '{jobId}' } } },
      reconciliation: { method: 'none' },
      collectSafeToRepeat: true,
    },
    'rpc',
  );

  it('the create: URL template, query, accept, the content type of its body, its own headers, the body template', () => {
    expect(section(rpc, 'create').slice(0, 6)).toEqual([
      `POST ${BASE}/{+scope}/jobs`,
      '  query: dryRun=false (a parameter naming an unset variable is left out)',
      '  header accept: application/json',
      "  header content-type: application/x-amz-json-1.1 (the body's content type)",
      '  header x-target: "Svc.Start"',
      'body: the JSON template `{"Input":"{payload}"}` ("{payload}" is the payload; a member that is exactly an unset "{name}" is left out)',
    ]);
  });

  it("the status read by POST: the call's own accept replaces the default, a header template, the JSON body", () => {
    expect(section(rpc, 'status').slice(0, 5)).toEqual([
      `POST ${BASE}/{+scope}/jobs:get`,
      "  header content-type: application/json (the body's content type)",
      '  header accept: "application/vnd.svc+json"',
      '  header x-job: the template "job {jobId}"',
      '  body: JSON `{"JobId":"{jobId}","Max":"{pageSize}"}` (a member that is exactly "{name}" takes the value, and is left out when it is unset)',
    ]);
  });

  it('the result request with a raw body, paged by token; the cancel with its body', () => {
    const result = text(section(rpc, 'result'));
    expect(result).toContain(`  1. POST ${BASE}/{+scope}/jobs:result`);
    expect(result).toContain('header content-type: application/x-www-form-urlencoded');
    expect(result).toContain('body: `"job={jobId}&next={nextToken}"`, sent as written with its {name} values');
    expect(result).toContain(
      "paged by token: items in `items`, the next page's token in `next`, sent back as {nextToken} by the result request until an answer has none",
    );
    expect(text(section(rpc, 'cancel'))).toContain('  body: JSON `{"JobId":"{jobId}"}`');
  });

  it('the operation variables, and the contract-wide headers sent on every request', () => {
    const create = section(rpc, 'create');
    const at = create.indexOf(
      "operation variables, given at start (asyncjob start --var name=value) and named by every call's templates:",
    );
    expect(at).toBeGreaterThan(0);
    expect(create.slice(at + 1)).toEqual([
      '  scope: string, required, matching `^projects/[^/]+$`, at most 500 characters, may hold "/" (kept by {+scope}) (the project)',
      '  pageSize: integer, default "100", at most 500 characters, never holds "/"',
    ]);
    expect(section(rpc, 'provider')).toContain('  X-Client: "asyncjob"');
  });
});
