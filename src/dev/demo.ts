/**
 * `asyncjob dev` (= `npm start`): the embedded demo on its defaults. It starts the Temporal dev server with its
 * Web UI (persisted under `.asyncjob/`), a provider simulator, the SQLite store, a worker and the webhook
 * receiver; runs two realistic operations (one meets a 503 with Retry-After, one is cancelled while the job
 * finishes anyway); prints each one's audit story and Web UI link, then what to try next (the provider it serves,
 * its scripts, and copy-paste `asyncjob start`, `watch`, `decide` lines for a script that escalates); and keeps
 * serving until Ctrl-C. Job IDs (a fresh simulator seed) and operation IDs are new on every run, so runs that
 * share `.asyncjob/` never meet each other's jobs.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { createActivities } from '../activities';
import { FileArtifactStore } from '../adapters/artifacts/artifact-store';
import { createProviderRegistry } from '../adapters/providers/registry';
import { openSqliteStore } from '../adapters/store/sqlite-store';
import { formatStoryText, renderStory } from '../audit/story';
import { AsyncJobClient } from '../client';
import type { StartRequest } from '../core/operation';
import { quietSdkLogger } from '../doctor/sdk-logger';
import { createJsonLogger } from '../logging';
import { startSimulator } from '../simulator';
import { webhookOutcomeReporter } from '../webhooks/outcome-reporter';
import { startWebhookReceiver, type WebhookSettings } from '../webhooks/receiver';
import { createWorkers, DEFAULT_TASK_QUEUE, runWorkers, shutdownWorkers } from '../worker';
import { projectRoot } from './temporal-cli';
import { startDevServer } from './temporal-server';

const TEMPORAL_PORT = Number(process.env.ASYNCJOB_TEMPORAL_PORT ?? 7233);
const UI_PORT = Number(process.env.ASYNCJOB_UI_PORT ?? 8233);
const PROVIDER = 'demo-reports';

/**
 * The demo provider's jobs, chosen by the payload's `scenario`: a report that meets a 503 with Retry-After, an
 * export whose cancel loses the race, and a review that stops in a state the contract does not know (so it
 * escalates `unknown_state` and waits for a human's decision; after an `extend`, the next read sees it done).
 */
export const DEMO_SCRIPTS: Readonly<Record<string, string>> = {
  report: 'queued, running, a 503 with Retry-After 2 s, then succeeded with 12 records (1 failed item)',
  export: 'running for 2.5 s, then succeeded; a cancel arriving meanwhile loses the race (X2)',
  review:
    'running for 2 s, then "manual_review", a state the contract does not know: escalates unknown_state; after "decide --option extend" the next read sees it succeeded',
};

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
    review: {
      steps: [
        { state: 'running', durationMs: 2_000, progress: 50 },
        { state: 'manual_review', polls: 1, progress: 90 },
        { state: 'succeeded', progress: 100 },
      ],
      result: { kind: 'batch', items: 5, failedItems: [] },
    },
  },
};

/** A shell word, quoted when needed. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** What to try next: the provider, its scripts, and the commands that show an escalation answered live. */
export function tryNextText(options: {
  provider: string;
  simulatorUrl: string;
  temporalAddress: string;
  uiUrl: string | undefined;
  namespace: string;
  storeArgument: string | undefined;
  suffix: string;
}): string {
  const id = `try-review-${options.suffix}`;
  const env =
    options.temporalAddress === '127.0.0.1:7233' ? '' : `export TEMPORAL_ADDRESS=${options.temporalAddress}\n    `;
  const payload = shellWord(JSON.stringify({ report: 'quarterly-review', scenario: 'review' }));
  const store = options.storeArgument !== undefined ? ` --store ${shellWord(options.storeArgument)}` : '';
  const scripts = Object.entries(DEMO_SCRIPTS)
    .map(([name, text]) => `    ${name.padEnd(8)} ${text}`)
    .join('\n');
  const escalated =
    options.uiUrl !== undefined
      ? `\n  Escalated operations in the Web UI: ${options.uiUrl}/namespaces/${options.namespace}/workflows?query=${encodeURIComponent('AsyncJobState="escalated"')}`
      : '';
  return `
What to try next (this demo keeps serving; run these in another terminal, in this directory):
  The worker serves provider ${options.provider} (the simulator's rest dialect at ${options.simulatorUrl}).
  Its scripts, chosen by the payload's "scenario" field:
${scripts}
  Start one that escalates, watch it stop for a human, see the options, answer, and watch it finish:
    ${env}npx asyncjob start --provider ${options.provider} --operation-id ${id} --payload ${payload} --started-by you --authorised-by you --create-deadline 1m --result-deadline 30m
    npx asyncjob watch ${id}
    npx asyncjob decide ${id}
    npx asyncjob decide ${id} --option extend --extend 15m --checks 4 --by you --reason "reviewed by hand"
    npx asyncjob watch ${id}
    npx asyncjob audit show ${id}${store}${escalated}
`;
}

