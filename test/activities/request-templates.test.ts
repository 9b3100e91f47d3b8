/**
 * Request templates through the activities (R1, P9): a provider in the RPC style (every call a POST to `/` naming
 * its action in a header, the job in a JSON body of its own content type) is created, read and collected, its
 * result paged by a token the result request sends back as `{nextToken}` until an answer has none. A small
 * loopback server plays the provider and records every request as it arrived.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities, type AsyncJobActivities } from '../../src/activities';
import { FileArtifactStore } from '../../src/adapters/artifacts/artifact-store';
import { createProviderRegistry, type ProviderRegistry } from '../../src/adapters/providers/registry';
import { openSqliteStore, type SqliteOperationStore } from '../../src/adapters/store/sqlite-store';
import { newRecord, reserveStatus, step } from './harness';

const JSON_TYPE = 'application/x-amz-json-1.1';
type Pages = Record<string, { Blocks: number[]; NextToken?: string }>;
/** The result's pages: each names the next by its token, the last names none. */
const PAGES: Pages = {
  '': { Blocks: [1, 2], NextToken: 'tok/1+a==' },
  'tok/1+a==': { Blocks: [3], NextToken: 'tok-2' },
  'tok-2': { Blocks: [4, 5] },
};

const CONTRACT = {
  name: 'pager',
  baseUrl: 'http://127.0.0.1:1',
  credential: { scheme: 'none' },
  jsonContentTypes: [JSON_TYPE],
  variables: { pageSize: { type: 'integer', default: '2' } },
  create: {
    method: 'POST',
    path: '/',
    headers: { 'X-Target': { value: 'Svc.StartJob' } },
    body: { mode: 'template', json: { Input: '{payload}' }, contentType: JSON_TYPE },
    idempotencyToken: { in: 'body', field: 'ClientRequestToken' },
    acceptedStatuses: [200],
    jobId: [{ from: 'body', field: 'JobId' }],
  },
  status: {
    method: 'POST',
    path: '/',
    headers: { 'X-Target': { value: 'Svc.GetJob' } },
    body: { json: { JobId: '{jobId}', MaxResults: '{pageSize}' }, contentType: JSON_TYPE },
    stateField: 'JobStatus',
    stateTable: { pending: ['IN_PROGRESS'], success: ['SUCCEEDED'], failure: ['FAILED'] },
  },
  result: {
    url: [
      {
        from: 'template',
        method: 'POST',
        path: '/',
        headers: { 'X-Target': { value: 'Svc.GetJob' } },
        body: {
          json: { JobId: '{jobId}', MaxResults: '{pageSize}', NextToken: '{nextToken}' },
          contentType: JSON_TYPE,
        },
      },
    ],
    paging: { itemsField: 'Blocks', nextTokenField: 'NextToken' },
  },
  reconciliation: { method: 'same_token_resend' },
  collectSafeToRepeat: true,
};

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** The provider: StartJob answers a job ID; GetJob answers SUCCEEDED with the page its NextToken names. */
async function startProvider(): Promise<{ url: string; seen: Seen[]; server: Server; pages: { now: Pages } }> {
  const seen: Seen[] = [];
  const pages = { now: PAGES };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const answer =
        req.headers['x-target'] === 'Svc.StartJob'
          ? { JobId: 'job-1' }
          : { JobStatus: 'SUCCEEDED', ...pages.now[typeof body.NextToken === 'string' ? body.NextToken : ''] };
      res.writeHead(200, { 'content-type': JSON_TYPE }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}`, seen, server, pages };
}

describe('request templates through the activities (R1, P9)', () => {
  let provider: Awaited<ReturnType<typeof startProvider>>;
  let dir: string;
  let store: SqliteOperationStore;
  let registry: ProviderRegistry;
  let a: AsyncJobActivities;

  beforeAll(async () => {
    provider = await startProvider();
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-templates-'));
    await writeFile(path.join(dir, 'pager.json'), JSON.stringify(CONTRACT));
    store = await openSqliteStore({ path: path.join(dir, 'store.db') });
    registry = await createProviderRegistry({
      providers: [{ name: 'pager', path: path.join(dir, 'pager.json') }],
      baseUrls: { pager: provider.url },
      env: {},
      http: { connectTimeoutMs: 2_000, headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000 },
    });
    a = createActivities({
      store,
      providers: registry,
      artifacts: new FileArtifactStore(path.join(dir, 'artifacts')),
      logger: { info: () => undefined, warn: () => undefined },
    });
  });
  afterAll(async () => {
    await registry?.close();
    await store?.close();
    await new Promise<void>((resolve) => provider?.server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it('R1: each call is sent as its template says, and a result paged by token is collected whole', async () => {
    const payload = { document: 'invoice.pdf' };
    const caps = {
      capabilities: registry.get('pager').facts.capabilities,
      reconciliation: registry.get('pager').facts.reconciliation,
    };
    let record = await step(a.recordIntent, { record: newRecord('pager', payload) });
    record = await step(a.createJob, { record, random: 0.5, payload });
    expect(record.jobId).toBe('job-1');
    record = await step(a.readStatus, { record: await reserveStatus(record, caps), random: 0.5 });
    expect(record.localState).toBe('result_collecting');
    record = await step(a.collectResult, { record, random: 0.5 });
    expect(record.localState).toBe('succeeded');
    const stored = await readFile(new URL(record.result!.artifactLocation!), 'utf8');
    expect(JSON.parse(stored)).toEqual([1, 2, 3, 4, 5]);

    for (const request of provider.seen) {
      expect(request).toMatchObject({ method: 'POST', url: '/' });
      expect(request.headers['content-type']).toBe(JSON_TYPE);
    }
    expect(provider.seen.map((r) => [r.headers['x-target'], r.body])).toEqual([
      ['Svc.StartJob', { Input: payload, ClientRequestToken: record.idempotencyToken }],
      ['Svc.GetJob', { JobId: 'job-1', MaxResults: 2 }],
      ['Svc.GetJob', { JobId: 'job-1', MaxResults: 2 }],
      ['Svc.GetJob', { JobId: 'job-1', MaxResults: 2, NextToken: 'tok/1+a==' }],
      ['Svc.GetJob', { JobId: 'job-1', MaxResults: 2, NextToken: 'tok-2' }],
    ]);
  });

  it('R1: a paged result that fits one page is stored as its items, the same shape as many pages', async () => {
    provider.pages.now = { '': { Blocks: [9] } };
    const payload = { document: 'receipt.pdf' };
    const caps = {
      capabilities: registry.get('pager').facts.capabilities,
      reconciliation: registry.get('pager').facts.reconciliation,
    };
    let record = await step(a.recordIntent, { record: newRecord('pager', payload) });
    record = await step(a.createJob, { record, random: 0.5, payload });
    record = await step(a.readStatus, { record: await reserveStatus(record, caps), random: 0.5 });
    record = await step(a.collectResult, { record, random: 0.5 });
    expect(record.localState).toBe('succeeded');
    expect(JSON.parse(await readFile(new URL(record.result!.artifactLocation!), 'utf8'))).toEqual([9]);
  });
});
