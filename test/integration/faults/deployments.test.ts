/**
 * F9 on a real server: two deployments in one namespace, each an `asyncjob worker` process with its own task
 * queue, store and artifact root, serving providers of the same names; the second under a provider rate limit.
 * Every operation's provider calls run in its own deployment: its journal is whole in its own store and absent from
 * the other's, and its result is under its own artifact root. The first deployment's calls were scheduled on its
 * workflows' queue, the rate-limited one's on each provider's own queue.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../../src/adapters/store/sqlite-store';
import type { OperationStore } from '../../../src/adapters/store/operation-store';
import { AsyncJobClient } from '../../../src/client';
import { DIALECTS } from '../../workflows/harness';
import { SIM_TOKEN, startFaultWorld, type FaultWorld, type WorkerProcess } from './fault-harness';

describe('F9: two deployments in one namespace never run each other provider calls', () => {
  let world: FaultWorld;
  let workers: WorkerProcess[];
  let second: { client: AsyncJobClient; store: OperationStore; artifactsDir: string; taskQueue: string };

  beforeAll(async () => {
    world = await startFaultWorld('deployments');
    const taskQueue = `${world.taskQueue}-second`;
    const storeFile = path.join(world.dataDir, 'second.db');
    const artifactsDir = path.join(world.dataDir, 'second-artifacts');
    workers = [
      world.spawnWorker(),
      world.spawnWorker({
        ASYNCJOB_TASK_QUEUE: taskQueue,
        ASYNCJOB_STORE: `sqlite:${storeFile}`,
        ASYNCJOB_ARTIFACTS_DIR: artifactsDir,
        ASYNCJOB_PROVIDER_RATE_LIMIT: '100',
      }),
    ];
    await Promise.all(workers.map((w) => w.ready));
    const client = new AsyncJobClient({ client: world.temporal, taskQueue });
    await client.waitForWorkers(DIALECTS.map((d) => world.provider(d)));
    const store = await openSqliteStore({ path: storeFile, forbiddenValues: [SIM_TOKEN] });
    second = { client, store, artifactsDir, taskQueue };
  });

  afterAll(async () => {
    for (const worker of workers ?? []) worker.kill('SIGTERM');
    await Promise.all((workers ?? []).map((w) => w.exited));
    await second?.store.close();
    await world?.stop();
  });

  it("F9: each operation's journal and result stay in its own deployment", async () => {
    const firstOps = DIALECTS.flatMap((d) => [world.request(d), world.request(d)]);
    const secondOps = DIALECTS.flatMap((d) => [world.request(d), world.request(d)]);
    await Promise.all([...firstOps.map((r) => world.client.start(r)), ...secondOps.map((r) => second.client.start(r))]);
    const summaries = await Promise.all([
      ...firstOps.map((r) => world.client.result(r.operationId)),
      ...secondOps.map((r) => second.client.result(r.operationId)),
    ]);
    expect(summaries.map((s) => s.localState)).toEqual(summaries.map(() => 'succeeded'));

    const deployments = [
      {
        ops: firstOps,
        own: world.store,
        other: second.store,
        root: world.artifactsDir,
        callQueue: () => world.taskQueue,
      },
      {
        ops: secondOps,
        own: second.store,
        other: world.store,
        root: second.artifactsDir,
        callQueue: (provider: string) => `${second.taskQueue}-provider-${provider}`,
      },
    ];
    for (const { ops, own, other, root, callQueue } of deployments) {
      for (const { operationId, provider } of ops) {
        const history = await world.temporal.workflow.getHandle(operationId).fetchHistory();
        const queues = (history.events ?? []).flatMap(
          (e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name ?? [],
        );
        expect(queues.length, operationId).toBeGreaterThan(0);
        expect(new Set(queues), operationId).toEqual(new Set([callQueue(provider)]));
        const entries = (await own.entries(operationId)).map((e) => e.entry.body);
        const actions = entries.flatMap((b) => (b.kind === 'observation' ? [b.action] : []));
        expect(actions, operationId).toEqual(expect.arrayContaining(['create', 'status', 'collect']));
        expect(await other.entries(operationId), operationId).toEqual([]);
        const artifact = entries.find((b) => b.kind === 'artifact');
        expect(artifact?.kind === 'artifact' && artifact.location.startsWith(`file://${root}/`), operationId).toBe(
          true,
        );
      }
    }
  });
});
