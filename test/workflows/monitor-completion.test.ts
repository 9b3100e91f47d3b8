/**
 * V5 end to end: an `azure-lro` provider document whose create is Azure's data-plane create-or-replace (a PUT
 * answered `201 Created` with `Operation-Location` and the resource without a `provisioningState`), driven by a
 * real worker on the run's Temporal dev server against the simulator's operation-location dialect. The operation
 * ends as the monitor says, after reading it; a job the monitor reports failed never ends `succeeded`. Every
 * assertion reads the simulator's accounting or the operation's record, never the workflow's own opinion alone.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AsyncJobClient } from '../../src/client';
import type { StartRequest } from '../../src/core/operation';
import { startSimulator, type Simulator } from '../../src/simulator';
import { uniqueId } from '../setup/temporal';
import { startDocumentWorker, type DocumentWorker } from './document-worker';
import { SIM_TOKEN } from './harness';

/** The provider document a user writes for a create-or-replace PUT (the preset does the rest). */
const DOCUMENT = (name: string) => `name: ${name}
preset: azure-lro
baseUrl: \${ASYNCJOB_SIMULATOR_URL}
credential: { scheme: bearer, secretEnv: ASYNCJOB_SIMULATOR_TOKEN }
create:
  method: PUT
  path: /v1/analyses/invoice-7
`;

describe('a create answered 201 with a status monitor ends as the monitor says (V5)', () => {
  let sim: Simulator;
  let worker: DocumentWorker;
  let client: AsyncJobClient;
  let provider: string;

  beforeAll(async () => {
    const id = uniqueId('v5')
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '-');
    provider = `azure-put-${id}`.slice(0, 60);
    const dataDir = await mkdtemp(path.join(tmpdir(), 'asyncjob-v5-'));
    sim = await startSimulator({
      dialect: 'operation-location',
      token: SIM_TOKEN,
      seed: 5,
      scenario: {
        scripts: {
          succeeds: {
            steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }],
            result: { kind: 'json', body: { pages: 3 } },
          },
          fails: {
            steps: [{ state: 'running', polls: 1 }, { state: 'failed' }],
            error: { code: 'InvalidDocument', message: 'the document could not be read' },
          },
        },
      },
    });
    const documentPath = path.join(dataDir, `${provider}.yaml`);
    await writeFile(documentPath, DOCUMENT(provider));
    worker = await startDocumentWorker({
      taskQueue: `wf-${id}`,
      dataDir,
      providers: [{ path: documentPath }],
      env: { ASYNCJOB_SIMULATOR_TOKEN: SIM_TOKEN, ASYNCJOB_SIMULATOR_URL: sim.url },
      forbiddenValues: [SIM_TOKEN],
    });
    client = worker.client;
  });

  afterAll(async () => {
    await worker?.stop();
    await sim?.stop();
  });

  const request = (script: string): StartRequest => ({
    operationId: uniqueId('op-v5'),
    provider,
    payload: { document: 'invoice-7.pdf', scenario: script },
    startedBy: 'service:test-suite',
    authorisedBy: 'policy:integration-tests',
    createDeadline: { afterMs: 20_000 },
    resultDeadline: { afterMs: 60_000 },
    policy: { baseDelayMs: 20, maxDelayMs: 200, notFoundWindowMs: 2_000, maxHintMs: 60_000 },
  });

  /** The simulator's job behind the monitor the operation polled. */
  function monitoredJob(statusUrl: string | undefined) {
    const job = sim.jobs().find((j) => statusUrl?.endsWith(`/v1/operations/${j.jobId}`) === true);
    if (job === undefined) throw new Error(`no simulator job behind the poll URL ${String(statusUrl)}`);
    return job;
  }

  /** The monitor reads the simulator answered for a job. */
  const monitorReads = (jobId: string) => sim.requests({ action: 'status' }).filter((r) => r.jobId === jobId);

  it('V5: the monitor then says Succeeded: succeeded after reading the monitor, with the result it names', async () => {
    const started = request('succeeds');
    await client.start(started);
    const summary = await client.result(started.operationId);
    expect(summary.localState).toBe('succeeded');
    const record = await client.get(started.operationId);
    expect(record.remote.pollReading).toBe('monitor');
    const job = monitoredJob(record.remote.statusUrl);
    const creates = sim.requests({ action: 'create' }).filter((r) => r.path === '/v1/analyses/invoice-7');
    expect(creates.length).toBeGreaterThan(0);
    expect(creates.every((r) => r.status === 201)).toBe(true);
    // The create answer (201, no provisioningState) ended nothing: the monitor was read until it said Succeeded.
    const reads = monitorReads(job.jobId);
    expect(reads.length).toBeGreaterThanOrEqual(2);
    expect(record.remote).toMatchObject({ state: 'Succeeded', category: 'success' });
    expect(record.remote.resultReference?.url).toBe(`${sim.url}/v1/results/${job.rawId}`);
    expect(summary.result?.sizeBytes).toBe(Buffer.byteLength(JSON.stringify({ pages: 3 })));
  });

  it('V5: the monitor then says Failed: failed, never succeeded, with the error the monitor gave', async () => {
    const started = request('fails');
    await client.start(started);
    const summary = await client.result(started.operationId);
    expect(summary.localState).toBe('failed');
    const record = await client.get(started.operationId);
    expect(record.localState).toBe('failed');
    expect(record.remote).toMatchObject({
      state: 'Failed',
      category: 'failure',
      lastError: { code: 'InvalidDocument', message: 'the document could not be read' },
    });
    expect(monitorReads(monitoredJob(record.remote.statusUrl).jobId).length).toBeGreaterThanOrEqual(2);
    expect(summary.result).toBeNull();
  });
});
