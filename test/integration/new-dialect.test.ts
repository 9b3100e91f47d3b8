/**
 * The README's promise, end to end: a provider the simulator does NOT speak (the "Acme Exports v2" dialect of
 * docs/writing-an-adapter.md: body token, `201` with a nested job, states QUEUED/BUILDING/READY, a header API key,
 * a base64 checksum, a CSV download) is driven to a verified result with the documented contract, the
 * `asyncjob worker` process and the `asyncjob start --wait` command alone. The contract is read from the doc
 * itself, so the doc cannot drift from what works. Acme is a small real HTTP server written from the doc's
 * description of the provider (the simulator cannot answer in this dialect).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniqueId } from '../setup/temporal';

const API_KEY = `acme-key-${randomBytes(12).toString('hex')}`;
const CLI = path.join(__dirname, '..', '..', 'bin', 'asyncjob');
const CSV = 'id,amount\n1,10\n2,20\n3,30\n';

interface AcmeExport {
  id: string;
  dedupeKey: string;
  clientRef?: string;
  reads: number;
}

/** Acme Exports v2 as docs/writing-an-adapter.md describes it: READY on the third read. */
function startAcme(): Promise<{
  url: string;
  exports: AcmeExport[];
  seen: { path: string; apiKey: boolean }[];
  close(): Promise<void>;
}> {
  const exports: AcmeExport[] = [];
  const seen: { path: string; apiKey: boolean }[] = [];
  const view = (e: AcmeExport) => {
    const status = e.reads >= 2 ? 'READY' : e.reads === 1 ? 'BUILDING' : 'QUEUED';
    return {
      export: {
        id: e.id,
        status,
        completion: status === 'READY' ? 1 : e.reads * 0.4,
        updated: new Date().toISOString(),
        links: {
          self: `/api/v2/exports/${e.id}`,
          ...(status === 'READY' ? { download: `/api/v2/exports/${e.id}/file` } : {}),
        },
        ...(status === 'READY'
          ? {
              checksum: { sha256: createHash('sha256').update(CSV).digest('base64') },
              bytes: Buffer.byteLength(CSV),
              rows: 3,
            }
          : {}),
      },
    };
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://acme');
    seen.push({ path: url.pathname, apiKey: req.headers['x-api-key'] === API_KEY });
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-acme-request': randomUUID() });
      res.end(JSON.stringify(body));
    };
    if (req.headers['x-api-key'] !== API_KEY) return json(401, { error: 'bad key' });
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && url.pathname === '/api/v2/exports') {
        const body = JSON.parse(raw) as { dedupe_key?: string };
        const existing = exports.find((e) => e.dedupeKey === body.dedupe_key);
        if (existing) return json(200, view(existing));
        const created: AcmeExport = {
          id: `exp_${randomBytes(6).toString('hex')}`,
          dedupeKey: String(body.dedupe_key),
          reads: 0,
          ...(typeof req.headers['x-client-ref'] === 'string' ? { clientRef: req.headers['x-client-ref'] } : {}),
        };
        exports.push(created);
        return json(201, view(created));
      }
      const file = /^\/api\/v2\/exports\/([^/]+)\/file$/.exec(url.pathname);
      if (req.method === 'GET' && file) {
        res.writeHead(200, { 'content-type': 'text/csv', 'content-length': Buffer.byteLength(CSV) });
        return res.end(CSV);
      }
      const one = /^\/api\/v2\/exports\/([^/]+)$/.exec(url.pathname);
      const found = one ? exports.find((e) => e.id === one[1]) : undefined;
      if (req.method === 'GET' && found) {
        const answer = view(found);
        found.reads += 1;
        return json(200, answer);
      }
      if (req.method === 'GET' && url.pathname === '/api/v2/exports') {
        return json(200, {
          data: exports
            .filter((e) => e.clientRef === url.searchParams.get('client_ref'))
            .map((e) => ({ id: e.id, client_ref: e.clientRef })),
        });
      }
      json(404, { error: 'not found' });
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        exports,
        seen,
        close: () => new Promise<void>((r) => server.close(() => r())),
      }),
    ),
  );
}

describe('a new provider dialect, with the documented contract and the CLI alone', () => {
  let acme: Awaited<ReturnType<typeof startAcme>>;
  let worker: ChildProcess;
  let output = '';
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    acme = await startAcme();
    const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-acme-'));
    const doc = await readFile(path.join(__dirname, '..', '..', 'docs', 'writing-an-adapter.md'), 'utf8');
    const contract = /```yaml\n(name: acme-exports[\s\S]*?)```/.exec(doc)?.[1];
    expect(contract, 'the acme-exports contract in docs/writing-an-adapter.md').toBeDefined();
    await writeFile(
      path.join(dir, 'acme-exports.yaml'),
      contract!.replace('/run/secrets/acme-exports-key', path.join(dir, 'acme-key')),
    );
    await writeFile(path.join(dir, 'acme-key'), `${API_KEY}\n`);
    env = {
      PATH: process.env.PATH,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      ASYNCJOB_TASK_QUEUE: uniqueId('acme'),
      ASYNCJOB_STORE: `sqlite:${path.join(dir, 'asyncjob.db')}`,
      ASYNCJOB_ARTIFACTS_DIR: path.join(dir, 'artifacts'),
      ASYNCJOB_PROVIDERS: 'acme-exports',
      ASYNCJOB_PROVIDERS_PATH: dir,
      ACME_EXPORTS_URL: acme.url,
    };
    worker = spawn(process.execPath, [CLI, 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    worker.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    worker.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const end = Date.now() + 60_000;
    while (!output.includes('asyncjob worker: task queue') && Date.now() < end && worker.exitCode === null)
      await new Promise((r) => setTimeout(r, 100));
    expect(output).toContain('providers acme-exports');
  });

  afterAll(async () => {
    if (worker && worker.exitCode === null) worker.kill('SIGTERM');
    await acme?.close();
  });

  it('C, P, R: asyncjob start --wait drives an Acme export to a verified CSV result', async () => {
    const operationId = uniqueId('acme-op');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        CLI,
        'start',
        '--provider',
        'acme-exports',
        '--operation-id',
        operationId,
        '--payload',
        JSON.stringify({ query: 'saved-query-17', format: 'csv' }),
        '--started-by',
        'svc:finance',
        '--authorised-by',
        'alice@example.com',
        '--create-deadline',
        '30s',
        '--result-deadline',
        '2m',
        '--policy',
        JSON.stringify({ baseDelayMs: 50, maxDelayMs: 200 }),
        '--wait',
        '--json',
      ],
      { env, timeout: 90_000 },
    );
    const answer = JSON.parse(stdout) as {
      schema: string;
      summary: {
        localState: string;
        jobId: string;
        result: { validation: string; recordCount?: number; sha256: string; sizeBytes: number };
      };
    };
    expect(answer.schema).toBe('asyncjob.start/v1');
    expect(answer.summary.localState).toBe('succeeded');
    // The checksum (base64 at Acme) and the size were verified; CSV rows are not counted, so no count is claimed.
    expect(answer.summary.result).toMatchObject({
      validation: 'valid',
      sha256: createHash('sha256').update(CSV).digest('hex'),
      sizeBytes: Buffer.byteLength(CSV),
    });
    expect(answer.summary.result.recordCount).toBeUndefined();
    expect(acme.exports).toHaveLength(1);
    expect(answer.summary.jobId).toBe(acme.exports[0]!.id);
    expect(acme.seen.every((s) => s.apiKey)).toBe(true);
    expect(output).not.toContain(API_KEY);
  });
});
