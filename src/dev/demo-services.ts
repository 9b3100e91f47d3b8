/**
 * What `asyncjob dev` runs beside the Temporal dev server: the SQLite store, the webhook receiver, the provider
 * simulator, the provider registry and the workers; and their stop, workers first.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { FileArtifactStore } from '../adapters/artifacts/artifact-store';
import { createProviderRegistry, type ProviderRegistry } from '../adapters/providers/registry';
import { openSqliteStore, type SqliteOperationStore } from '../adapters/store/sqlite-store';
import { AsyncJobClient } from '../client';
import { type CodecServer, startCodecServer } from '../codec/codec-server';
import { clientDataConverter } from '../codec/data-converter';
import { loadPayloadCodecs } from '../codec/payload-keys';
import { createJsonLogger } from '../logging';
import { startSimulator, type Simulator } from '../simulator';
import { webhookOutcomeReporter } from '../webhooks/outcome-reporter';
import { startWebhookReceiver, type WebhookReceiver, type WebhookSettings } from '../webhooks/receiver';
import { asyncJobServiceHandler } from '../nexus/handler';
import { createWorkers, runWorkers, shutdownWorkers } from '../worker';
import { DEMO_SCENARIO } from './demo-scenario';
import type { DevServer } from './temporal-server';

/** The provider the demo's worker serves. */
export const DEMO_PROVIDER = 'demo-reports';

/** The demo's running parts. */
export interface DemoServices {
  store: SqliteOperationStore;
  connection: NativeConnection;
  client: AsyncJobClient;
  /** The Temporal client under {@link client}, for what asyncjob's client does not offer (terminating a run). */
  temporal: Client;
  receiver: WebhookReceiver;
  simulator: Simulator;
  registry: ProviderRegistry;
  workers: Worker[];
  /** Settles when the workers stop. */
  running: Promise<void>;
}

/** Where the demo's own listeners go (127.0.0.1); a free port where absent. */
export interface DemoPorts {
  simulatorPort?: number;
  webhookPort?: number;
}

/** Starts the demo's parts against `server`, keeping their files under `dataDir`; prints where each listens. */
export async function startDemoServices(
  server: DevServer,
  dataDir: string,
  ports: DemoPorts = {},
): Promise<DemoServices> {
  // The demo's secrets exist only in this process: the worker resolves them by reference (T4).
  const secrets = {
    ASYNCJOB_SIMULATOR_TOKEN: randomBytes(24).toString('hex'),
    ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: randomBytes(24).toString('hex'),
  };
  const store = await openSqliteStore({
    path: path.join(dataDir, 'asyncjob.db'),
    forbiddenValues: Object.values(secrets),
  });
  // ASYNCJOB_PAYLOAD_KEYS, when set, encrypts the demo's payloads as it does a worker's and a client's.
  const { payloadCodecs } = await loadPayloadCodecs(process.env);
  const connection = await NativeConnection.connect({ address: server.address });
  const temporal = new Client({
    connection: await Connection.connect({ address: server.address }),
    dataConverter: clientDataConverter(payloadCodecs),
  });
  const client = new AsyncJobClient({ client: temporal });
  const receiver = await startWebhookReceiver({
    host: '127.0.0.1',
    ...(ports.webhookPort !== undefined ? { port: ports.webhookPort } : {}),
    store,
    webhookSettings: (name) =>
      name === DEMO_PROVIDER
        ? (registry.get(DEMO_PROVIDER).adapter.contract?.webhook as WebhookSettings | undefined)
        : undefined,
    signal: (operationId, hint) => client.signalWebhook(operationId, hint),
    env: secrets,
    // A refused webhook is printed (a JSON line with its reason); accepted ones are in the audit story.
    onOutcome: webhookOutcomeReporter({ logger: createJsonLogger({ level: 'warn' }) }),
  });
  const simulator = await startSimulator({
    dialect: 'rest',
    host: '127.0.0.1',
    ...(ports.simulatorPort !== undefined ? { port: ports.simulatorPort } : {}),
    token: secrets.ASYNCJOB_SIMULATOR_TOKEN,
    scenario: DEMO_SCENARIO as never,
    // A fresh seed per run: job IDs never repeat across runs that share the store and the Temporal database.
    seed: randomBytes(4).readUInt32BE(0),
    webhook: {
      url: `${receiver.url}/webhooks/${DEMO_PROVIDER}`,
      secret: secrets.ASYNCJOB_SIMULATOR_WEBHOOK_SECRET,
    },
  });
  console.log(`provider simulator (rest dialect) at ${simulator.url}; webhook receiver at ${receiver.url}`);
  const registry = await createProviderRegistry({
    providers: [{ name: DEMO_PROVIDER, path: 'rest' }],
    baseUrls: { [DEMO_PROVIDER]: simulator.url },
    env: secrets,
    // Its calls on its own queue, where the rate limit below is kept (F9).
    ownQueues: [DEMO_PROVIDER],
  });
  const workers = await createWorkers({
    connection,
    payloadCodecs,
    // The asyncjob Nexus service, for a caller's workflow through an endpoint (examples/nexus-caller, docs/nexus.md).
    nexusServices: [asyncJobServiceHandler({ providers: registry })],
    activities: createActivities({
      store,
      providers: registry,
      artifacts: new FileArtifactStore(path.join(dataDir, 'artifacts')),
    }),
    providerQueues: [{ taskQueue: registry.get(DEMO_PROVIDER).taskQueue, maxRequestsPerSecond: 20 }],
  });
  const running = runWorkers(workers);
  // The demo's operations start once the worker polls the provider's queue (a start refuses an unserved provider).
  await client.waitForWorkers([DEMO_PROVIDER]);
  return { store, connection, client, temporal, receiver, simulator, registry, workers, running };
}

/**
 * With ASYNCJOB_PAYLOAD_KEYS set, the codec server the demo's Web UI decodes payloads through (on 127.0.0.1, a free
 * port, no token: loopback only; the UI's pages on `uiPort` may call it); undefined without keys.
 */
export async function startDemoCodecServer(uiPort: number | undefined): Promise<CodecServer | undefined> {
  const { payloadCodecs } = await loadPayloadCodecs(process.env);
  if (payloadCodecs.length === 0 || uiPort === undefined) return undefined;
  const origins = [`http://localhost:${uiPort}`, `http://127.0.0.1:${uiPort}`];
  return startCodecServer({ codec: payloadCodecs[0]!, host: '127.0.0.1', port: 0, origins });
}

/** Stops the demo's parts, workers first. */
export async function stopDemoServices(services: DemoServices): Promise<void> {
  // The Temporal runtime also stops workers on SIGINT/SIGTERM; only ask those that are still running.
  shutdownWorkers(services.workers);
  await services.running.catch(() => undefined);
  await services.receiver.stop();
  await services.simulator.stop();
  await services.registry.close();
  await services.store.close();
  await services.connection.close();
  await services.temporal.connection.close();
}
