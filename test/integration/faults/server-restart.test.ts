/**
 * F6: the Temporal server itself stops and restarts mid-flight. This file runs its OWN dev server on a SQLite
 * file and a fixed port, a worker process and the simulators; the server is stopped while operations wait
 * between polls, started again on the same database file, and every operation must still end correctly: one
 * provider job each, one collect each, the record and the provider's log agreeing.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../../src/core/operation';
import { freePort, startDevServer, type DevServer } from '../../../src/dev/temporal-server';
import { DIALECTS, sleep, startFaultWorld, type FaultWorld, type WorkerProcess } from './fault-harness';

const scripts = {
  slow: {
    steps: [{ state: 'running', durationMs: 4_000 }, { state: 'succeeded' }],
    result: { kind: 'json', body: { rows: 9 } },
  },
};

describe('F6: the Temporal server restarts on the same database mid-flight', () => {
  let server: DevServer;
  let dbFile: string;
  let port: number;
  let world: FaultWorld;
  let worker: WorkerProcess;

  beforeAll(async () => {
    dbFile = path.join(await mkdtemp(path.join(tmpdir(), 'asyncjob-f6-')), 'temporal.db');
    port = await freePort();
    server = await startDevServer({ dbFile, port });
    world = await startFaultWorld('f6', {
      temporalAddress: server.address,
      scenarios: Object.fromEntries(DIALECTS.map((d) => [d, { scripts }])) as never,
    });
    worker = world.spawnWorker();
    await worker.ready;
  });
  afterAll(async () => {
    await world?.stop();
    await server?.stop();
  });

  it('F6: every operation ends succeeded after a server stop and restart on the same database file; one job and one collect each', async () => {
    const policy = { baseDelayMs: 700, maxDelayMs: 1_000, notFoundWindowMs: 2_000 };
    const requests = DIALECTS.flatMap((d) => [
      world.request(d, { script: 'slow', policy }),
      world.request(d, { script: 'slow', policy }),
    ]);
    await Promise.all(requests.map((r) => world.client.start(r)));
    await Promise.all(requests.map((r) => world.waitForState(r.operationId, ['accepted', 'observing'], 60_000)));

    await server.stop();
    const down = Date.now();
    await sleep(1_500);
    server = await startDevServer({ dbFile, port });
    const outageMs = Date.now() - down;

    const summaries = await Promise.all(requests.map((r) => world.client.result(r.operationId)));
    for (const [i, summary] of summaries.entries()) {
      const request = requests[i]!;
      const dialect = DIALECTS.find((d) => request.provider === world.provider(d))!;
      expect(summary.localState, request.operationId).toBe('succeeded');
      const record = (await world.store.getOperation(request.operationId))!.record as unknown as OperationRecord;
      expect(world.sims[dialect].jobsByToken(record.idempotencyToken)).toHaveLength(1);
      expect(world.jobRequests(dialect, record.jobId!, 'result')).toHaveLength(1);
      expect(await world.store.artifacts(request.operationId)).toHaveLength(1);
      expect(world.jobRequests(dialect, record.jobId!, 'status').length).toBeLessThanOrEqual(
        record.used.statusRequests,
      );
      expect((await world.store.verifyChains({ operationId: request.operationId })).breaks).toEqual([]);
    }
    // The worker process lived through the outage (it reconnected rather than being restarted).
    expect(worker.child.exitCode).toBeNull();
    expect(outageMs).toBeGreaterThanOrEqual(1_500);
  });
});
