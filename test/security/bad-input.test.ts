/**
 * Bad requests: every field of a start request, a webhook signal, a cancel and a decision update, a provider
 * contract document and a simulator scenario, given the wrong type, empty, oversized and missing. Each is refused
 * with a typed error whose issues name the field, and nothing reaches Temporal (the client is a spy that fails the
 * test on any use), so nothing can be recorded half-way. (The real-server check that a refused start leaves no
 * workflow and no store entry is in test/integration/faults/security.test.ts.)
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { ProviderContractError } from '../../src/adapters/providers/errors';
import { loadProviderContract, parseProviderContract } from '../../src/adapters/providers/load';
import { AsyncJobClient, AsyncJobInputError } from '../../src/client';
import { MAX_PAYLOAD_CHARS, type StartRequest } from '../../src/core/operation';
import { loadScenarioFile, parseScenario, ScenarioError } from '../../src/simulator/scenario';

/** A Temporal client stand-in that records any use: validation must refuse before touching it. */
function spyClient(): { client: AsyncJobClient; touched: string[] } {
  const touched: string[] = [];
  const trap = (area: string): object =>
    new Proxy(
      {},
      {
        get: (_target, prop) => {
          touched.push(`${area}.${String(prop)}`);
          throw new Error(`Temporal was used: ${area}.${String(prop)}`);
        },
      },
    );
  const fake = {
    options: { namespace: 'default' },
    workflow: trap('workflow'),
    connection: trap('connection'),
    workflowService: trap('workflowService'),
  };
  return {
    client: new AsyncJobClient({ client: fake as unknown as Client, namespace: 'default', taskQueue: 'bad-input' }),
    touched,
  };
}

const valid: StartRequest = {
  operationId: 'op-bad-input-1',
  provider: 'rest',
  payload: { report: 'monthly-sales' },
  clientReference: 'ref-1',
  startedBy: 'service:billing',
  authorisedBy: 'policy:reports',
  createDeadline: { afterMs: 60_000 },
  resultDeadline: { afterMs: 3_600_000 },
  policy: { baseDelayMs: 1_000 },
};

const long = (n: number) => 'a'.repeat(n);
const MISSING = Symbol('missing');

/** [field, bad value, the issue path expected to name it]. */
const startCases: [string, unknown, string][] = [
  ...(['operationId', 'provider'] as const).flatMap((f): [string, unknown, string][] => [
    [f, 42, f],
    [f, '', f],
    [f, long(201), f],
    [f, 'has spaces/and slashes', f],
    [f, MISSING, f],
  ]),
  ['payload', 'report=monthly', 'payload'],
  ['payload', ['monthly'], 'payload'],
  ['payload', { blob: long(MAX_PAYLOAD_CHARS + 1) }, 'payload'],
  ['payload', { n: Number.NaN }, 'payload'],
  ['payload', MISSING, 'payload'],
  ['clientReference', 7, 'clientReference'],
  ['clientReference', '', 'clientReference'],
  ['clientReference', long(201), 'clientReference'],
  ...(['startedBy', 'authorisedBy'] as const).flatMap((f): [string, unknown, string][] => [
    [f, 42, f],
    [f, '', f],
    [f, long(201), f],
    [f, MISSING, f],
  ]),
  ...(['createDeadline', 'resultDeadline'] as const).flatMap((f): [string, unknown, string][] => [
    [f, 'in an hour', f],
    [f, {}, f],
    [f, { afterMs: -1 }, f],
    [f, { afterMs: 1.5 }, f],
    [f, { afterMs: 1e15 }, f],
    [f, { afterMs: 1_000, atMs: 5 }, f],
    [f, MISSING, f],
  ]),
  ['policy', 'fast', 'policy'],
  ['policy', { baseDelayMs: 'soon' }, 'policy.baseDelayMs'],
  ['policy', { baseDelayMs: 0 }, 'policy.baseDelayMs'],
  ['policy', { maxStatusRequests: 1e9 }, 'policy.maxStatusRequests'],
  ['policy', { minJitterRatio: 2 }, 'policy.minJitterRatio'],
];

