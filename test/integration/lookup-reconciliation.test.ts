/**
 * Reconciliation by lookup on the real dev server (U2, I3): a provider whose POST create carries no idempotency
 * token and which answers `GET /v1/jobs/by-reference/{clientReference}` with the job (200) or 404. Its create
 * answer is lost (the simulator drops it after creating the job, or resets the connection before doing anything),
 * and the lookup decides: the job is found and followed, or the create is sent again, once. Asserted from the
 * simulator's accounting, the store and the journal.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator';
import { uniqueId } from '../setup/temporal';
import { startDocumentWorker, writeRestVariant, type DocumentWorker } from '../workflows/document-worker';

const TOKEN = `sim-secret-${Math.random().toString(36).slice(2)}`;
const done = [{ state: 'running', polls: 1 }, { state: 'succeeded' }];

/** The rest preset without an idempotency token, reconciled by one lookup by client reference. */
function lookupContract(dir: string, name: string): Promise<string> {
  return writeRestVariant(dir, name, (preset) => {
    delete preset.create.idempotencyToken;
    return {
      ...preset,
      reconciliation: {
        method: 'lookup',
        path: '/v1/jobs/by-reference/{clientReference}',
        jobId: [{ from: 'body', field: 'job_id' }],
      },
    };
  });
}

/** A simulator whose every job runs one poll, then succeeds; its tokenless creates fail as `createFault` says. */
async function world(label: string, createFault: { kind: 'drop' | 'reset' }) {
  const dir = await mkdtemp(path.join(tmpdir(), `asyncjob-lookup-${label}-`));
  const id = uniqueId(label).toLowerCase();
  const provider = `lookup-${id}`.slice(0, 64);
  const sim = await startSimulator({
    dialect: 'rest',
    token: TOKEN,
    seed: 11,
    scenario: {
      scripts: {
        lost: {
          steps: done,
          result: { kind: 'json', body: { rows: 3 } },
          faults: [{ on: 'create', nth: 1, fault: createFault }],
        },
      },
    },
  });
  const worker = await startDocumentWorker({
    taskQueue: `wf-${id}`,
    dataDir: dir,
    providers: [{ name: provider, path: await lookupContract(dir, provider) }],
    baseUrls: { [provider]: sim.url },
    env: { ASYNCJOB_SIMULATOR_TOKEN: TOKEN, ASYNCJOB_SIMULATOR_URL: sim.url },
    forbiddenValues: [TOKEN],
  });
  return { sim, worker, provider };
}

async function run(worker: DocumentWorker, provider: string, operationId: string) {
  await worker.client.start({
    operationId,
    provider,
    payload: { report: 'monthly-sales', scenario: 'lost' },
    startedBy: 'service:test-suite',
    authorisedBy: 'policy:integration-tests',
    createDeadline: { afterMs: 30_000 },
    resultDeadline: { afterMs: 60_000 },
    policy: { baseDelayMs: 20, maxDelayMs: 200, cancelDeadlineMs: 5_000, maxHintMs: 60_000 },
  });
  return worker.client.result(operationId, { timeoutMs: 60_000 });
}

/** The journal's observations of one operation: action and HTTP status, in order. */
async function observations(worker: DocumentWorker, operationId: string): Promise<string[]> {
  return (await worker.store.entries(operationId)).flatMap(({ entry }) =>
    entry.body.kind === 'observation' ? [`${entry.body.action} ${entry.body.httpStatus ?? entry.body.transport}`] : [],
  );
}

describe('reconciliation by lookup, the create answer lost (U2)', () => {
  let found: Awaited<ReturnType<typeof world>>;
  let absent: Awaited<ReturnType<typeof world>>;

  beforeAll(async () => {
    found = await world('found', { kind: 'drop' });
    absent = await world('absent', { kind: 'reset' });
  });

  afterAll(async () => {
    for (const w of [found, absent]) {
      await w?.worker.stop();
      await w?.sim.stop();
    }
  });

  it('U2: the create answer is lost and the lookup finds the job: one job at the provider, succeeded', async () => {
    const { sim, worker, provider } = found;
    expect(worker.registry.get(provider).facts).toMatchObject({
      reconciliation: 'lookup',
      capabilities: { sameTokenResend: false },
    });
    const operationId = uniqueId('op-lookup-found');
    const summary = await run(worker, provider, operationId);
    expect(summary.localState).toBe('succeeded');
    // One create reached the provider and made the one job; one lookup found it by our operation ID.
    expect(sim.requests({ action: 'create' })).toHaveLength(1);
    expect(sim.createdJobCount()).toBe(1);
    const lookups = sim.requests({ action: 'reconcile' });
    expect(lookups).toHaveLength(1);
    expect(lookups[0]?.path).toBe(`/v1/jobs/by-reference/${encodeURIComponent(operationId)}`);
    const record = await worker.client.get(operationId);
    expect(record.jobId).toBe(sim.jobs()[0]?.rawId);
    // The create's answer never came; the lookup answered 200 with the job.
    expect((await observations(worker, operationId)).slice(0, 2)).toEqual(['create ambiguous', 'reconcile 200']);
  });

  it('U2, I3: the lookup says no such job: the create is sent again exactly once, and the job succeeds', async () => {
    const { sim, worker, provider } = absent;
    const operationId = uniqueId('op-lookup-absent');
    const summary = await run(worker, provider, operationId);
    expect(summary.localState).toBe('succeeded');
    // The first create was reset before the provider did anything; the lookup answered 404; the create went again once.
    const creates = sim.requests({ action: 'create' });
    expect(creates).toHaveLength(2);
    expect(sim.createdJobCount()).toBe(1);
    const lookups = sim.requests({ action: 'reconcile' });
    expect(lookups.map((r) => r.method)).toEqual(['GET']);
    expect(lookups[0]?.status).toBe(404);
    // create (reset), the lookup (404), the create sent again (as the reconcile call, 202), then status reads.
    expect((await observations(worker, operationId)).slice(0, 3)).toEqual([
      'create ambiguous',
      'reconcile 404',
      'reconcile 202',
    ]);
  });
});
