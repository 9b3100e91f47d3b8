/**
 * `asyncjob dev` (= `npm start`): the embedded demo on its defaults. It starts the Temporal dev server with its
 * Web UI (persisted under `.asyncjob/`), a provider simulator, the SQLite store, a worker and the webhook
 * receiver; runs two realistic operations (one meets a 503 with Retry-After, one is cancelled while the job
 * finishes anyway); prints each one's audit story and Web UI link, then what to try next (the provider it serves,
 * its scripts, and copy-paste `asyncjob start`, `watch`, `decide` lines for a script that escalates); and keeps
 * serving until Ctrl-C. Job IDs (a fresh simulator seed) and operation IDs are new on every run, so runs that
 * share `.asyncjob/` never meet each other's jobs; an operation of this run still running when it ends
 * (interrupted, or an error) is terminated and said so. Every listener is placed by a setting (demo-settings.ts).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Runtime } from '@temporalio/worker';
import { formatStoryText, renderStory } from '../audit/story';
import { AsyncJobRequestRefused } from '../client/errors';
import type { StartRequest } from '../core/operation';
import { quietSdkLogger } from '../doctor/sdk-logger';
import { DEFAULT_TASK_QUEUE } from '../worker';
import { endRunningOperations } from './demo-cleanup';
import { DEMO_SCRIPTS } from './demo-scenario';
import {
  DEMO_PROVIDER,
  type DemoServices,
  startDemoCodecServer,
  startDemoServices,
  stopDemoServices,
} from './demo-services';
import { demoSettings } from './demo-settings';
import { projectRoot } from './temporal-cli';
import { type DevServer, startDevServer } from './temporal-server';

/** A shell word, quoted when needed. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** What to try next: the provider, its scripts, and the commands that show an escalation answered live. */
function tryNextText(options: {
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

/**
 * Resolves when the process is asked to stop (SIGINT, SIGTERM). Its listeners stay until `dispose`, so a signal
 * repeated during the clean-up (a second Ctrl-C, or npm relaying the terminal's) does not end the process
 * before the run has ended what it started.
 */
function interruption(): { interrupted: Promise<void>; dispose(): void } {
  let dispose = (): void => undefined;
  const interrupted = new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    dispose = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    };
  });
  return { interrupted, dispose };
}

/** Marks a step cut short by Ctrl-C. */
const INTERRUPTED = Symbol('interrupted');

/**
 * Runs the demo; resolves with the process exit code once interrupted: 0 when its report succeeded, 1 when it did
 * not, 130 when interrupted before the demo's own operations ended.
 */
export async function runDev(options: { keepRunning?: boolean } = {}): Promise<number> {
  const settings = demoSettings(process.env, projectRoot(), process.cwd());
  // Warnings only, without the SDK's expected ones (an activity-only worker registers no workflows by design).
  Runtime.install({ logger: quietSdkLogger('WARN') });
  const stop = interruption();
  const codecServer = await startDemoCodecServer(settings.uiPort);
  const server = await startDevServer({
    ...(codecServer !== undefined ? { codecEndpoint: codecServer.url } : {}),
    port: settings.temporalPort,
    uiPort: settings.uiPort,
    httpPort: settings.temporalHttpPort,
    metricsPort: settings.temporalMetricsPort,
    dbFile: path.join(settings.dataDir, 'temporal.db'),
    logFile: path.join(settings.dataDir, 'temporal.log'),
  }).catch(async (error: unknown) => {
    // No dev server: the codec server started for its UI goes too.
    await codecServer?.stop();
    throw error;
  });
  console.log(
    `Temporal ${server.serverVersion} dev server at ${server.address}; Web UI ${server.uiUrl}; HTTP API port ${server.httpPort}; metrics http://127.0.0.1:${server.metricsPort}/metrics`,
  );
  if (codecServer !== undefined) console.log(`payloads encrypted; the Web UI decodes them through ${codecServer.url}`);
  const started: string[] = [];
  let services: DemoServices | undefined;
  try {
    services = await startDemoServices(server, settings.dataDir, settings);
    // Unique per run: the time to the second and a random suffix.
    const suffix = randomBytes(2).toString('hex');
    const stamp = `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${suffix}`;
    const demo: DemoRun = { server, services, stamp, started };
    const steps = (async () => {
      const first = await runReport(demo);
      await runLostCancelRace(demo);
      await printWhatNext(demo, settings.dataDir);
      return first;
    })();
    // Interrupted, the steps are abandoned: their later failure (the services stop under them) is not an error.
    steps.catch(() => undefined);
    const first = await Promise.race([steps, stop.interrupted.then(() => INTERRUPTED)]);
    if (first === INTERRUPTED) {
      console.log('\ninterrupted: stopping the demo');
      return 130;
    }
    if (options.keepRunning !== false) {
      console.log('Running until Ctrl-C.');
      await stop.interrupted;
    }
    return first === 'succeeded' ? 0 : 1;
  } finally {
    if (services !== undefined) {
      // Before the services stop: terminating needs the server, not the workers.
      await endRunningOperations(services.temporal, started, (line) => console.log(line));
      await stopDemoServices(services);
    }
    await server.stop();
    await codecServer?.stop();
    console.log('asyncjob dev stopped: the worker, the simulator, the webhook receiver and the dev server have ended');
    stop.dispose();
  }
}