/** Runs the demo; resolves with the process exit code once interrupted. */
export async function runDev(options: { keepRunning?: boolean } = {}): Promise<number> {
  // Warnings only, without the SDK's expected ones (an activity-only worker registers no workflows by design).
  Runtime.install({ logger: quietSdkLogger('WARN') });
  const dataDir = path.join(projectRoot(), '.asyncjob');
  const server = await startDevServer({
    port: TEMPORAL_PORT,
    uiPort: UI_PORT,
    dbFile: path.join(dataDir, 'temporal.db'),
    logFile: path.join(dataDir, 'temporal.log'),
  });
  console.log(`Temporal ${server.serverVersion} dev server at ${server.address}; Web UI ${server.uiUrl}`);

  // The demo's secrets exist only in this process: the worker resolves them by reference (T4).
  const secrets = {
    ASYNCJOB_SIMULATOR_TOKEN: randomBytes(24).toString('hex'),
    ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: randomBytes(24).toString('hex'),
  };
  const store = await openSqliteStore({
    path: path.join(dataDir, 'asyncjob.db'),
    forbiddenValues: Object.values(secrets),
  });
  const connection = await NativeConnection.connect({ address: server.address });
  const client = new AsyncJobClient({
    client: new Client({ connection: await Connection.connect({ address: server.address }) }),
  });
  const receiver = await startWebhookReceiver({
    store,
    webhookSettings: (name) =>
      name === PROVIDER ? (registry.get(PROVIDER).adapter.contract?.webhook as WebhookSettings | undefined) : undefined,
    signal: (operationId, hint) => client.signalWebhook(operationId, hint),
    env: secrets,
    // A refused webhook is printed (a JSON line with its reason); accepted ones are in the audit story.
    onOutcome: webhookOutcomeReporter({ logger: createJsonLogger({ level: 'warn' }) }),
  });
  const sim = await startSimulator({
    dialect: 'rest',
    token: secrets.ASYNCJOB_SIMULATOR_TOKEN,
    scenario: scenario as never,
    // A fresh seed per run: job IDs never repeat across runs that share the store and the Temporal database.
    seed: randomBytes(4).readUInt32BE(0),
    webhook: { url: `${receiver.url}/webhooks/${PROVIDER}`, secret: secrets.ASYNCJOB_SIMULATOR_WEBHOOK_SECRET },
  });
  console.log(`provider simulator (rest dialect) at ${sim.url}; webhook receiver at ${receiver.url}`);
  const registry = await createProviderRegistry({
    providers: [{ name: PROVIDER, path: 'rest' }],
    baseUrls: { [PROVIDER]: sim.url },
    env: secrets,
  });
  const workers = await createWorkers({
    connection,
    activities: createActivities({
      store,
      providers: registry,
      artifacts: new FileArtifactStore(path.join(dataDir, 'artifacts')),
    }),
    providerQueues: [{ taskQueue: registry.get(PROVIDER).facts.taskQueue!, maxRequestsPerSecond: 20 }],
  });
  const running = runWorkers(workers);
  // Unique per run: the time to the second and a random suffix.
  const suffix = randomBytes(2).toString('hex');
  const stamp = `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${suffix}`;
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
  const story = async (id: string) =>
    formatStoryText(id, renderStory((await store.entries(id)).map((e) => e.entry)), null);

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
    for (
      let i = 0;
      i < 100 &&
      (await client.get(exportJob.operationId).then(
        (r) => r.localState,
        () => 'starting',
      )) !== 'observing';
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    const answer = await client.cancel(exportJob.operationId, {
      requestedBy: 'alice@example.com',
      reason: 'export no longer needed',
      expectedEffect: 'the export stops',
    });
    console.log(`\ncancel of ${exportJob.operationId}: ${JSON.stringify(answer)}`);
    const second = await client.result(exportJob.operationId);
    console.log(
      `operation ${exportJob.operationId}: ${second.localState} (the job finished before the cancel took effect, X2)`,
    );
    console.log(await story(exportJob.operationId));
    console.log(`Web UI: ${link(exportJob.operationId)}`);
    const verified = await store.verifyChains();
    console.log(
      `\naudit chains: ${verified.breaks.length === 0 ? 'intact' : 'BROKEN'} (${verified.operationsChecked} operations, ${verified.entriesChecked} entries); Web UI ${server.uiUrl}`,
    );
    const storeFile = path.join(dataDir, 'asyncjob.db');
    console.log(
      tryNextText({
        provider: PROVIDER,
        simulatorUrl: sim.url,
        temporalAddress: server.address,
        uiUrl: server.uiUrl,
        namespace: server.namespace,
        // `audit show` reads ASYNCJOB_STORE's default, relative to where it runs: name the demo's store elsewhere.
        storeArgument:
          path.resolve(process.cwd(), '.asyncjob', 'asyncjob.db') === storeFile ? undefined : `sqlite:${storeFile}`,
        suffix: stamp.toLowerCase(),
      }),
    );

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
