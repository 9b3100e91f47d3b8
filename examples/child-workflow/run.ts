/**
 * Runs the month-end close once against the asyncjob worker `npm start` runs (provider demo-reports):
 *
 *   npx tsx examples/child-workflow/run.ts
 *
 * It starts a worker of its own for the close (task queue `month-end-close`), starts the close with a new month ID,
 * prints how each job ended, and stops. The review escalates and nobody answers within its 2 s decision deadline,
 * so the close compensates the report. TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE (default) and
 * ASYNCJOB_TASK_QUEUE (asyncjob) name the server and the asyncjob workers, as for asyncjob's own commands.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createMonthEndActivities } from './activities';
import type { monthEndClose } from './workflows';

const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
const taskQueue = 'month-end-close';

async function main(): Promise<void> {
  const month = `2026-11-${Date.now().toString(36)}`;
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: workerConnection,
    namespace,
    taskQueue,
    workflowsPath: path.join(__dirname, 'workflows.ts'),
    activities: createMonthEndActivities((line) => console.log(line)),
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  try {
    const outcome = await worker.runUntil(async () => {
      const close = await client.workflow.start<typeof monthEndClose>('monthEndClose', {
        taskQueue,
        workflowId: `month-end-close-${month}`,
        args: [
          month,
          {
            ...(process.env.ASYNCJOB_TASK_QUEUE ? { taskQueue: process.env.ASYNCJOB_TASK_QUEUE } : {}),
            reviewDecisionMs: 2_000,
          },
        ],
      });
      console.log(`month-end close ${close.workflowId} started`);
      return close.result();
    });
    for (const job of outcome.jobs) console.log(`${job.operationId}: ${job.ended}`);
    console.log(`month-end close ${month}: ${outcome.outcome}`);
  } finally {
    await connection.close();
    await workerConnection.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
