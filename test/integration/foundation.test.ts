import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AsyncJobClient } from '../../src/client';
import { createWorker } from '../../src/worker';
import { connectTestEnvironment, uniqueId, workflowBundle } from '../setup/temporal';

describe('foundation: AsyncJobWorkflow on a real Temporal dev server', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = uniqueId('foundation');

  beforeAll(async () => {
    env = await connectTestEnvironment();
    const info = await env.client.workflowService.getSystemInfo({});
    console.log(`[foundation] connected to Temporal ${info.serverVersion}`);
    worker = await createWorker({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
    });
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  it('starts through the client, answers the state query and finishes', async () => {
    const client = new AsyncJobClient({ client: env.client, taskQueue });
    const operationId = uniqueId('op');
    const handle = await client.start({ operationId, provider: 'sim-rest', observeForMs: 60_000 });
    expect(handle.workflowId).toBe(operationId);
    await expect.poll(() => client.get(operationId).then((v) => v.localState)).toBe('observing');
    await client.cancel(operationId, { requestedBy: 'test', reason: 'foundation check' });
    const final = await client.result(operationId);
    expect(final).toMatchObject({ operationId, localState: 'cancel_requested', cancelRequest: { requestedBy: 'test' } });
  });
});
