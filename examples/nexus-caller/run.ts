/**
 * Runs one report through the `asyncjob` Nexus service from a caller workflow in a namespace of its own, against
 * the asyncjob worker `npm start` runs (provider demo-reports, which serves the service on its task queue):
 *
 *   npx tsx examples/nexus-caller/run.ts
 *
 * It creates, when missing, the callers' namespace `asyncjob-callers` and the endpoint `asyncjob` that targets
 * the asyncjob workers (the Temporal CLI commands docs/nexus.md shows), starts a worker of its own for the caller,
 * runs `runReportThroughNexus` with a new operation ID, prints the operation's end and who asyncjob recorded as its
 * starter, and stops. TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE (default) and
 * ASYNCJOB_TASK_QUEUE (asyncjob) name the server and the asyncjob workers, as for asyncjob's own commands, and
 * ASYNCJOB_NEXUS_ENDPOINT (asyncjob) the endpoint.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { ensureNexusSetup } from '../../src/dev/nexus-setup';
import { DEFAULT_TASK_QUEUE } from '../../src/core/task-queues';
import { workflowActor } from '../../src/core/actor';
import type { runReportThroughNexus } from './workflows';

const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const callerNamespace = 'asyncjob-callers';
const endpoint = process.env.ASYNCJOB_NEXUS_ENDPOINT ?? 'asyncjob';
const taskQueue = 'nexus-callers';

async function main(): Promise<void> {
  const { created } = await ensureNexusSetup({
    address,
    callerNamespace,
    endpoint,
    targetNamespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    targetTaskQueue: process.env.ASYNCJOB_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
  });
  for (const what of created) console.log(`created ${what}`);
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: workerConnection,
    namespace: callerNamespace,
    taskQueue,
    workflowsPath: path.join(__dirname, 'workflows.ts'),
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: callerNamespace });
  const operationId = `nexus-report-${Date.now().toString(36)}`;
  try {
    const summary = await worker.runUntil(async () => {
      const caller = await client.workflow.start<typeof runReportThroughNexus>('runReportThroughNexus', {
        taskQueue,
        workflowId: `report-caller-${operationId}`,
        args: [
          {
            operationId,
            provider: 'demo-reports',
            payload: { report: 'monthly-sales', scenario: 'export' },
            authorisedBy: 'policy:nexus-caller-example',
            createDeadline: { afterMs: 60_000 },
            resultDeadline: { afterMs: 600_000 },
          },
          endpoint,
        ],
      });
      console.log(`caller ${caller.workflowId} runs ${operationId} through Nexus endpoint ${endpoint}`);
      console.log(`started by ${workflowActor(callerNamespace, caller.workflowId)}`);
      return caller.result();
    });
    console.log(`${summary.operationId}: ${summary.localState} (job ${summary.jobId ?? 'none'})`);
  } finally {
    await connection.close();
    await workerConnection.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