function withField(base: Record<string, unknown>, field: string, value: unknown): Record<string, unknown> {
  const copy = { ...base };
  if (value === MISSING) delete copy[field];
  else copy[field] = value;
  return copy;
}

async function refusal(run: () => Promise<unknown>): Promise<AsyncJobInputError> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AsyncJobInputError);
  const input = error as AsyncJobInputError;
  expect(input.code).toBe('ASYNCJOB_ERR_INVALID_INPUT');
  return input;
}

describe('bad input is refused with the field named, and nothing is sent', () => {
  it('the valid request passes validation and only then reaches Temporal (the spy sees it)', async () => {
    const { client, touched } = spyClient();
    await expect(client.start(valid)).rejects.toThrow(/Temporal was used/);
    expect(touched.length).toBeGreaterThan(0);
  });

  it.each(
    startCases.map(([f, v, p]) => [f, v === MISSING ? 'missing' : JSON.stringify(v)?.slice(0, 40), v, p] as const),
  )(
    'I2: start request %s = %s is refused naming the field; Temporal untouched',
    async (field, _label, value, expectedPath) => {
      const { client, touched } = spyClient();
      const error = await refusal(() => client.start(withField(valid, field, value) as StartRequest));
      // The field itself, or the part of it that is wrong (`createDeadline.afterMs`).
      expect(
        error.issues.some((i) => i.path === expectedPath || i.path.startsWith(`${expectedPath}.`)),
        JSON.stringify(error.issues),
      ).toBe(true);
      expect(error.message).toContain(expectedPath);
      expect(touched).toEqual([]);
    },
  );

  it('an unknown field in a start request is refused by name', async () => {
    const { client, touched } = spyClient();
    const error = await refusal(() => client.start({ ...valid, credential: 'Bearer abc' } as unknown as StartRequest));
    expect(error.message).toContain('credential');
    expect(touched).toEqual([]);
  });

  it('every bad field of one request is named at once', async () => {
    const { client } = spyClient();
    const error = await refusal(() =>
      client.start({ ...valid, operationId: '', provider: 42, startedBy: '' } as unknown as StartRequest),
    );
    expect(error.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['operationId', 'provider', 'startedBy']));
  });

  const hint = { eventId: 'evt-1', remoteJobId: 'job_1', state: 'succeeded', occurredAt: '2026-11-29T10:00:00Z' };
  it.each([
    ['eventId', 42],
    ['eventId', ''],
    ['eventId', long(501)],
    ['eventId', MISSING],
    ['remoteJobId', 42],
    ['remoteJobId', ''],
    ['remoteJobId', long(501)],
    ['state', 7],
    ['state', long(501)],
    ['occurredAt', false],
    ['occurredAt', long(101)],
  ] as const)(
    'W1: webhook signal %s = bad value is refused naming the field; Temporal untouched',
    async (field, value) => {
      const { client, touched } = spyClient();
      const error = await refusal(() => client.signalWebhook('op-1', withField(hint, field, value) as never));
      expect(error.issues.map((i) => i.path)).toContain(field);
      expect(touched).toEqual([]);
    },
  );

  const cancel = { requestedBy: 'alice@example.com', reason: 'not needed', expectedEffect: 'the job stops' };
  it.each([
    ['requestedBy', 42],
    ['requestedBy', ''],
    ['requestedBy', long(201)],
    ['requestedBy', MISSING],
    ['reason', 42],
    ['reason', '   '],
    ['reason', long(2001)],
    ['reason', MISSING],
    ['expectedEffect', ''],
    ['expectedEffect', long(2001)],
  ] as const)(
    'X1: cancel update %s = bad value is refused naming the field; Temporal untouched',
    async (field, value) => {
      const { client, touched } = spyClient();
      const error = await refusal(() => client.cancel('op-1', withField(cancel, field, value) as never));
      expect(error.issues.map((i) => i.path)).toContain(field);
      expect(touched).toEqual([]);
    },
  );

  const decision = {
    option: 'extend',
    approvedBy: 'bob@example.com',
    reason: 'the quarter closes late',
    extendMs: 900_000,
    extraStatusRequests: 4,
  };
  it.each([
    ['option', 'continue?'],
    ['option', 42],
    ['option', MISSING],
    ['approvedBy', ''],
    ['approvedBy', long(201)],
    ['approvedBy', MISSING],
    ['reason', ''],
    ['reason', long(2001)],
    ['extendMs', -1],
    ['extendMs', 1.5],
    ['extendMs', '15m'],
    ['extraStatusRequests', -1],
    ['jobId', ''],
    ['jobId', long(501)],
  ] as const)(
    'A2: decide update %s = bad value is refused naming the field; Temporal untouched',
    async (field, value) => {
      const { client, touched } = spyClient();
      const error = await refusal(() => client.decide('op-1', withField(decision, field, value) as never));
      expect(error.issues.map((i) => i.path)).toContain(field);
      expect(touched).toEqual([]);
    },
  );
});

