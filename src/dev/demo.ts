/**
 * `asyncjob dev` (= `npm start`): the embedded demo on its defaults. Starts the Temporal dev server with its
 * Web UI (persisted under `.asyncjob/`), a worker, runs one operation to completion and prints its workflow
 * ID and Web UI link, then keeps running until Ctrl-C.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { AsyncJobClient } from '../client';
import { createWorker } from '../worker';
import { projectRoot } from './temporal-cli';
import { startDevServer } from './temporal-server';

const TEMPORAL_PORT = Number(process.env.ASYNCJOB_TEMPORAL_PORT ?? 7233);
const UI_PORT = Number(process.env.ASYNCJOB_UI_PORT ?? 8233);

/** Runs the demo; resolves with the process exit code once interrupted. */
export async function runDev(): Promise<number> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dataDir = path.join(projectRoot(), '.asyncjob');
  const server = await startDevServer({
    port: TEMPORAL_PORT,
    uiPort: UI_PORT,
    dbFile: path.join(dataDir, 'temporal.db'),
    logFile: path.join(dataDir, 'temporal.log'),
  });
  console.log(`Temporal ${server.serverVersion} dev server at ${server.address}; Web UI ${server.uiUrl}`);
  const connection = await NativeConnection.connect({ address: server.address });
  const worker = await createWorker({ connection });
  const running = worker.run();
  const client = new AsyncJobClient({ client: new Client({ connection: await Connection.connect({ address: server.address }) }) });

  const operationId = `demo-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  await client.start({ operationId, provider: 'demo', observeForMs: 2000 });
  console.log(`operation ${operationId} started`);
  const final = await client.result(operationId);
  console.log(`operation ${operationId} finished: ${final.localState}`);
  console.log(`Web UI: ${server.uiUrl}/namespaces/${server.namespace}/workflows/${encodeURIComponent(operationId)}`);
  console.log('Running until Ctrl-C.');

  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  // The Temporal runtime also stops workers on SIGINT/SIGTERM; only ask if it has not.
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await running;
  await connection.close();
  await server.stop();
  return 0;
}
