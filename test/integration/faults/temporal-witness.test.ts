/**
 * T2 on a real server: `asyncjob audit verify --with-temporal` degrades, never aborts. A history deleted from
 * Temporal (as retention does) is counted and listed as not retained and the run passes; a server that cannot be
 * reached is named, and the store is still checked.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runAuditCommand } from '../../../src/audit/cli';
import { historyGone } from '../../../src/audit/temporal-witness';
import { startFaultWorld, type FaultWorld, type WorkerProcess } from './fault-harness';

describe('T2: the Temporal witness degrades, never aborts', () => {
  let world: FaultWorld;
  let worker: WorkerProcess;
  const operationIds: string[] = [];

  /** `asyncjob audit verify` against the world's store, with `env` for Temporal. */
  async function verify(env: Record<string, string>): Promise<{ code: number; out: string }> {
    let out = '';
    const code = await runAuditCommand(['verify', '--store', `sqlite:${world.storeFile}`, '--with-temporal'], {
      stdout: (t) => (out += t),
      stderr: (t) => (out += t),
      env,
    });
    return { code, out };
  }

  beforeAll(async () => {
    world = await startFaultWorld('witness');
    worker = world.spawnWorker();
    await worker.ready;
    const requests = [world.request('rest'), world.request('rest')];
    await Promise.all(requests.map((r) => world.client.start(r)));
    const summaries = await Promise.all(requests.map((r) => world.client.result(r.operationId)));
    expect(summaries.map((s) => s.localState)).toEqual(['succeeded', 'succeeded']);
    operationIds.push(...requests.map((r) => r.operationId));
  });

  afterAll(async () => {
    worker?.kill('SIGTERM');
    await worker?.exited;
    await world?.stop();
  });

  const temporalEnv = (): Record<string, string> => ({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: 'default',
    ASYNCJOB_TASK_QUEUE: world.taskQueue,
  });

  it('T2: a history deleted from Temporal is counted as not retained, and the run still passes', async () => {
    const before = await verify(temporalEnv());
    expect(before.code, before.out).toBe(0);
    expect(before.out).toContain('2 histories read from Temporal');

    const deleted = operationIds[0]!;
    await world.temporal.workflowService.deleteWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: deleted },
    });
    // Deletion is asynchronous on the server (it waits for the visibility queue, slow on a busy machine): wait
    // until the server answers "not found" for the history, as it does for one past retention.
    const deadline = Date.now() + 180_000;
    for (;;) {
      const gone = await world.temporal.workflow
        .getHandle(deleted)
        .fetchHistory()
        .then(
          () => false,
          (err: unknown) => historyGone(err),
        );
      if (gone) break;
      expect(Date.now(), `the history of ${deleted} was still served 180 s after its deletion`).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const after = await verify(temporalEnv());
    expect(after.code, after.out).toBe(0);
    expect(after.out).toContain(`1 histories read from Temporal, not retained: 1 (${deleted})`);
  }, 300_000);

  it('T2: an unreachable server is named, the store is still checked, and the run cannot verify (exit 2)', async () => {
    const run = await verify({ ...temporalEnv(), TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(run.code, run.out).toBe(2);
    expect(run.out).toMatch(/UNCHECKED: Temporal witness unavailable/);
    expect(run.out).toMatch(/2 operations/);
  });
});