describe('bad provider contract documents name the field', () => {
  const preset = JSON.parse(
    readFileSync(path.join(__dirname, '..', '..', 'src', 'adapters', 'providers', 'presets', 'rest.json'), 'utf8'),
  ) as Record<string, unknown>;
  const load = (doc: unknown) =>
    parseProviderContract(doc, 'bad.json', { env: { ASYNCJOB_SIMULATOR_URL: 'http://127.0.0.1:9' } });
  const patch = (p: Record<string, unknown>) => ({ ...preset, ...p });
  const deep = (section: string, p: Record<string, unknown>) => ({
    ...preset,
    [section]: { ...(preset[section] as object), ...p },
  });

  it('the preset itself loads', () => {
    expect(load(preset).name).toBe('rest');
  });

  it.each([
    ['name', patch({ name: 42 })],
    ['name', patch({ name: '' })],
    ['name', patch({ name: long(300) })],
    ['name', withField(preset, 'name', MISSING)],
    ['baseUrl', patch({ baseUrl: 'not a url' })],
    ['baseUrl', patch({ baseUrl: '${NOT_SET_ANYWHERE}' })],
    ['create', withField(preset, 'create', MISSING)],
    ['create.method', deep('create', { method: 42 })],
    ['create.path', deep('create', { path: '' })],
    ['status.stateTable', deep('status', { stateTable: 'queued=pending' })],
    ['notFoundWindowMs', patch({ notFoundWindowMs: -1 })],
    ['notFoundWindowMs', patch({ notFoundWindowMs: 'five seconds' })],
    ['credential', patch({ credential: { scheme: 'bearer', token: 'sk-live-abc' } })],
    ['credential', withField(preset, 'credential', MISSING)],
  ] as const)('C4, T4: a contract with a bad %s is refused (ASYNCJOB_ERR_ADAPTER_INVALID) naming it', (field, doc) => {
    let error: unknown;
    try {
      load(doc);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProviderContractError);
    const contract = error as ProviderContractError;
    expect(contract.code).toBe('ASYNCJOB_ERR_ADAPTER_INVALID');
    expect(
      contract.issues.some((i) => i.path === field || i.path.startsWith(`${field}.`) || i.path.startsWith(`${field}[`)),
    ).toBe(true);
    expect(contract.message).toContain(field);
    // An inline secret is reported without echoing it.
    expect(contract.message).not.toContain('sk-live-abc');
  });

  it.each([null, [], 'rest', 42])('a contract document that is not an object (%j) is refused', (doc) => {
    expect(() => load(doc)).toThrow(ProviderContractError);
  });
});

