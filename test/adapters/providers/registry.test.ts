/**
 * The provider registry: adapters and contracts by name, one HTTP client per provider bound to its origin with
 * the credential resolved by reference, the facts the workflow reads, and typed errors.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adapterFromContract, loadProviderContract, ProviderContractError } from '../../../src/adapters/providers';
import {
  createProviderRegistry,
  loadProviderRegistry,
  ProviderRegistryError,
} from '../../../src/adapters/providers/registry';
import { BUILT_IN_PRESETS } from '../../../src/adapters/providers/presets';
import { DEFAULT_TASK_QUEUE, providerTaskQueue } from '../../../src/core/task-queues';

const SECRET = 'registry-secret-token-5c1e0b7d';

interface Recorder {
  url: string;
  seen: IncomingHttpHeaders[];
  server: Server;
}

async function recorder(): Promise<Recorder> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}`, seen, server };
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('provider registry', () => {
  let provider: Recorder;
  let foreign: Recorder;
  let dir: string;

  beforeAll(async () => {
    provider = await recorder();
    foreign = await recorder();
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-registry-'));
  });
  afterAll(async () => {
    await new Promise<void>((r) => provider.server.close(() => r()));
    await new Promise<void>((r) => foreign.server.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  });

  /** The `rest` preset alone, on the test's provider, with the deployment options given. */
  const loadRest = (options: { taskQueue?: string; ownQueues?: 'all' }) =>
    loadProviderRegistry({ names: ['rest'], baseUrls: { rest: provider.url }, env: {}, ...options });

  it('F9: the provider queues of a deployment are scoped by its own task queue', async () => {
    const billing = await loadRest({ taskQueue: 'billing' });
    try {
      expect(billing.get('rest').taskQueue).toBe('billing-provider-rest');
    } finally {
      await billing.close();
    }
  });

  it("F9: a provider's calls run on the workflows' queue unless it is given its own (a rate-limited provider)", async () => {
    const registry = await loadProviderRegistry({
      names: ['rest', 'operation-location'],
      baseUrls: { rest: provider.url, 'operation-location': provider.url },
      env: {},
      taskQueue: 'billing',
      ownQueues: ['operation-location'],
    });
    const all = await loadRest({ ownQueues: 'all' });
    try {
      expect(registry.get('rest').facts).not.toHaveProperty('taskQueue');
      expect(registry.get('operation-location').facts.taskQueue).toBe('billing-provider-operation-location');
      expect(all.get('rest').facts.taskQueue).toBe('asyncjob-provider-rest');
    } finally {
      await registry.close();
      await all.close();
    }
  });

  it('loads presets by name with the facts the workflow reads and their own task queues', async () => {
    const registry = await loadProviderRegistry({
      names: ['rest', 'operation-location'],
      baseUrls: { rest: provider.url, 'operation-location': provider.url },
      env: {},
    });
    try {
      expect(registry.names()).toEqual(['operation-location', 'rest']);
      expect(registry.get('rest').facts).toEqual({
        name: 'rest',
        capabilities: { cancel: true, repeatableCollect: true, sameTokenResend: true },
        reconciliation: 'list_by_client_reference',
        // H3: the preset's notFoundWindowMs is the provider's default window.
        policy: { notFoundWindowMs: 5000 },
      });
      expect(registry.get('operation-location').facts).toMatchObject({
        reconciliation: 'same_token_resend',
        capabilities: { cancel: true },
      });
      expect(registry.get('operation-location').taskQueue).toBe(
        providerTaskQueue(DEFAULT_TASK_QUEUE, 'operation-location'),
      );
      expect(registry.get('rest').adapter.baseUrl.startsWith(provider.url)).toBe(true);
    } finally {
      await registry.close();
    }
  });

  it('an unknown name is a typed ASYNCJOB_ERR_PROVIDER_UNKNOWN naming the known ones, also after close', async () => {
    const registry = await loadProviderRegistry({ names: ['rest'], baseUrls: { rest: provider.url }, env: {} });
    const error = thrown(() => registry.get('acme'));
    expect(error).toBeInstanceOf(ProviderRegistryError);
    expect(error).toMatchObject({ code: 'ASYNCJOB_ERR_PROVIDER_UNKNOWN', provider: 'acme' });
    expect((error as Error).message).toContain('known: rest');
    await registry.close();
    await registry.close();
    expect(thrown(() => registry.get('rest'))).toMatchObject({ code: 'ASYNCJOB_ERR_PROVIDER_UNKNOWN' });
  });

  it('T4, C4: the credential is resolved by reference and sent to the provider origin only', async () => {
    const contract = await loadProviderContract('rest', { baseUrl: provider.url });
    const registry = await createProviderRegistry({
      providers: [adapterFromContract(contract)],
      env: { ASYNCJOB_SIMULATOR_TOKEN: SECRET },
    });
    try {
      const { http } = registry.get('rest');
      const own = await http.send({ method: 'GET', url: `${provider.url}/v1/jobs/x`, traceId: 'trace-registry-1' });
      expect(own.status).toBe(200);
      expect(provider.seen.at(-1)?.authorization).toBe(`Bearer ${SECRET}`);
      expect(provider.seen.at(-1)?.['x-trace-id']).toBe('trace-registry-1');
      expect(JSON.stringify(own)).not.toContain(SECRET);
      const elsewhere = await http.send({ method: 'GET', url: `${foreign.url}/steal`, traceId: 'trace-registry-1' });
      expect(elsewhere).toMatchObject({ outcome: 'refused', errorCategory: 'foreign_origin' });
      expect(foreign.seen).toEqual([]);
    } finally {
      await registry.close();
    }
  });

  it('T4: every scheme is wired from the document: basic, query and aws-sigv4 reach the provider, nothing recorded', async () => {
    const contract = await loadProviderContract('rest', { baseUrl: provider.url });
    const schemes = [
      { scheme: 'basic', username: 'reports', secretEnv: 'REPORTS_PASSWORD' },
      { scheme: 'query', parameter: 'key', secretEnv: 'REPORTS_PASSWORD' },
      { scheme: 'aws-sigv4', region: 'us-east-1', service: 'execute-api' },
    ] as const;
    const registry = await createProviderRegistry({
      providers: schemes.map((credential) => adapterFromContract({ ...contract, name: credential.scheme, credential })),
      env: { REPORTS_PASSWORD: SECRET },
      awsChain: () => async () => ({ accessKeyId: 'AKIDREGISTRY', secretAccessKey: SECRET }),
    });
    try {
      const sent = [];
      for (const credential of schemes) {
        const exchange = await registry
          .get(credential.scheme)
          .http.send({ method: 'GET', url: `${provider.url}/v1/jobs/z`, traceId: 'trace-registry-3' });
        expect(exchange.status).toBe(200);
        expect(JSON.stringify(exchange)).not.toContain(SECRET);
        sent.push(provider.seen.at(-1)!);
      }
      expect(sent[0]!.authorization).toBe(`Basic ${Buffer.from(`reports:${SECRET}`).toString('base64')}`);
      expect(sent[1]!.authorization).toBeUndefined();
      expect(String(sent[2]!.authorization)).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDREGISTRY\/\d{8}\/us-east-1\/execute-api\//,
      );
    } finally {
      await registry.close();
    }
  });

  it('T4: a missing secret refuses the request (credential_unavailable) and nothing is sent', async () => {
    const registry = await loadProviderRegistry({ names: ['rest'], baseUrls: { rest: provider.url }, env: {} });
    try {
      const before = provider.seen.length;
      const exchange = await registry
        .get('rest')
        .http.send({ method: 'GET', url: `${provider.url}/v1/jobs/y`, traceId: 'trace-registry-2' });
      expect(exchange).toMatchObject({ outcome: 'refused', errorCategory: 'credential_unavailable' });
      expect(provider.seen.length).toBe(before);
    } finally {
      await registry.close();
    }
  });

  it('registers a contract file under the given name, and refuses a name given twice', async () => {
    const file = path.join(dir, 'reports.json');
    await writeFile(
      file,
      JSON.stringify({
        ...(BUILT_IN_PRESETS.rest as Record<string, unknown>),
        name: 'reports-v2',
        baseUrl: provider.url,
      }),
    );
    const registry = await createProviderRegistry({ providers: [{ name: 'reports', path: file }], env: {} });
    try {
      expect(registry.get('reports').adapter.name).toBe('reports');
      expect(registry.get('reports').taskQueue).toBe('asyncjob-provider-reports');
    } finally {
      await registry.close();
    }
    const adapter = adapterFromContract(await loadProviderContract('rest', { baseUrl: provider.url }));
    await expect(createProviderRegistry({ providers: [adapter, adapter] })).rejects.toMatchObject({
      code: 'ASYNCJOB_ERR_PROVIDER_DUPLICATE',
      provider: 'rest',
    });
  });

  it('a contract file is served under its own name:, and a file whose name disagrees is refused at start', async () => {
    const file = path.join(dir, 'reports-v3.json');
    await writeFile(
      file,
      JSON.stringify({
        ...(BUILT_IN_PRESETS.rest as Record<string, unknown>),
        name: 'reports-v3',
        baseUrl: provider.url,
      }),
    );
    const registry = await createProviderRegistry({ providers: [{ path: file }], env: {} });
    expect(registry.names()).toEqual(['reports-v3']);
    await registry.close();
    const renamed = path.join(dir, 'acme.json');
    await writeFile(
      renamed,
      JSON.stringify({
        ...(BUILT_IN_PRESETS.rest as Record<string, unknown>),
        name: 'reports-v3',
        baseUrl: provider.url,
      }),
    );
    const error = await createProviderRegistry({ providers: [{ path: renamed }], env: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderContractError);
    expect((error as Error).message).toContain('the document is named "reports-v3" but found as "acme"');
  });

  it('a malformed contract fails to load with a message naming the field', async () => {
    const file = path.join(dir, 'broken.json');
    const broken = structuredClone(BUILT_IN_PRESETS.rest) as Record<string, unknown>;
    delete (broken.status as Record<string, unknown>).stateTable;
    await writeFile(file, JSON.stringify({ ...broken, baseUrl: provider.url }));
    const error = await createProviderRegistry({ providers: [{ name: 'broken', path: file }], env: {} }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderContractError);
    expect(error).toMatchObject({ code: 'ASYNCJOB_ERR_ADAPTER_INVALID' });
    expect((error as Error).message).toContain('status.stateTable');
  });
});
