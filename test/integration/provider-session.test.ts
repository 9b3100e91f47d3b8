/**
 * V3 and request decoration end to end, with real worker PROCESSES on the run's Temporal dev server:
 * - an adapter with `cookies: true` against a simulator in session mode (a rotating session cookie required on
 *   status reads and the result download) finishes although its worker is SIGKILLed between two polls: the next
 *   worker process found the latest cookie in the store. No cookie value ever appears in the journal, the
 *   snapshot, the workflow history, the workflow's queries or either worker's log;
 * - an adapter with contract-wide `headers:` and `query:` sends them on create, status, cancel and the result
 *   download, without duplicating a parameter a URL already has.
 * Every assertion reads the simulator's accounting, the store or Temporal, never the workflow's own opinion.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createHttpClient, type HttpSession } from '../../src/adapters/http';
import { type ProviderAdapter } from '../../src/adapters/providers';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import { activityContext, withProviderSession, type ActivityContext } from '../../src/activities/provider-call';
import { type OperationStore } from '../../src/adapters/store/operation-store';
import { AsyncJobClient } from '../../src/client';
import { type OperationRecord, type StartRequest } from '../../src/core/operation';
import { startSimulator, type Simulator } from '../../src/simulator';
import { type RequestRecord } from '../../src/simulator/accounting';
import { type ScenarioInput } from '../../src/simulator/scenario';
import { uniqueId } from '../setup/temporal';
import { startHttpServer } from '../adapters/http/loopback';
import { SIM_TOKEN, sleep, spawnWorkerProcess, writeContract, type WorkerProcess } from './faults/fault-harness';

const scripts: NonNullable<ScenarioInput['scripts']> = {
  // Three reads see `running`, the fourth `succeeded`: room for a kill between the first and the second.
  slow: {
    steps: [{ state: 'running', polls: 3 }, { state: 'succeeded' }],
    result: { kind: 'json', body: { rows: 3 } },
  },
  quick: {
    steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }],
    result: { kind: 'json', body: { rows: 1 } },
  },
  forever: { steps: [{ state: 'running' }] },
};

const DECORATION = {
  headers: {
    'X-Api-Client': { value: 'asyncjob-tests' },
    'X-Operation': { from: 'operation_id' },
    'X-Correlation': { from: 'trace_id' },
  },
  query: { 'api-version': '2024-01-01' },
};

/** Every string in a value, with byte arrays (Temporal payloads) decoded as UTF-8. */
function textOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (Array.isArray(value)) for (const item of value) textOf(item, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      out.push(key);
      textOf(item, out);
    }
  }
  return out;
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('provider sessions (V3) and request decoration with worker processes', () => {
  let sessionSim: Simulator;
  let decoratedSim: Simulator;
  let store: OperationStore;
  let connection: Connection;
  let temporal: Client;
  let client: AsyncJobClient;
  let env: Record<string, string>;
  let sessionProvider: string;
  let decoratedProvider: string;
  const workers: WorkerProcess[] = [];

  const spawn = (): WorkerProcess => {
    const worker = spawnWorkerProcess(env);
    workers.push(worker);
    return worker;
  };

  const request = (provider: string, script: string, policy: Record<string, number>): StartRequest => ({
    operationId: uniqueId('op-session'),
    provider,
    payload: { report: 'monthly-sales', scenario: script },
    startedBy: 'service:session-suite',
    authorisedBy: 'policy:session-tests',
    createDeadline: { afterMs: 30_000 },
    resultDeadline: { afterMs: 90_000 },
    policy: { notFoundWindowMs: 2_000, cancelDeadlineMs: 10_000, maxHintMs: 60_000, ...policy },
  });

  const jobRecords = (sim: Simulator, jobId: string, action?: RequestRecord['action']): RequestRecord[] =>
    sim.requests(action ? { action } : {}).filter((r) => r.jobId === jobId);

  const storedRecord = async (operationId: string): Promise<OperationRecord> =>
    (await store.getOperation(operationId))!.record as unknown as OperationRecord;

  beforeAll(async () => {
    const id = uniqueId('v3')
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '-');
    const dataDir = await mkdtemp(path.join(tmpdir(), 'asyncjob-session-'));
    sessionSim = await startSimulator({
      dialect: 'rest',
      token: SIM_TOKEN,
      seed: 31,
      scenario: { scripts, session: { cookie: true, requireOn: ['status', 'result'], rotate: true } },
    });
    decoratedSim = await startSimulator({
      dialect: 'rest',
      token: SIM_TOKEN,
      seed: 32,
      scenario: { scripts, recordHeaders: ['x-api-client', 'x-operation', 'x-correlation', 'idempotency-key'] },
    });
    sessionProvider = `session-${id}`.slice(0, 60);
    decoratedProvider = `decorated-${id}`.slice(0, 60);
    const contracts = [
      writeContract(dataDir, 'rest', sessionProvider, sessionSim.url, { cookies: true }),
      writeContract(dataDir, 'rest', decoratedProvider, decoratedSim.url, DECORATION),
    ];
    const storeFile = path.join(dataDir, 'asyncjob.db');
    store = await openSqliteStore({ path: storeFile, forbiddenValues: [SIM_TOKEN] });
    const address = inject('temporalAddress');
    connection = await Connection.connect({ address });
    temporal = new Client({ connection, namespace: 'default' });
    const taskQueue = `session-${id}`;
    client = new AsyncJobClient({ client: temporal, taskQueue });
    env = {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: 'default',
      ASYNCJOB_TASK_QUEUE: taskQueue,
      ASYNCJOB_STORE: `sqlite:${storeFile}`,
      ASYNCJOB_PROVIDERS: contracts.join(','),
      ASYNCJOB_ARTIFACTS_DIR: path.join(dataDir, 'artifacts'),
      ASYNCJOB_SIMULATOR_TOKEN: SIM_TOKEN,
      ASYNCJOB_LOG_LEVEL: 'info',
    };
  });

  afterAll(async () => {
    for (const w of workers) w.kill('SIGTERM');
    await Promise.race([Promise.all(workers.map((w) => w.exited)), sleep(15_000)]);
    for (const w of workers) w.kill('SIGKILL');
    await connection?.close();
    await store?.close();
    await Promise.all([sessionSim?.stop(), decoratedSim?.stop()]);
  });

  it('V3: a rotating session cookie survives a SIGKILL between two polls (the next worker reads it from the store) and never leaks', async () => {
    const first = spawn();
    await first.ready;
    // Polls 1.5..3 s apart: after the first read is answered and its cookie saved, there is room to kill.
    const req = request(sessionProvider, 'slow', { baseDelayMs: 3_000, maxDelayMs: 3_000 });
    await client.start(req);
    await until(
      'the job ID in the store',
      async () => ((await store.getOperation(req.operationId))?.record as { jobId?: string } | undefined)?.jobId,
    );
    const jobId = (await storedRecord(req.operationId)).jobId!;
    // The first status read is answered (with a new cookie: rotation) and the worker has saved that cookie.
    await until('the first poll and its cookie in the store', async () => {
      const issued = sessionSim.issuedSessions(jobId);
      const reads = jobRecords(sessionSim, jobId, 'status');
      if (reads.length !== 1 || reads[0]!.status !== 200 || issued.length !== 2) return undefined;
      const saved = await store.loadProviderSession(req.operationId);
      return saved?.json.includes(issued[1]!) === true ? true : undefined;
    });
    first.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    const readsBeforeKill = jobRecords(sessionSim, jobId, 'status').length;
    expect(readsBeforeKill).toBe(1);

    const second = spawn();
    await second.ready;
    const summary = await client.result(req.operationId);
    expect(summary.localState).toBe('succeeded');

    // Every status read and the download carried the CURRENT cookie: the second process had it from the store.
    const reads = jobRecords(sessionSim, jobId, 'status');
    expect(reads.length).toBeGreaterThanOrEqual(4);
    expect(reads.length - readsBeforeKill, 'status reads by the second worker').toBeGreaterThanOrEqual(3);
    const results = jobRecords(sessionSim, jobId, 'result');
    expect(results).toHaveLength(1);
    for (const r of [...reads, ...results])
      expect({ seq: r.seq, status: r.status, session: r.session }).toEqual({
        seq: r.seq,
        status: 200,
        session: 'valid',
      });
    expect(sessionSim.requests({ action: 'create' }).filter((r) => r.jobId === jobId)).toHaveLength(1);
    const artifacts = await store.artifacts(req.operationId);
    expect(artifacts.map((a) => a.validation)).toEqual(['valid']);

    // The store keeps the latest cookie (issued by the result answer) for the operation, outside the journal.
    const issued = sessionSim.issuedSessions(jobId);
    expect(issued.length).toBe(reads.length + results.length + 1);
    expect((await store.loadProviderSession(req.operationId))?.json).toContain(issued.at(-1)!);

    // No value ever issued appears anywhere but the provider_sessions table.
    const journal = JSON.stringify(await store.entries(req.operationId));
    const snapshot = JSON.stringify(await store.getOperation(req.operationId));
    const history = textOf(await temporal.workflow.getHandle(req.operationId).fetchHistory()).join('\n');
    const queries = JSON.stringify([await client.get(req.operationId), await client.history(req.operationId)]);
    const logs = `${first.logs()}\n${second.logs()}`;
    // Sanity: each source is readable and about this operation (the history's payloads were decoded).
    for (const [name, text] of Object.entries({ journal, snapshot, history, queries }))
      expect(text, name).toContain(jobId);
    expect(logs).toContain(req.operationId);
    for (const value of issued) {
      for (const [name, text] of Object.entries({ journal, snapshot, history, queries, logs }))
        expect(text.includes(value), `cookie value in ${name}`).toBe(false);
    }
    expect(logs).not.toContain(SIM_TOKEN);
    expect((await store.verifyChains({ operationId: req.operationId })).breaks).toEqual([]);
    second.kill('SIGTERM');
    await second.exited;
  });

  it('decoration: contract-wide headers and query parameters go on create, status, cancel and the result download', async () => {
    const worker = spawn();
    await worker.ready;
    const finished = request(decoratedProvider, 'quick', { baseDelayMs: 50, maxDelayMs: 200 });
    const cancelled = request(decoratedProvider, 'forever', { baseDelayMs: 100, maxDelayMs: 300 });
    await Promise.all([client.start(finished), client.start(cancelled)]);
    expect((await client.result(finished.operationId)).localState).toBe('succeeded');
    await until('the second operation observing', async () =>
      (await store.getOperation(cancelled.operationId))?.localState === 'observing' ? true : undefined,
    );
    await client.cancel(cancelled.operationId, { requestedBy: 'alice@example.com', reason: 'decoration test' });
    expect((await client.result(cancelled.operationId)).localState).toBe('cancelled');

    for (const op of [finished, cancelled]) {
      const record = await storedRecord(op.operationId);
      const seen = jobRecords(decoratedSim, record.jobId!);
      const actions = new Set(seen.map((r) => r.action));
      expect([...actions].sort(), op.operationId).toEqual(
        op === finished ? ['create', 'result', 'status'] : ['cancel', 'create', 'status'],
      );
      for (const r of seen) {
        const where = `${r.action} #${r.seq}`;
        expect(r.headers, where).toMatchObject({
          'x-api-client': 'asyncjob-tests',
          'x-operation': op.operationId,
          'x-correlation': record.traceId,
        });
        // Once, even on the status URL and the result URL read from the provider's answers.
        expect(new URLSearchParams(r.query).getAll('api-version'), where).toEqual(['2024-01-01']);
      }
      // The create's own idempotency header is the token, untouched by decoration.
      expect(seen.find((r) => r.action === 'create')!.headers?.['idempotency-key']).toBe(record.idempotencyToken);
    }
    worker.kill('SIGTERM');
    await worker.exited;
  });
});

