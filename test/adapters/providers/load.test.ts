import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_PRESETS,
  PRESET_NAMES,
  ProviderContractError,
  adapterFromContract,
  loadProviderContract,
  parseProviderContract,
} from '../../../src/adapters/providers';
import { BASE } from './helpers';

function issuesOf(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderContractError);
    expect((error as ProviderContractError).code).toBe('ASYNCJOB_ERR_ADAPTER_INVALID');
    return [...(error as ProviderContractError).issues];
  }
  throw new Error('expected the document to be refused');
}

async function rejection(promise: Promise<unknown>): Promise<ProviderContractError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderContractError);
  return error as ProviderContractError;
}

function restDocument(): Record<string, unknown> {
  return structuredClone(BUILT_IN_PRESETS.rest) as Record<string, unknown>;
}

describe('presets', () => {
  it.each(PRESET_NAMES)('the %s preset loads and validates with a baseUrl override', async (name) => {
    const contract = await loadProviderContract(name, { baseUrl: BASE });
    expect(contract.name).toBe(name);
    expect(contract.baseUrl).toBe(BASE);
    expect(contract.credential).toEqual({ scheme: 'bearer', secretEnv: 'ASYNCJOB_SIMULATOR_TOKEN' });
    expect(contract.requestIdHeader).toBe('x-request-id');
  });

  it('substitutes ${VAR} in baseUrl from the given environment', async () => {
    const contract = await loadProviderContract('lro', { env: { ASYNCJOB_SIMULATOR_URL: 'http://127.0.0.1:5555' } });
    expect(contract.baseUrl).toBe('http://127.0.0.1:5555');
  });

  it('names the missing environment variable of baseUrl', async () => {
    const error = await rejection(loadProviderContract('rest', { env: {} }));
    expect(error.issues).toEqual([
      { path: 'baseUrl', message: 'environment variable ASYNCJOB_SIMULATOR_URL is not set' },
    ]);
    expect(error.message).toContain(
      'provider contract "rest": baseUrl: environment variable ASYNCJOB_SIMULATOR_URL is not set',
    );
  });

  it('substitutes variables only in baseUrl, never in other fields', () => {
    const doc = restDocument();
    doc.description = 'jobs at ${JOBS_PATH}';
    const contract = parseProviderContract(doc, 'rest', { env: { ASYNCJOB_SIMULATOR_URL: BASE, JOBS_PATH: 'other' } });
    expect(contract.description).toBe('jobs at ${JOBS_PATH}');
    expect(contract.baseUrl).toBe(BASE);
  });

  it('the presets put the idempotency token where each dialect expects it (I1)', async () => {
    const rest = await loadProviderContract('rest', { baseUrl: BASE });
    const lro = await loadProviderContract('lro', { baseUrl: BASE });
    const ol = await loadProviderContract('operation-location', { baseUrl: BASE });
    expect(rest.create.idempotencyToken).toEqual({ in: 'header', name: 'idempotency-key' });
    expect(lro.create.idempotencyToken).toEqual({ in: 'body', field: 'request_id' });
    expect(ol.create.idempotencyToken).toEqual({ in: 'header', name: 'repeatability-request-id' });
    expect(adapterFromContract(ol).cancel).toEqual({ supported: true, idempotent: false });
    expect(adapterFromContract(rest).reconciliationMethod).toBe('list_by_client_reference');
    expect(adapterFromContract(lro).reconciliationMethod).toBe('lookup_by_token');
    expect(adapterFromContract(ol).reconciliationMethod).toBe('same_token_resend');
  });
});