/** One run of the demo: the dev server, the services beside it, and the stamp that makes its operation IDs new. */
interface DemoRun {
  server: DevServer;
  services: DemoServices;
  stamp: string;
  /** The operation IDs this run started, for its clean-up. */
  started: string[];
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

/** Starts one of the demo's operations, remembered first so the run's clean-up finds it whatever happens next. */
async function startDemoOperation(demo: DemoRun, kind: string): Promise<StartRequest> {
  const request = demoRequest(demo, kind);
  demo.started.push(request.operationId);
  await demo.services.client.start(request);
  return request;
}

/** The report meets a 503 with Retry-After and succeeds; resolves with its local state when it ended or escalated. */
async function runReport(demo: DemoRun): Promise<string> {
  const report = await startDemoOperation(demo, 'report');
  console.log(
    `\noperation ${report.operationId} started (provider ${DEMO_PROVIDER}, task queue ${DEFAULT_TASK_QUEUE})`,
  );
  const first = await demo.services.client.result(report.operationId);
  console.log(`operation ${report.operationId}: ${first.localState}`);
  await printStory(demo, report.operationId);
  return first.localState;
}

/** The states before the provider accepted the job: a cancel sent then would not race it. */
const BEFORE_ACCEPTED: readonly string[] = ['starting', 'create_pending', 'creating', 'reconciliation'];

/**
 * The export is cancelled while it runs, and finishes before the cancel takes effect (X2). On a busy machine the
 * job can finish before the cancel is even sent: the workflow then refuses it (the operation is collecting its
 * result or has ended), which is the same race lost one step earlier, printed as such.
 */
async function runLostCancelRace(demo: DemoRun): Promise<void> {
  const { client } = demo.services;
  const { operationId } = await startDemoOperation(demo, 'export');
  await waitUntilAccepted(demo, operationId);
  try {
    const answer = await client.cancel(operationId, {
      requestedBy: 'alice@example.com',
      reason: 'export no longer needed',
      expectedEffect: 'the export stops',
    });
    console.log(`\ncancel of ${operationId}: ${JSON.stringify(answer)}`);
  } catch (err) {
    if (!(err instanceof AsyncJobRequestRefused)) throw err;
    console.log(
      `\ncancel of ${operationId} refused (${err.refusalCode}): the job finished before the cancel could be sent (X2)`,
    );
  }
  const second = await client.result(operationId);
  const how =
    second.localState === 'succeeded'
      ? 'the job finished before the cancel took effect, X2'
      : `the cancel met the job in state ${second.remoteState ?? 'unknown'}`;
  console.log(`operation ${operationId}: ${second.localState} (${how})`);
  await printStory(demo, operationId);
}

/**
 * Waits, up to 30 s in steps of 100 ms, until the provider accepted the job (so a cancel can race it). Not until
 * `observing`: the workflow is shown that at its next turn or its copy's refresh (P8), later than this job runs.
 */
async function waitUntilAccepted(demo: DemoRun, operationId: string): Promise<void> {
  const localState = () =>
    demo.services.client.get(operationId).then(
      (record) => record.localState,
      () => 'starting',
    );
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && BEFORE_ACCEPTED.includes(await localState()))
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