describe('withProviderSession: the activity frame around one call (V3)', () => {
  const VALUE = 'sess_4c1d9e7f2a6b8035';

  async function frame(cookies: boolean, pad?: (json: string) => string) {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'asyncjob-session-frame-'));
    const store = await openSqliteStore({ path: path.join(dataDir, 'asyncjob.db') });
    const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
    const server = await startHttpServer((req, res) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (req.url === '/login') headers['set-cookie'] = `sid=${VALUE}; Path=/`;
      res.writeHead(200, headers);
      res.end(JSON.stringify({ cookie: req.headers.cookie ?? null }));
    });
    const http = createHttpClient({ allowedOrigin: server.origin });
    const sessions =
      pad === undefined
        ? store
        : Object.assign(Object.create(store) as typeof store, {
            saveProviderSession: (id: string, json: string) => store.saveProviderSession(id, pad(json)),
          });
    const ctx: ActivityContext = {
      ...activityContext({ store: sessions, providers: {} as never, artifacts: {} as never }),
      logger: {
        info: () => undefined,
        warn: (message, fields) => void warnings.push({ message, ...(fields ? { fields } : {}) }),
      },
    };
    const adapter = { baseUrl: server.origin, contract: { cookies } } as unknown as ProviderAdapter;
    const record = { operationId: 'op-frame', provider: 'p', traceId: 't' } as unknown as OperationRecord;
    const call = (url: string) =>
      withProviderSession(ctx, adapter, record, (session: HttpSession | undefined) =>
        http.send({ method: 'GET', url, traceId: 't', ...(session ? { session } : {}) }),
      );
    return {
      store,
      warnings,
      call,
      async close() {
        await http.close();
        await server.close();
        await store.close();
      },
    };
  }

  it('keeps nothing when the contract does not keep cookies', async () => {
    const f = await frame(false);
    await f.call('/login');
    expect((await f.call('/next')).bodyJson).toEqual({ cookie: null });
    expect(await f.store.loadProviderSession('op-frame')).toBeNull();
    await f.close();
  });

  it('saves a session that changed, sends it on the next call, and writes nothing for a call that only sent it', async () => {
    const f = await frame(true);
    await f.call('/plain');
    expect(await f.store.loadProviderSession('op-frame')).toBeNull();
    await f.call('/login');
    const saved = await f.store.loadProviderSession('op-frame');
    expect(saved?.json).toContain(VALUE);
    await sleep(5);
    expect((await f.call('/next')).bodyJson).toEqual({ cookie: `sid=${VALUE}` });
    expect(await f.store.loadProviderSession('op-frame')).toEqual(saved);
    await f.close();
  });

  it("a session the store refuses (over 64 KiB) is logged by code, never by value, and the call's answer stands", async () => {
    // The store's refusal is real: the saved text is padded past 64 KiB on its way in (a jar that large needs
    // more cookie bytes than one loopback answer's headers may carry).
    const f = await frame(true, (json) => `${json}${' '.repeat(70_000)}`);
    const answer = await f.call('/login');
    expect(answer.status).toBe(200);
    expect(f.warnings).toEqual([
      {
        message: 'provider session not saved',
        fields: { operationId: 'op-frame', provider: 'p', error: 'ASYNCJOB_ERR_SESSION_TOO_LARGE' },
      },
    ]);
    expect(JSON.stringify(f.warnings)).not.toContain(VALUE);
    expect(await f.store.loadProviderSession('op-frame')).toBeNull();
    await f.close();
  });
});