describe('loading from files', () => {
  it('loads a YAML document by name from searchDirs before the presets', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-contracts-'));
    const doc = restDocument();
    doc.name = 'rest';
    doc.notFoundWindowMs = 1234;
    const { stringify } = await import('yaml');
    await writeFile(path.join(dir, 'rest.yaml'), stringify(doc));
    const contract = await loadProviderContract('rest', { searchDirs: [dir], baseUrl: BASE });
    expect(contract.notFoundWindowMs).toBe(1234);
  });

  it('loads a JSON document by path', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-contracts-'));
    const doc = restDocument();
    doc.name = 'reports';
    doc.baseUrl = 'https://reports.example.com';
    const file = path.join(dir, 'reports.json');
    await writeFile(file, JSON.stringify(doc));
    const contract = await loadProviderContract(file);
    expect(contract.name).toBe('reports');
    expect(contract.baseUrl).toBe('https://reports.example.com');
  });

  it('a document that does not parse names the file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-contracts-'));
    const file = path.join(dir, 'broken.yaml');
    await writeFile(file, 'name: [unclosed\n');
    const error = await rejection(loadProviderContract(file));
    expect(error.code).toBe('ASYNCJOB_ERR_ADAPTER_INVALID');
    expect(error.issues[0]?.message).toMatch(/^cannot parse broken\.yaml/);
  });

  it('an unknown name is ASYNCJOB_ERR_ADAPTER_NOT_FOUND', async () => {
    const error = await rejection(loadProviderContract('nope', { searchDirs: [tmpdir()] }));
    expect(error.code).toBe('ASYNCJOB_ERR_ADAPTER_NOT_FOUND');
    expect(error.message).toContain('rest, lro, operation-location');
  });
});

