/**
 * A planned review the chaos may make moot: when the answer that asked for a human was lost before its record, the
 * next read finds the job finished, and the operation rightly succeeds without one. Only then: a recorded answer
 * had to escalate, and an operation whose provider never asked for a review did not lose one.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArtifactStore } from '../../src/adapters/artifacts/artifact-store';
import { openSqliteStore, type SqliteOperationStore } from '../../src/adapters/store/sqlite-store';
import type { JobSummary } from '../../src/simulator';
import { REVIEW_STATE, type Dialect, type PlannedOperation } from '../../scripts/load/plan';
import { reviewLostBeforeRecord, type ProviderRecords } from '../../scripts/load/verify';
import { snapshot } from '../store/fixtures';

const OPERATION_ID = 'cluster-1-run-0';
const TOKEN = 'token-0';
const op = { request: { operationId: OPERATION_ID }, dialect: 'rest', needsReview: true } as PlannedOperation;

function providerWithJob(states: string[]): ProviderRecords {
  const job = {
    jobId: 'job_1',
    idempotencyKey: TOKEN,
    state: states.at(-1)!,
    history: states.map((state) => ({ state, at: '2026-12-04T22:56:20.000Z' })),
  } as JobSummary;
  return { requests: () => [], jobs: () => [job], jobsByToken: (token) => (token === TOKEN ? [job] : []) };
}

const noJobs: ProviderRecords = { requests: () => [], jobs: () => [], jobsByToken: () => [] };
const providers = (rest: ProviderRecords): Record<Dialect, ProviderRecords> => ({
  rest,
  lro: noJobs,
  'operation-location': noJobs,
});

describe('cluster run: a review lost before its record', () => {
  let store: SqliteOperationStore;
  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:' });
    await store.putOperation(snapshot(OPERATION_ID, { record: { idempotencyToken: TOKEN } }));
  });
  afterEach(() => store.close());

  const lost = (states: string[]) =>
    reviewLostBeforeRecord({ store, artifacts: {} as ArtifactStore, sims: providers(providerWithJob(states)) }, op);
  const recordStatus = (sequence: number, remoteState: string) =>
    store.append({
      operationId: OPERATION_ID,
      sequence,
      at: '2026-12-04T22:56:20.300Z',
      actor: 'worker:a',
      body: { kind: 'observation', action: 'status', transport: 'response', httpStatus: 200, remoteState },
    });

  it('the provider answered the review state, the record holds no such answer: lost, as the rules allow', async () => {
    await recordStatus(1, 'running');
    await recordStatus(2, 'succeeded');
    expect(await lost(['queued', 'running', REVIEW_STATE, 'succeeded'])).toBe(true);
  });

  it('an answer that was recorded had to escalate: not lost', async () => {
    await recordStatus(1, REVIEW_STATE);
    expect(await lost(['running', REVIEW_STATE, 'succeeded'])).toBe(false);
  });

  it('a provider that never reported the review state lost no review', async () => {
    expect(await lost(['running', 'succeeded'])).toBe(false);
  });
});
