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
import { Runtime } from '@temporalio/worker';
import { formatStoryText, renderStory } from '../audit/story';
import type { StartRequest } from '../core/operation';
import { quietSdkLogger } from '../doctor/sdk-logger';
import { DEFAULT_TASK_QUEUE } from '../worker';
import { DEMO_SCRIPTS } from './demo-scenario';
import { DEMO_PROVIDER, type DemoServices, startDemoServices, stopDemoServices } from './demo-services';
import { projectRoot } from './temporal-cli';
import { type DevServer, startDevServer } from './temporal-server';

export { DEMO_SCRIPTS } from './demo-scenario';

const TEMPORAL_PORT = Number(process.env.ASYNCJOB_TEMPORAL_PORT ?? 7233);
const UI_PORT = Number(process.env.ASYNCJOB_UI_PORT ?? 8233);

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
  const services = await startDemoServices(server, dataDir);
  // Unique per run: the time to the second and a random suffix.
  const suffix = randomBytes(2).toString('hex');
  const stamp = `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${suffix}`;
  const demo: DemoRun = { server, services, stamp };

  try {
    const first = await runReport(demo);
    await runLostCancelRace(demo);
    await printWhatNext(demo, dataDir);
    if (options.keepRunning !== false) {
      console.log('Running until Ctrl-C.');
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    }
    return first === 'succeeded' ? 0 : 1;
  } finally {
    await stopDemoServices(services);
    await server.stop();
  }
}

/** One run of the demo: the dev server, the services beside it, and the stamp that makes its operation IDs new. */
interface DemoRun {
  server: DevServer;
  services: DemoServices;
  stamp: string;
}

/** The start request of the demo operation of `kind` (a script of {@link DEMO_SCRIPTS}). */
function demoRequest(demo: DemoRun, kind: string): StartRequest {
  return {
    operationId: `demo-${kind}-${demo.stamp}`,
    provider: DEMO_PROVIDER,
    payload: { report: kind === 'report' ? 'monthly-sales' : 'customer-export', scenario: kind },
    startedBy: 'service:asyncjob-demo',
    authorisedBy: 'policy:demo',
    createDeadline: { afterMs: 60_000 },
    resultDeadline: { afterMs: 10 * 60_000 },
    policy: { baseDelayMs: 1_000, maxDelayMs: 4_000, cancelDeadlineMs: 30_000 },
  };
}

/** Prints an operation's audit story and its Web UI link. */
async function printStory(demo: DemoRun, operationId: string): Promise<void> {
  const entries = await demo.services.store.entries(operationId);
  console.log(formatStoryText(operationId, renderStory(entries.map((e) => e.entry)), null));
  console.log(
    `Web UI: ${demo.server.uiUrl}/namespaces/${demo.server.namespace}/workflows/${encodeURIComponent(operationId)}`,
  );
}

/** The report meets a 503 with Retry-After and succeeds; resolves with its final local state. */
async function runReport(demo: DemoRun): Promise<string> {
  const { client } = demo.services;
  const report = demoRequest(demo, 'report');
  await client.start(report);
  console.log(
    `\noperation ${report.operationId} started (provider ${DEMO_PROVIDER}, task queue ${DEFAULT_TASK_QUEUE})`,
  );
  const first = await client.result(report.operationId);
  console.log(`operation ${report.operationId}: ${first.localState}`);
  await printStory(demo, report.operationId);
  return first.localState;
}

/** The export is cancelled while it runs, and finishes before the cancel takes effect (X2). */
async function runLostCancelRace(demo: DemoRun): Promise<void> {
  const { client } = demo.services;
  const exportJob = demoRequest(demo, 'export');
  await client.start(exportJob);
  await waitUntilObserving(demo, exportJob.operationId);
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
  await printStory(demo, exportJob.operationId);
}

/** Waits, up to 10 s in steps of 100 ms, until the operation is observing its provider job (so a cancel can race it). */
async function waitUntilObserving(demo: DemoRun, operationId: string): Promise<void> {
  const localState = () =>
    demo.services.client.get(operationId).then(
      (record) => record.localState,
      () => 'starting',
    );
  for (let attempt = 0; attempt < 100 && (await localState()) !== 'observing'; attempt++)
    await new Promise((resolve) => setTimeout(resolve, 100));
}

/** Prints whether the audit chains are intact, then what to try next. */
async function printWhatNext(demo: DemoRun, dataDir: string): Promise<void> {
  const { server, services } = demo;
  const verified = await services.store.verifyChains();
  console.log(
    `\naudit chains: ${verified.breaks.length === 0 ? 'intact' : 'BROKEN'} (${verified.operationsChecked} operations, ${verified.entriesChecked} entries); Web UI ${server.uiUrl}`,
  );
  const storeFile = path.join(dataDir, 'asyncjob.db');
  console.log(
    tryNextText({
      provider: DEMO_PROVIDER,
      simulatorUrl: services.simulator.url,
      temporalAddress: server.address,
      uiUrl: server.uiUrl,
      namespace: server.namespace,
      // `audit show` reads ASYNCJOB_STORE's default, relative to where it runs: name the demo's store elsewhere.
      storeArgument:
        path.resolve(process.cwd(), '.asyncjob', 'asyncjob.db') === storeFile ? undefined : `sqlite:${storeFile}`,
      suffix: demo.stamp.toLowerCase(),
    }),
  );
}
