/**
 * Answer formats (V6): an answer's body is JSON when its content type says so (or a media type the contract lists
 * in `jsonContentTypes`), or as a reading's `format` declares; `text` and `binary` are never parsed (the HTTP
 * status and headers decide). Contract validation and interpretation, with answers as the HTTP layer hands them
 * over (see test/adapters/http/response-body.test.ts for how it parses them).
 */
import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_PRESETS,
  adapterFromContract,
  interpretCreate,
  interpretStatus,
  parseProviderContract,
  ProviderContractError,
  type ProviderContract,
} from '../../../src/adapters/providers';
import { explainContract } from '../../../src/adapters/providers/explain';
import { BASE, answer, valid } from './helpers';

/** The rest preset with `status` and `create` parts replaced or added. */
function restDocument(changes: { create?: object; status?: object; top?: object } = {}) {
  const rest = structuredClone(BUILT_IN_PRESETS.rest) as Record<string, unknown> & {
    create: Record<string, unknown>;
    status: Record<string, unknown>;
  };
  delete rest.webhook;
  return {
    ...rest,
    ...changes.top,
    create: { ...rest.create, ...changes.create },
    status: { ...rest.status, ...changes.status },
  };
}

function contract(changes: Parameters<typeof restDocument>[0] = {}): ProviderContract {
  return parseProviderContract(restDocument(changes), 'test', { baseUrl: BASE });
}

