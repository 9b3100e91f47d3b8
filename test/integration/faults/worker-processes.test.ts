/**
 * F2 and F5 with real worker PROCESSES: a worker SIGKILLed between recording the job ID and the first poll, two
 * workers on one task queue, and a worker restarted mid-wait. Every assertion reads the simulator's accounting
 * or the store the workers wrote, never the workflow's own opinion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../../src/core/operation';
import { DIALECTS, sleep, startFaultWorld, type FaultWorld } from './fault-harness';

const scripts = {
  f2: { steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }], result: { kind: 'json', body: { rows: 3 } } },
  f5: { steps: [{ state: 'queued', polls: 2 }, { state: 'running', polls: 5 }, { state: 'succeeded' }] },
};

async function storedRecord(world: FaultWorld, operationId: string): Promise<OperationRecord> {
  const snapshot = await world.store.getOperation(operationId);
  expect(snapshot, `store has ${operationId}`).not.toBeNull();
  return snapshot!.record as unknown as OperationRecord;
}

describe('worker processes die, restart and double up', () => {
  let world: FaultWorld;

  beforeAll(async () => {
    world = await startFaultWorld('procs', {
      scenarios: { rest: { scripts }, lro: { scripts }, 'operation-location': { scripts } } as never,
    });
  });
  afterAll(async () => world?.stop());

  it('F2: a worker SIGKILLed after the job ID is recorded and before the first poll; a second process resumes: one job, one collect, one artifact', async () => {
    const first = world.spawnWorker();
    await first.ready;
    // A long first wait (baseDelayMs 3000: the first poll is 1.5..3 s after acceptance) leaves room to kill,
    // even on a loaded machine.
    const request = world.request('rest', {
      script: 'f2',
      policy: { baseDelayMs: 3_000, maxDelayMs: 3_000, notFoundWindowMs: 2_000 },
    });
    await world.client.start(request);
    await world.waitForState(request.operationId, ['accepted', 'observing'], 60_000);
    first.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    const record = await storedRecord(world, request.operationId);
    expect(record.jobId).toBeDefined();
    // The kill landed before any status read.
    expect(world.jobRequests('rest', record.jobId!, 'status')).toHaveLength(0);

    const second = world.spawnWorker();
    await second.ready;
    const summary = await world.client.result(request.operationId);
    expect(summary.localState).toBe('succeeded');

    const jobs = world.sims.rest.jobsByToken(record.idempotencyToken);
    expect(jobs).toHaveLength(1);
    expect(world.sims.rest.requests({ action: 'create', idempotencyKey: record.idempotencyToken })).toHaveLength(1);
    expect(world.jobRequests('rest', record.jobId!, 'result')).toHaveLength(1);
    const artifacts = await world.store.artifacts(request.operationId);
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]!.validation).toBe('valid');
    const final = await storedRecord(world, request.operationId);
    expect(final.localState).toBe('succeeded');
    expect(world.jobRequests('rest', record.jobId!, 'status').length).toBe(final.used.statusRequests);
    expect((await world.store.verifyChains({ operationId: request.operationId })).breaks).toEqual([]);
    second.kill('SIGTERM');
    await second.exited;
  });

  it('F5: two worker processes on one task queue and a restart mid-wait: no duplicate status read in any planned window; every counted read was sent or journalled as a failed call (B2)', async () => {
    const a = world.spawnWorker();
    const b = world.spawnWorker();
    await Promise.all([a.ready, b.ready]);
    const policy = { baseDelayMs: 200, maxDelayMs: 400, minJitterRatio: 0.5, notFoundWindowMs: 2_000 };
    const requests = DIALECTS.flatMap((d) => [
      world.request(d, { script: 'f5', policy }),
      world.request(d, { script: 'f5', policy }),
    ]);
    await Promise.all(requests.map((r) => world.client.start(r)));
    // Mid-wait: every operation has been accepted and is between polls; kill one worker, start another.
    await Promise.all(requests.map((r) => world.waitForState(r.operationId, ['accepted', 'observing'], 60_000)));
    await sleep(150);
    // A graceful restart (SIGTERM). A SIGKILL during a provider call is noticed by its heartbeat timeout and
    // the call is planned again (its reservation stays counted, B2); F2 covers SIGKILL between calls.
    a.kill('SIGTERM');
    await a.exited;
    const c = world.spawnWorker();
    await c.ready;

    const summaries = await Promise.all(requests.map((r) => world.client.result(r.operationId)));
    for (const [i, summary] of summaries.entries()) {
      const request = requests[i]!;
      const dialect = DIALECTS.find((d) => request.provider === world.provider(d))!;
      expect(summary.localState, request.operationId).toBe('succeeded');
      const record = await storedRecord(world, request.operationId);
      expect(world.sims[dialect].jobsByToken(record.idempotencyToken)).toHaveLength(1);
      const reads = world.jobRequests(dialect, record.jobId!, 'status');
      // 2 queued + 5 running + the read that saw succeeded.
      expect(reads.length).toBeGreaterThanOrEqual(8);
      // B2: every counted reservation is a read the provider saw, or a call the graceful restart cut short, which
      // the journal explains as an ambiguous failed status call (counted, planned again, never hidden).
      const failedCalls = (await world.store.entries(request.operationId))
        .map((e) => e.entry.body as { kind: string; action?: string; errorCategory?: string })
        .filter(
          (b) => b.kind === 'observation' && b.action === 'status' && b.errorCategory === 'activity_failed',
        ).length;
      expect(reads.length).toBeLessThanOrEqual(record.used.statusRequests);
      expect(
        record.used.statusRequests - reads.length,
        `${dialect}: counted reads the provider never saw`,
      ).toBeLessThanOrEqual(failedCalls);
      // The smallest planned delay is minJitterRatio * baseDelayMs = 100 ms; the timer starts after the previous
      // answer, so two reads closer than that would be a duplicate read in one planned window.
      const gaps = reads.slice(1).map((r, k) => r.atMs - reads[k]!.atMs);
      expect(Math.min(...gaps), `${dialect} gaps ${gaps.join(',')}`).toBeGreaterThanOrEqual(100);
      expect(world.jobRequests(dialect, record.jobId!, 'result').length).toBeLessThanOrEqual(1);
    }
    for (const w of [b, c]) w.kill('SIGTERM');
    await Promise.all([b.exited, c.exited]);
  });
});