describe('bad simulator scenario files name the field', () => {
  it.each([
    ['seed', { seed: 'seven' }],
    ['dialect', { dialect: 'soap' }],
    ['scripts.x.steps', { scripts: { x: { steps: 'queued' } } }],
    ['scripts.x.steps.0.state', { scripts: { x: { steps: [{ state: 42 }] } } }],
    ['scripts.x.steps.0.state', { scripts: { x: { steps: [{ state: '' }] } } }],
    ['scripts.x.steps.0.durationMs', { scripts: { x: { steps: [{ state: 'running', durationMs: -5 }] } } }],
    ['scripts.x.faults.0.on', { scripts: { x: { faults: [{ on: 'everything', fault: { kind: 'drop' } }] } } }],
    ['scripts.x.faults.0.nth', { scripts: { x: { faults: [{ on: 'status', nth: 0, fault: { kind: 'drop' } }] } } }],
    ['scripts.x.faults.0.fault', { scripts: { x: { faults: [{ on: 'status' }] } } }],
    [
      'scripts.x.faults.0.fault.ms',
      { scripts: { x: { faults: [{ on: 'status', fault: { kind: 'delay', ms: 600_001 } }] } } },
    ],
    [
      'scripts.x.faults.0.fault.sizeBytes',
      {
        scripts: {
          x: { faults: [{ on: 'status', fault: { kind: 'malformed', body: 'huge', sizeBytes: 2 * 1024 ** 3 } }] },
        },
      },
    ],
    ['faults.0.fault.status', { faults: [{ on: 'create', fault: { kind: 'http_error', status: 200 } }] }],
    ['webhook.url', { webhook: { url: 'not a url', secret: 's' } }],
    ['webhook.secret', { webhook: { url: 'http://127.0.0.1:1/hook', secret: '' } }],
    ['maxRecordedRequests', { maxRecordedRequests: -1 }],
  ] as const)(
    'a scenario with a bad %s is refused (ASYNCJOB_ERR_SIM_SCENARIO_INVALID) naming it',
    (field, scenario) => {
      let error: unknown;
      try {
        parseScenario(scenario, 'bad.yaml');
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ScenarioError);
      const invalid = error as ScenarioError;
      expect(invalid.code).toBe('ASYNCJOB_ERR_SIM_SCENARIO_INVALID');
      expect(invalid.issues.some((i) => i.startsWith(`${field}:`) || i.startsWith(`${field}.`))).toBe(true);
    },
  );
});

describe('bad files on disk name the file and the field', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'asyncjob-bad-files-'));
  const file = (name: string, text: string): string => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it('a scenario YAML file with a bad field names the file and the field path', () => {
    const p = file('bad-field.yaml', 'scripts:\n  slow:\n    steps:\n      - state: running\n        polls: -1\n');
    expect(() => loadScenarioFile(p)).toThrow(ScenarioError);
    try {
      loadScenarioFile(p);
    } catch (e) {
      expect((e as ScenarioError).source).toBe(p);
      expect((e as ScenarioError).issues.some((i) => i.startsWith('scripts.slow.steps.0.polls:'))).toBe(true);
    }
  });

  it.each([
    ['broken.yaml', 'scripts: [unclosed\n'],
    ['broken.json', '{"scripts": '],
    ['empty-list.yaml', '- just\n- a list\n'],
  ])('a scenario file that does not parse as a scenario (%s) is refused with the file named', (name, text) => {
    const p = file(name, text);
    expect(() => loadScenarioFile(p)).toThrow(new RegExp(name.replace('.', '\\.')));
  });

  it('a missing scenario file is a ScenarioError naming the path', () => {
    expect(() => loadScenarioFile(path.join(dir, 'nope.yaml'))).toThrow(ScenarioError);
  });

  it('a provider contract file that is not YAML/JSON, or is missing, is refused with a stable code', async () => {
    const broken = file('broken-provider.yaml', 'name: [oops\n');
    await expect(loadProviderContract(broken)).rejects.toMatchObject({ code: 'ASYNCJOB_ERR_ADAPTER_INVALID' });
    await expect(loadProviderContract(path.join(dir, 'absent.json'))).rejects.toMatchObject({
      code: 'ASYNCJOB_ERR_ADAPTER_NOT_FOUND',
    });
    await expect(loadProviderContract('../etc/passwd')).rejects.toBeInstanceOf(ProviderContractError);
  });

  it('a provider contract file with a bad field names the field', async () => {
    const preset = JSON.parse(
      readFileSync(path.join(__dirname, '..', '..', 'src', 'adapters', 'providers', 'presets', 'lro.json'), 'utf8'),
    ) as Record<string, unknown>;
    const p = file(
      'bad-lro.json',
      JSON.stringify({
        ...preset,
        baseUrl: 'http://127.0.0.1:1',
        status: { ...(preset.status as object), method: 'FETCH' },
      }),
    );
    await expect(loadProviderContract(p)).rejects.toSatisfy(
      (e: unknown) => e instanceof ProviderContractError && e.issues.some((i) => i.path.startsWith('status.method')),
    );
  });
});