describe('a malformed document fails with every field named', () => {
  it('reports wrong types, missing fields and unknown keys all at once', () => {
    const doc = restDocument();
    const status = doc.status as Record<string, unknown>;
    (status.stateTable as Record<string, unknown>).success = [42];
    delete status.stateField;
    status.pollEvery = 5;
    (doc.create as Record<string, unknown>).acceptedStatuses = ['202'];
    delete doc.collectSafeToRepeat;
    doc.notFoundWindowMs = -1;
    const issues = issuesOf(() => parseProviderContract(doc, 'broken', { baseUrl: BASE }));
    const paths = issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'status.stateTable.success[0]',
        'status',
        'create.acceptedStatuses[0]',
        'collectSafeToRepeat',
        'notFoundWindowMs',
      ]),
    );
    expect(issues.find((i) => i.path === 'collectSafeToRepeat')?.message).toBe('Required');
    expect(issues.find((i) => i.path === 'status')?.message).toContain('pollEvery');
  });

  it('P1: a status without stateField or derive is refused, naming stateField', () => {
    const doc = restDocument();
    delete (doc.status as Record<string, unknown>).stateField;
    const issues = issuesOf(() => parseProviderContract(doc, 'x', { baseUrl: BASE }));
    expect(issues).toEqual([
      { path: 'status.stateField', message: 'give stateField, derive or whenNoState (how the state is read)' },
    ]);
  });

  it('P1: a state listed in two categories is refused', () => {
    const doc = restDocument();
    const table = (doc.status as Record<string, Record<string, unknown>>).stateTable as Record<string, unknown>;
    table.failure = ['failed', 'succeeded'];
    const issues = issuesOf(() => parseProviderContract(doc, 'x', { baseUrl: BASE }));
    expect(issues.some((i) => i.path.startsWith('status.stateTable') && i.message.includes('succeeded'))).toBe(true);
  });

  it('T4: an inline secret is refused without echoing its value', () => {
    const doc = restDocument();
    doc.credential = { scheme: 'bearer', token: 'sk-live-abcdef123456' };
    (doc.create as Record<string, unknown>).headers = { Authorization: { value: 'Bearer sk-live-abcdef123456' } };
    let message = '';
    const issues = issuesOf(() => {
      try {
        return parseProviderContract(doc, 'leaky', { baseUrl: BASE });
      } catch (error) {
        message = (error as Error).message;
        throw error;
      }
    });
    expect(issues.map((i) => i.path)).toEqual(
      expect.arrayContaining(['credential.token', 'create.headers.Authorization']),
    );
    expect(issues.find((i) => i.path === 'credential.token')?.message).toContain('by reference');
    expect(message).not.toContain('sk-live-abcdef123456');
  });

  it('T4: a literal or templated secret header is refused in every call, not only the create', () => {
    const doc = restDocument();
    (doc.status as Record<string, unknown>).headers = { 'X-Api-Key': { value: 'k-123456' } };
    doc.headers = { 'X-Auth-Token': { template: 'tok-{operationId}' } };
    const issues = issuesOf(() => parseProviderContract(doc, 'leaky', { baseUrl: BASE }));
    expect(issues.map((i) => i.path)).toEqual(
      expect.arrayContaining(['status.headers.X-Api-Key', 'headers.X-Auth-Token']),
    );
  });

  it('T4: a credential gives exactly one of secretEnv or secretFile', () => {
    const doc = restDocument();
    doc.credential = { scheme: 'header', headerName: 'X-Api-Key', secretEnv: 'A', secretFile: '/run/secrets/a' };
    const issues = issuesOf(() => parseProviderContract(doc, 'x', { baseUrl: BASE }));
    expect(issues).toContainEqual({
      path: 'credential.secretEnv',
      message: 'give exactly one of secretEnv or secretFile',
    });
  });

  it('C4: a path template must stay on baseUrl and use known placeholders', () => {
    const doc = restDocument();
    (doc.status as Record<string, unknown>).path = '//evil.example/v1/jobs/{id}';
    const issues = issuesOf(() => parseProviderContract(doc, 'x', { baseUrl: BASE }));
    const messages = issues.filter((i) => i.path === 'status.path').map((i) => i.message);
    expect(messages.some((m) => m.includes('single "/"'))).toBe(true);
    expect(messages.some((m) => m.includes('unknown placeholder {id}'))).toBe(true);
  });

  it('T1, T4: a contract never sets the headers the HTTP layer owns', () => {
    const doc = restDocument();
    const create = doc.create as Record<string, unknown>;
    create.headers = { Cookie: { from: 'token' }, 'X-Trace-ID': { value: 'fixed' } };
    create.idempotencyToken = { in: 'header', name: 'Authorization' };
    const issues = issuesOf(() => parseProviderContract(doc, 'x', { baseUrl: BASE }));
    expect(issues.map((i) => i.path).sort()).toEqual([
      'create.headers.Cookie',
      'create.headers.X-Trace-ID',
      'create.idempotencyToken.name',
    ]);
  });

  it('field paths with forbidden keys are refused', () => {
    const doc = restDocument();
    (doc.status as Record<string, unknown>).stateField = '__proto__.state';
    const issues = issuesOf(() => parseProviderContract(doc, 'x', { baseUrl: BASE }));
    expect(issues).toContainEqual({
      path: 'status.stateField',
      message: 'the key "__proto__" is not allowed in a field path',
    });
  });

  it('a baseUrl with credentials or another scheme is refused', () => {
    const doc = restDocument();
    const issues = issuesOf(() => parseProviderContract(doc, 'x', { baseUrl: 'ftp://user:pw@host' }));
    expect(issues.filter((i) => i.path === 'baseUrl').map((i) => i.message)).toEqual([
      'must be http: or https:',
      'must not carry credentials',
    ]);
  });

  it('P2: policy overrides are validated against the core poll policy', () => {
    const doc = restDocument();
    doc.policy = { baseDelayMs: 10_000, maxDelayMs: 1_000, pollsPerMinute: 3 };
    const issues = issuesOf(() => parseProviderContract(doc, 'x', { baseUrl: BASE }));
    expect(issues.some((i) => i.path.startsWith('policy') && i.message.includes('pollsPerMinute'))).toBe(true);
    doc.policy = { baseDelayMs: 100, maxDelayMs: 1_000 };
    expect(parseProviderContract(doc, 'x', { baseUrl: BASE }).policy).toEqual({ baseDelayMs: 100, maxDelayMs: 1_000 });
  });
});
