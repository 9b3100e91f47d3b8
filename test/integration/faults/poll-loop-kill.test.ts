/**
 * F2 inside a status loop: the worker process running the activity that holds the job's reads (the create's, reading
 * on for its first 2 s, or `pollStatus`) is SIGKILLed between or during its reads. The workflow adopts what the store recorded and plans again; asserted from the simulator's request log
 * and the store's journal: one job, every counted status request either answered in the journal or journalled as
 * a failed call, at most the one reserved read unanswered, the result collected once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../../src/core/operation';
import { sleep, startFaultWorld, type FaultWorld } from './fault-harness';

const scripts = { long: { steps: [{ state: 'running', polls: 14 }, { state: 'succeeded' }] } };

async function countedReads(world: FaultWorld, operationId: string): Promise<number> {
  const snapshot = await world.store.getOperation(operationId);
  return (snapshot?.record as unknown as OperationRecord | undefined)?.used.statusRequests ?? 0;
}

describe('a worker killed in the middle of a status loop', () => {
  let world: FaultWorld;

  beforeAll(async () => {
    world = await startFaultWorld('loopkill', { scenarios: { rest: { scripts } } as never });
  });
  afterAll(async () => world?.stop());

  // At 300 ms a read, the create's activity reads on for its first 2 s (reads 1 to about 6, CREATE_READS_ON_MS),
  // then the status activity holds the job: a kill at read 2 lands in the first, at read 9 in the second.
  it.each([
    [2, 'createJob'],
    [9, 'pollStatus'],
  ])(
    'F2, B2: SIGKILL at read %i, in %s reading on; a second worker finishes: one job, no status request beyond the reserved one, nothing lost',
    async (killAtRead, holder) => {
      const first = world.spawnWorker();
      await first.ready;
      const request = world.request('rest', {
        script: 'long',
        policy: { baseDelayMs: 300, maxDelayMs: 300, minJitterRatio: 1, notFoundWindowMs: 2_000 },
      });
      await world.client.start(request);
      const end = Date.now() + 60_000;
      while ((await countedReads(world, request.operationId)) < killAtRead) {
        if (Date.now() > end) throw new Error(`the loop did not reach ${killAtRead} reads`);
        await sleep(10);
      }
      const { raw } = await world.temporal.workflow.getHandle(request.operationId).describe();
      expect(raw.pendingActivities?.map((activity) => activity.activityType?.name)).toEqual([holder]);
      first.kill('SIGKILL');
      expect(await first.exited).toBe('SIGKILL');
      const second = world.spawnWorker();
      await second.ready;
      const summary = await world.client.result(request.operationId);
      expect(summary.localState).toBe('succeeded');

      const snapshot = await world.store.getOperation(request.operationId);
      const record = snapshot!.record as unknown as OperationRecord;
      expect(world.sims.rest.jobsByToken(record.idempotencyToken)).toHaveLength(1);
      expect(world.jobRequests('rest', record.jobId!, 'result')).toHaveLength(1);
      const observations = (await world.store.entries(request.operationId)).flatMap(({ entry }) =>
        entry.body.kind === 'observation' && entry.body.action === 'status' ? [entry.body] : [],
      );
      const answered = observations.filter((body) => body.transport === 'response').length;
      const failed = observations.filter((body) => body.errorCategory === 'activity_failed').length;
      const sent = world.jobRequests('rest', record.jobId!, 'status').length;
      // B2: every counted request is in the journal, answered or as the failed call the kill left.
      expect(record.used.statusRequests).toBe(answered + failed);
      // Nothing answered was lost, and at most the one reserved read went unanswered.
      expect(sent).toBeGreaterThanOrEqual(answered);
      expect(sent - answered).toBeLessThanOrEqual(failed);
      expect(failed).toBeLessThanOrEqual(1);
      // The create was sent once and recorded once, whichever activity the kill ended.
      const creates = (await world.store.entries(request.operationId)).filter(
        ({ entry }) => entry.body.kind === 'observation' && entry.body.action === 'create',
      );
      expect(creates).toHaveLength(1);
      const verification = await world.store.verifyChains({ operationId: request.operationId });
      expect(verification.breaks).toEqual([]);
    },
  );
});
