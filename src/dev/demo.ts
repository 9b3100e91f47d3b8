/**
 * `asyncjob dev` (= `npm start`): the embedded demo on its defaults. It starts the Temporal dev server with its
 * Web UI (persisted under `.asyncjob/`), a provider simulator, the SQLite store, a worker and the webhook
 * receiver; runs two realistic operations (one meets a 503 with Retry-After, one is cancelled while the job
 * finishes anyway); prints each one's audit story and Web UI link; and keeps running until Ctrl-C.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createActivities } from '../activities';
import { FileArtifactStore } from '../adapters/artifacts/artifact-store';
import { createProviderRegistry } from '../adapters/providers/registry';
import { openSqliteStore } from '../adapters/store/sqlite-store';
import { formatStoryText, renderStory } from '../audit/story';
import { AsyncJobClient } from '../client';
import type { StartRequest } from '../core/operation';
import { startSimulator } from '../simulator';
import { startWebhookReceiver, type WebhookSettings } from '../webhooks/receiver';
import { createWorkers, DEFAULT_TASK_QUEUE, runWorkers, shutdownWorkers } from '../worker';
import { projectRoot } from './temporal-cli';
import { startDevServer } from './temporal-server';

const TEMPORAL_PORT = Number(process.env.ASYNCJOB_TEMPORAL_PORT ?? 7233);
const UI_PORT = Number(process.env.ASYNCJOB_UI_PORT ?? 8233);
const PROVIDER = 'demo-reports';

/** The demo provider's jobs: a report that meets a 503 with Retry-After, and one whose cancel loses the race. */
const scenario = {
  scripts: {
    report: {
      steps: [
        { state: 'queued', durationMs: 1_000, progress: 0 },
        { state: 'running', durationMs: 1_500, progress: 25 },
        { state: 'running', durationMs: 1_500, progress: 70 },
        { state: 'succeeded', progress: 100 },
      ],
      result: { kind: 'batch', items: 12, failedItems: [7] },
      faults: [{ on: 'status', nth: 2, fault: { kind: 'http_error', status: 503, retryAfterSeconds: 2 } }],
    },
    export: {
      steps: [
        { state: 'running', durationMs: 2_500, progress: 40 },
        { state: 'succeeded', progress: 100 },
      ],
      cancel: { afterMs: 60_000, outcome: 'succeeded' },
      result: { kind: 'json', body: { rows: 3 } },
    },
  },
};

/** Runs the demo; resolves with the process exit code once interrupted. */
export async function runDev(options: { keepRunning?: boolean } = {}): Promise<number> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dataDir = path.join(projectRoot(), '.asyncjob');
  const server = await startDevServer({
    port: TEMPORAL_PORT,
    uiPort: UI_PORT,
    dbFile: path.join(dataDir, 'temporal.db'),
    logFile: path.join(dataDir, 'temporal.log'),
  });
  console.log(`Temporal ${server.serverVersion} dev server at ${server.address}; Web UI ${server.uiUrl}`);

  // The demo's secrets exist only in this process: the worker resolves them by reference (T4).
  const secrets = { ASYNCJOB_SIMULATOR_TOKEN: randomBytes(24).toString('hex'), ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: randomBytes(24).toString('hex') };
  const store = await openSqliteStore({ path: path.join(dataDir, 'asyncjob.db'), forbiddenValues: Object.values(secrets) });
  const connection = await NativeConnection.connect({ address: server.address });
  const client = new AsyncJobClient({ client: new Client({ connection: await Connection.connect({ address: server.address }) }) });
  const receiver = await startWebhookReceiver({
    store,
    webhookSettings: (name) => (name === PROVIDER ? (registry.get(PROVIDER).adapter.contract?.webhook as WebhookSettings | undefined) : undefined),
    signal: (operationId, hint) => client.signalWebhook(operationId, hint),
    env: secrets,
  });
  const sim = await startSimulator({
    dialect: 'rest',
    token: secrets.ASYNCJOB_SIMULATOR_TOKEN,
    scenario: scenario as never,
    webhook: { url: `${receiver.url}/webhooks/${PROVIDER}`, secret: secrets.ASYNCJOB_SIMULATOR_WEBHOOK_SECRET },
  });
  console.log(`provider simulator (rest dialect) at ${sim.url}; webhook receiver at ${receiver.url}`);
  const registry = await createProviderRegistry({ providers: [{ name: PROVIDER, path: 'rest' }], baseUrls: { [PROVIDER]: sim.url }, env: secrets });
  const workers = await createWorkers({
    connection,
    activities: createActivities({ store, providers: registry, artifacts: new FileArtifactStore(path.join(dataDir, 'artifacts')) }),
    providerQueues: [{ taskQueue: registry.get(PROVIDER).facts.taskQueue!, maxRequestsPerSecond: 20 }],
  });
  const running = runWorkers(workers);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  const request = (kind: string): StartRequest => ({
    operationId: `demo-${kind}-${stamp}`,
    provider: PROVIDER,
    payload: { report: kind === 'report' ? 'monthly-sales' : 'customer-export', scenario: kind },
    startedBy: 'service:asyncjob-demo',
    authorisedBy: 'policy:demo',
    createDeadline: { afterMs: 60_000 },
    resultDeadline: { afterMs: 10 * 60_000 },
    policy: { baseDelayMs: 1_000, maxDelayMs: 4_000, cancelDeadlineMs: 30_000 },
  });
  const link = (id: string) => `${server.uiUrl}/namespaces/${server.namespace}/workflows/${encodeURIComponent(id)}`;
  const story = async (id: string) => formatStoryText(id, renderStory((await store.entries(id)).map((e) => e.entry)), null);

  try {
    const report = request('report');
    await client.start(report);
    console.log(`\noperation ${report.operationId} started (provider ${PROVIDER}, task queue ${DEFAULT_TASK_QUEUE})`);
    const first = await client.result(report.operationId);
    console.log(`operation ${report.operationId}: ${first.localState}`);
    console.log(await story(report.operationId));
    console.log(`Web UI: ${link(report.operationId)}`);

    const exportJob = request('export');
    await client.start(exportJob);
    for (let i = 0; i < 100 && (await client.get(exportJob.operationId).then((r) => r.localState, () => 'starting')) !== 'observing'; i++) await new Promise((r) => setTimeout(r, 100));
    const answer = await client.cancel(exportJob.operationId, { requestedBy: 'alice@example.com', reason: 'export no longer needed', expectedEffect: 'the export stops' });
    console.log(`\ncancel of ${exportJob.operationId}: ${JSON.stringify(answer)}`);
    const second = await client.result(exportJob.operationId);
    console.log(`operation ${exportJob.operationId}: ${second.localState} (the job finished before the cancel took effect, X2)`);
    console.log(await story(exportJob.operationId));
    console.log(`Web UI: ${link(exportJob.operationId)}`);
    const verified = await store.verifyChains();
    console.log(`\naudit chains: ${verified.breaks.length === 0 ? 'intact' : 'BROKEN'} (${verified.operationsChecked} operations, ${verified.entriesChecked} entries); Web UI ${server.uiUrl}`);

    if (options.keepRunning !== false) {
      console.log('Running until Ctrl-C.');
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    }
    return first.localState === 'succeeded' ? 0 : 1;
  } finally {
    // The Temporal runtime also stops workers on SIGINT/SIGTERM; only ask those that are still running.
    shutdownWorkers(workers);
    await running.catch(() => undefined);
    await receiver.stop();
    await sim.stop();
    await registry.close();
    await store.close();
    await connection.close();
    await server.stop();
  }
}