function problems(document: unknown): string {
  try {
    parseProviderContract(document, 'test', { baseUrl: BASE });
    return '';
  } catch (error) {
    if (!(error instanceof ProviderContractError)) throw error;
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`).join('\n');
  }
}

/** A JSON status answer labelled `contentType`, as the HTTP layer hands it over when told to parse it. */
function labelled(contentType: string, json: unknown, parsed: boolean) {
  const text = JSON.stringify(json);
  return answer(200, {
    headers: { 'content-type': contentType },
    text,
    ...(parsed ? { json } : { parseError: `the content type ${contentType} is not JSON` }),
  });
}

describe('answer formats: the contract (V6)', () => {
  it('V6: jsonContentTypes are media types, stored lower-cased', () => {
    const c = contract({ top: { jsonContentTypes: ['Application/X-Amz-Json-1.1', 'text/plain'] } });
    expect(c.jsonContentTypes).toEqual(['application/x-amz-json-1.1', 'text/plain']);
    expect(problems(restDocument({ top: { jsonContentTypes: ['text/plain; charset=utf-8'] } }))).toContain(
      'jsonContentTypes[0]: a media type such as application/x-amz-json-1.1 (type/subtype, no parameters)',
    );
  });

  it('V6: format is json, text or binary, on the status section, a named reading and the create answer', () => {
    const c = contract({
      create: { format: 'json' },
      status: {
        format: 'json',
        readings: { monitor: { format: 'text', whenNoState: { pending: [202], success: [200] } } },
      },
    });
    expect(c.create.format).toBe('json');
    expect(c.status.format).toBe('json');
    expect(c.status.readings?.monitor?.format).toBe('text');
    expect(problems(restDocument({ status: { format: 'xml' } }))).toContain('status.format');
  });

  it('V6: a text or binary reading reads nothing from the body: no stateField, no derive', () => {
    const found = problems(
      restDocument({ status: { readings: { raw: { format: 'binary', stateField: 'state', stateTable: {} } } } }),
    );
    expect(found).toContain(
      'status.readings.raw.stateField: format binary never parses the body: read the state with whenNoState (the HTTP status) instead',
    );
  });

  it('V6: a text or binary create answer names its job in a header, never a body field', () => {
    const found = problems(restDocument({ create: { format: 'text' } }));
    expect(found).toContain("create.jobId[0].from: format text never parses the create answer's body");
    expect(found).toContain("create.statusUrl[1].from: format text never parses the create answer's body");
    expect(found).toContain('create.synchronousSuccess');
  });
});

describe('answer formats: reading answers (V6)', () => {
  const running = { job_id: 'job-7', state: 'running' };

  it('V6: by default a body labelled text/plain is not JSON: the answer is unreadable', () => {
    const o = valid(interpretStatus(contract(), labelled('text/plain', running, false), { jobId: 'job-7' }));
    expect(o.signal).toBe('unreadable');
    expect(o.parseProblem).toContain('the content type text/plain is not JSON');
  });

  it.each([
    ['text/plain; charset=utf-8', { status: { format: 'json' } }],
    ['application/x-amz-json-1.1', { status: { format: 'json' } }],
    ['application/x-amz-json-1.1', { top: { jsonContentTypes: ['application/x-amz-json-1.1'] } }],
  ])('V6: a JSON answer labelled %s is read when the adapter says so', (contentType, changes) => {
    const o = valid(interpretStatus(contract(changes), labelled(contentType, running, true), { jobId: 'job-7' }));
    expect(o).toMatchObject({ signal: 'ok', remoteState: 'running', category: 'pending' });
  });

  it('V6, S2: format json with a body that does not parse is unreadable, naming why', () => {
    const given = answer(200, {
      headers: { 'content-type': 'text/plain' },
      text: '{"state": "runn',
      parseError: 'the body is not valid JSON: Unterminated string in JSON at position 15',
    });
    const o = valid(interpretStatus(contract({ status: { format: 'json' } }), given, { jobId: 'job-7' }));
    expect(o.signal).toBe('unreadable');
    expect(o.parseProblem).toContain('the body is not valid JSON');
  });

  it.each(['text', 'binary'] as const)(
    'V6: a %s reading never reads the body, even JSON-labelled: the HTTP status decides',
    (format) => {
      const c = contract({
        status: {
          format,
          stateField: undefined,
          stateTable: undefined,
          whenNoState: { pending: [202], success: [200] },
        },
      });
      const done = valid(interpretStatus(c, answer(200, { json: { state: 'failed' } }), { jobId: 'job-7' }));
      expect(done).toMatchObject({ signal: 'ok', category: 'success' });
      expect(done.remoteState).toBe('http_200');
      const pending = valid(
        interpretStatus(c, answer(202, { text: '\u0000\u0001 not text at all' }), { jobId: 'job-7' }),
      );
      expect(pending).toMatchObject({ signal: 'ok', category: 'pending' });
      expect(pending.parseProblem).toBeUndefined();
    },
  );

  it('V6: a named reading keeps its own format', () => {
    const c = contract({
      status: { readings: { monitor: { format: 'text', whenNoState: { pending: [202], success: [200] } } } },
    });
    const o = valid(
      interpretStatus(c, answer(200, { text: 'done', headers: { 'content-type': 'text/plain' } }), {
        jobId: 'job-7',
        statusUrl: `${BASE}/v1/monitor/1`,
        pollReading: 'monitor',
      }),
    );
    expect(o).toMatchObject({ signal: 'ok', category: 'success' });
  });

  it('V6: the create answer is read with create.format', () => {
    const c = contract({ create: { format: 'json' } });
    const o = valid(
      interpretCreate(
        c,
        answer(202, {
          headers: { 'content-type': 'text/plain', location: '/v1/jobs/job-7' },
          text: JSON.stringify({ job_id: 'job-7', state: 'queued' }),
          json: { job_id: 'job-7', state: 'queued' },
        }),
      ),
    );
    expect(o).toMatchObject({ signal: 'ok', remoteJobId: 'job-7', category: 'pending' });
    const byDefault = valid(
      interpretCreate(
        contract(),
        answer(202, {
          headers: { 'content-type': 'text/plain' },
          text: JSON.stringify({ job_id: 'job-7', state: 'queued' }),
          parseError: 'the content type text/plain is not JSON',
        }),
      ),
    );
    expect(byDefault.signal).toBe('unreadable');
  });
});

describe('answer formats: what the HTTP layer is asked for (V6)', () => {
  const c = contract({
    create: { format: 'json' },
    status: {
      format: 'text',
      stateField: undefined,
      stateTable: undefined,
      whenNoState: { pending: [202], success: [200] },
      readings: { monitor: { format: 'binary', whenNoState: { pending: [202], success: [200] } } },
    },
  });
  const adapter = adapterFromContract(c);

  it("V6: each call asks for its reading's format: the create answer, the status reading in use", () => {
    expect(adapter.answerFormat?.('create')).toBe('json');
    expect(adapter.answerFormat?.('status')).toBe('text');
    expect(adapter.answerFormat?.('status', { pollReading: 'monitor' })).toBe('binary');
    expect(adapter.answerFormat?.('cancel')).toBeUndefined();
    expect(adapter.answerFormat?.('collect')).toBeUndefined();
  });

  it('V6, U2: a lookup answer is read by its content type; a create re-sent to reconcile as a create answer', () => {
    expect(adapter.answerFormat?.('reconcile')).toBeUndefined();
    expect(adapter.answerFormat?.('reconcile', { resend: true })).toBe('json');
  });
});

describe('answer formats: explain (V6)', () => {
  it('V6: explain says which answers are read as JSON, and how each reading takes its body', () => {
    const text = explainContract(
      contract({
        top: { jsonContentTypes: ['application/x-amz-json-1.1'] },
        create: { format: 'json' },
        status: { readings: { monitor: { format: 'text', whenNoState: { pending: [202], success: [200] } } } },
      }),
    ).join('\n');
    expect(text).toContain('answers labelled application/x-amz-json-1.1 are read as JSON too');
    expect(text).toContain('the create answer: read as JSON whatever its content type (format json, V6)');
    expect(text).toContain('the answer: never parsed (format text); its HTTP status and headers decide (V6)');
  });
});
