/**
 * The asyncjob worker: the workflow worker on the main task queue (workflows, store activities, the provider
 * lookup) and one activity worker per provider task queue, each rate-limited: strictly per process in any
 * sliding window (`activities/request-pacer.ts`), strictly across all workers when they share a PostgreSQL store
 * (its send slots, `activities/fleet-send-slots.ts`), and on average across all workers by the server
 * (`maxTaskQueueActivitiesPerSecond`). Its workflows are bundled at start, or read from a bundle `asyncjob bundle`
 * wrote at build time (ASYNCJOB_WORKFLOW_BUNDLE, `workflow-bundle.ts`).
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { type Logger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from './activities';
import { HEARTBEAT_SEND_MS } from './activities/heartbeat';
import { assertRequestRate, pacingInterceptor, RequestPacer } from './activities/request-pacer';
import { fleetPaceOf, type SendSlotReservation } from './core/send-slot';
import type { AsyncJobActivities } from './activities/types';
import { openArtifactStore } from './adapters/artifacts/open-artifact-store';
import { createProviderRegistry, type ProviderRegistry } from './adapters/providers/registry';
import { openStore } from './adapters/store/open-store';
import { relayMessageWakes } from './activities/loop-wake';
import type { OperationStore } from './adapters/store/operation-store';
import { readChainKeySecret } from './audit/keys';
import { clientDataConverter, workerDataConverter } from './codec/data-converter';
import { temporalConnectionSettings, type TemporalConnectionSettings } from './client/connection';
import { DEFAULT_TASK_QUEUE } from './client/context';
import { AsyncJobConnectionError } from './client/errors';
import { type Config, describeSettings } from './config';
import { DEFAULT_MAX_CACHED_WORKFLOWS, DEFAULT_PROVIDER_CALL_SLOTS } from './config/worker';
import { assertSupportedNode } from './node-version';
import { type PollLoopLimits } from './core/poll-loop';
import { EXPECTED_SDK_MESSAGES } from './doctor/sdk-logger';
import { WORKFLOW_BUNDLER_OPTIONS, workflowsPath } from './workflow-bundle';
import { checkWorkerStart, logDeciderPolicy, logServing } from './worker-start-check';
import { asyncJobServiceHandler } from './nexus/handler';
import { createJsonLogger, sdkLogLevel } from './logging';
import { webhookOutcomeReporter } from './webhooks/outcome-reporter';
import { startWebhookReceiver, type WebhookSettings } from './webhooks/receiver';
import { webhookSignal } from './workflows/messages';

/** The task queue asyncjob's workflows run on unless told otherwise (the client's, so both always agree). */
export { DEFAULT_TASK_QUEUE };

export { WORKFLOW_BUNDLER_OPTIONS, workflowsPath };

export { DEFAULT_MAX_CACHED_WORKFLOWS };

/**
 * A provider's own activity queue and its rate. A rate only holds for calls that come to this queue: name the
 * provider in the registry's `ownQueues` (its calls otherwise run on the workflows' queue, F9).
 */
export interface ProviderQueue {
  /** The provider's own activity task queue (`RegisteredProvider.taskQueue`). */
  taskQueue: string;
  /**
   * The most provider requests per second (a positive finite number; unlimited when absent): strict for this
   * process in any sliding window, every request paced as it is written, the status loop's reads included; strict
   * for the fleet too with {@link AsyncJobWorkerOptions.reserveProviderSend}. The server's own limit, set from it,
   * bounds activity dispatches only (a status loop makes many reads in one activity).
   */
  maxRequestsPerSecond?: number;
}

/** Options for {@link createWorkers}. */
export interface AsyncJobWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  activities: AsyncJobActivities;
  providerQueues: ProviderQueue[];
  /** Pre-bundled workflow code (tests bundle once per file); bundled from source when absent. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * Concurrent provider-call activities per worker and queue (the workflows' queue, where the calls of providers
   * without their own queue run, and each provider queue): {@link DEFAULT_PROVIDER_CALL_SLOTS} when absent.
   */
  maxConcurrentProviderCalls?: number;
  /**
   * Workflows kept in memory between tasks. An evicted one is replayed from its (bounded, continue-as-new) history
   * when it wakes, so this bounds the worker's memory however many operations wait. Default 128.
   */
  maxCachedWorkflows?: number;
  /** Codecs of every payload the workers send and receive (`codec/payload-keys.ts`); none: plaintext. */
  payloadCodecs?: PayloadCodec[];
  /**
   * Nexus services the workflow worker serves on its task queue: the `asyncjob` service's handler
   * (`nexus/handler.ts`) when a Nexus endpoint routes to this worker; none when absent.
   */
  nexusServices?: WorkerOptions['nexusServices'];
  /** Graceful shutdown time for in-flight activities. */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  /**
   * A rate-limited queue's send slots from a store every worker shares (`PostgresOperationStore.reserveProviderSend`):
   * each request then waits for a slot of its queue and is written only inside it, so the rate is strict across
   * the fleet (`core/send-slot.ts`). Absent (SQLite), each process is strict on its own.
   */
  reserveProviderSend?: (taskQueue: string, intervalMs: number) => Promise<SendSlotReservation>;
}

/** Creates (does not run) the workflow worker and one activity worker per provider queue. */
/** The webhook settings of each provider's document (undefined for a provider unknown or without webhooks). */
export function webhookSettingsOf(registry: ProviderRegistry): (provider: string) => WebhookSettings | undefined {
  return (name) => {
    try {
      return registry.get(name).adapter.contract?.webhook as WebhookSettings | undefined;
    } catch {
      return undefined;
    }
  };
}

export async function createWorkers(options: AsyncJobWorkerOptions): Promise<Worker[]> {
  // Checked before any worker is created, so a bad rate fails fast with the queue named.
  for (const queue of options.providerQueues) {
    if (queue.maxRequestsPerSecond !== undefined)
      assertRequestRate(queue.maxRequestsPerSecond, `maxRequestsPerSecond of provider queue ${queue.taskQueue}`);
  }
  const namespace = options.namespace ?? 'default';
  const common = {
    connection: options.connection,
    namespace,
    shutdownGraceTime: options.shutdownGraceTime ?? '10 seconds',
    // The SDK would send heartbeats at most every 0.8 x the heartbeat timeout, so one beat late under CPU load
    // timed a live activity out (a conformance scenario escalated so in a loaded CI run, when the timeout was 10 s).
    // Sent at most every 10 s, a provider call's 30 s timeout keeps 20 s of margin; activities beat on their own
    // cadence beside it (`beatEveryMs`), so a status loop's beats are each sent at once.
    maxHeartbeatThrottleInterval: HEARTBEAT_SEND_MS,
    dataConverter: workerDataConverter(options.payloadCodecs ?? []),
  };
  const main = await Worker.create({
    ...common,
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    activities: options.activities,
    maxConcurrentActivityTaskExecutions: options.maxConcurrentProviderCalls ?? DEFAULT_PROVIDER_CALL_SLOTS,
    maxCachedWorkflows: options.maxCachedWorkflows ?? DEFAULT_MAX_CACHED_WORKFLOWS,
    ...(options.nexusServices !== undefined ? { nexusServices: options.nexusServices } : {}),
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath, bundlerOptions: WORKFLOW_BUNDLER_OPTIONS }),
  });
  const seen = new Set<string>();
  const providerWorkers: Worker[] = [];
  for (const queue of options.providerQueues) {
    if (seen.has(queue.taskQueue)) continue;
    seen.add(queue.taskQueue);
    const rate = queue.maxRequestsPerSecond;
    const reserve = options.reserveProviderSend;
    const fleet =
      rate !== undefined && reserve !== undefined
        ? () => reserve(queue.taskQueue, fleetPaceOf(rate).intervalMs)
        : undefined;
    providerWorkers.push(
      await Worker.create({
        ...common,
        taskQueue: queue.taskQueue,
        activities: options.activities,
        maxConcurrentActivityTaskExecutions: options.maxConcurrentProviderCalls ?? DEFAULT_PROVIDER_CALL_SLOTS,
        // The server's limit bounds activity dispatches, not requests (a status loop reads many times in one); this
        // process's pacer makes the rate strict in every sliding window for the requests it sends; a shared
        // store's send slots make it strict for the whole fleet.
        ...(rate !== undefined
          ? {
              maxTaskQueueActivitiesPerSecond: rate,
              interceptors: { activity: [pacingInterceptor(new RequestPacer(rate), fleet)] },
            }
          : {}),
      }),
    );
  }
  return [main, ...providerWorkers];
}

/**
 * The poll loop this worker offers its workflows, or `false` (`ASYNCJOB_POLL_LOOP_MAX_WAIT_MS=0`). On under a
 * provider rate limit too: each read of a loop takes its own turn of the pacer and, with a shared store, its own
 * fleet send slot, as every other provider request does.
 */
export function pollLoopOf(config: Config): PollLoopLimits | false {
  if (config.ASYNCJOB_POLL_LOOP_MAX_WAIT_MS === 0) return false;
  return {
    maxWaitMs: config.ASYNCJOB_POLL_LOOP_MAX_WAIT_MS,
    maxLoopMs: config.ASYNCJOB_POLL_LOOP_MAX_MS,
    retryWaits: true,
    createReadsOn: true,
  };
}

/** Runs workers until they are shut down (the runtime stops them on SIGINT/SIGTERM). */
export async function runWorkers(workers: Worker[]): Promise<void> {
  await Promise.all(workers.map((w) => w.run()));
}

/** Asks every worker to shut down gracefully; safe to repeat. */
export function shutdownWorkers(workers: Worker[]): void {
  for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
}

/**
 * Values of environment variables that are secrets: those the configuration schema marks secret, and any that look
 * like one (names with TOKEN, SECRET, PASSWORD, API_KEY or PRIVATE_KEY).
 */
function secretValuesIn(env: NodeJS.ProcessEnv): string[] {
  const described = new Set(describeSettings().flatMap((s) => (s.secret ? [s.name] : [])));
  return Object.entries(env)
    .filter(
      ([name, value]) =>
        (described.has(name) || /TOKEN|SECRET|PASSWORD|API_KEY|PRIVATE_KEY/i.test(name)) &&
        typeof value === 'string' &&
        value.length >= 8,
    )
    .map(([, value]) => value as string);
}

/**
 * Installs the Temporal runtime (once per process) with the worker's logger, so the SDK's own lines and its native
 * core's (forwarded) are the same JSON lines as ours; Prometheus metrics when `ASYNCJOB_METRICS_ADDRESS` is set.
 */
function installRuntime(config: Config, logger: Logger): void {
  const level = config.ASYNCJOB_LOG_LEVEL;
  // The native core says much at info (each worker's start and shutdown): its warnings only, unless debugging.
  const core = sdkLogLevel(level === 'info' ? 'warn' : level);
  Runtime.install({
    logger,
    telemetryOptions: {
      logging: { filter: { core, other: 'ERROR' }, forward: {} },
      ...(config.ASYNCJOB_METRICS_ADDRESS
        ? { metrics: { prometheus: { bindAddress: config.ASYNCJOB_METRICS_ADDRESS } } }
        : {}),
    },
  });
}

/** The connection options of the worker's and the receiver's Temporal connections. */
function connectOptionsOf(temporal: TemporalConnectionSettings) {
  return {
    address: temporal.address,
    ...(temporal.tls ? { tls: temporal.tls } : {}),
    ...(temporal.apiKey ? { apiKey: temporal.apiKey } : {}),
  };
}

/** What the webhook receiver beside the worker shares with it. */
interface ReceiverContext {
  env: NodeJS.ProcessEnv;
  temporal: TemporalConnectionSettings;
  store: OperationStore;
  registry: ProviderRegistry;
  logger: Logger;
  /** The worker's payload codecs: the hints it signals are payloads too. */
  payloadCodecs: PayloadCodec[];
}

/**
 * Starts the webhook receiver beside the worker when ASYNCJOB_WEBHOOK_PORT is set (it needs the same store and
 * contracts), with its own client connection for the signals. Resolves to the function that stops both, or
 * undefined when no receiver runs.
 */
async function startReceiverBeside(
  context: ReceiverContext,
  config: Config,
): Promise<(() => Promise<void>) | undefined> {
  if (config.ASYNCJOB_WEBHOOK_PORT === undefined) return undefined;
  const listen = { port: config.ASYNCJOB_WEBHOOK_PORT, host: config.ASYNCJOB_WEBHOOK_HOST };
  const { env, registry, logger } = context;
  const connection = await Connection.connect(connectOptionsOf(context.temporal));
  const dataConverter = clientDataConverter(context.payloadCodecs);
  const client = new Client({ connection, namespace: context.temporal.namespace, dataConverter });
  const receiver = await startWebhookReceiver({
    ...listen,
    store: context.store,
    webhookSettings: webhookSettingsOf(registry),
    signal: (operationId, hint) => client.workflow.getHandle(operationId).signal(webhookSignal, hint),
    env,
    // Each request logged (refusals with their reason) and counted on the worker's metrics endpoint.
    onOutcome: webhookOutcomeReporter({
      logger,
      meter: Runtime.instance().metricMeter,
      isKnownProvider: (name) => registry.names().includes(name),
    }),
  });
  logger.info(`asyncjob webhook receiver: ${receiver.url}/webhooks/<provider>`, { url: receiver.url });
  return async () => {
    await receiver.stop();
    await connection.close();
  };
}

/** Connects the worker to Temporal; on failure closes what is open and throws the commands' error (exit 5). */
async function connectWorker(
  temporal: TemporalConnectionSettings,
  opened: { close(): Promise<void> }[],
): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(connectOptionsOf(temporal));
  } catch (err) {
    for (const resource of opened) await resource.close();
    throw new AsyncJobConnectionError(temporal.address, { cause: err });
  }
}

/**
 * `asyncjob worker`: a worker process configured from the environment (see `src/config.ts`): the store, the
 * providers (credentials by reference, resolved here and nowhere else, T4), one JSON-lines logger for the SDK and
 * for us, Prometheus metrics when `ASYNCJOB_METRICS_ADDRESS` is set, the webhook receiver when
 * `ASYNCJOB_WEBHOOK_PORT` is, the workflows from a prebuilt bundle when `ASYNCJOB_WORKFLOW_BUNDLE` is, the decider
 * policy every operation it starts keeps when `ASYNCJOB_DECIDER_POLICY` is (a warning when not, D2), and graceful
 * shutdown on SIGINT/SIGTERM. Resolves when shut down. Throws `UnsupportedNodeError` first on a Node.js outside
 * package.json `engines` (exit 2 from `asyncjob worker`).
 */
export async function runWorker(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  assertSupportedNode();
  // Everything the worker is asked to serve is checked first; every problem at once, exit 2 (ConfigError).
  const { config, bundle, deciders, payloads } = await checkWorkerStart(env);
  const payloadKeys = payloads.secretValues;
  // The audit chain key: ASYNCJOB_AUDIT_HMAC_KEY_FILE or ASYNCJOB_AUDIT_HMAC_KEY, read as every audit command reads it.
  const hmacKey = await readChainKeySecret(env);
  // The payload keys are secrets of this process too: redacted from every log line, refused by the store.
  const secretValues = [...secretValuesIn(env), ...(hmacKey && hmacKey.length >= 8 ? [hmacKey] : []), ...payloadKeys];
  const logger = createJsonLogger({
    level: config.ASYNCJOB_LOG_LEVEL,
    secretValues,
    dropMessages: EXPECTED_SDK_MESSAGES,
  });
  installRuntime(config, logger);
  // The store refuses any entry holding one of this process's secret values, the chain key too (defence in depth, T4).
  const store = await openStore(config.ASYNCJOB_STORE, {
    ...(hmacKey ? { hmacKey } : {}),
    forbiddenValues: secretValues,
  });
  const registry = await createProviderRegistry({
    // Each provider is served under its document's own name:, which must agree with its file name.
    providers: config.ASYNCJOB_PROVIDERS.split(',')
      .map((name) => name.trim())
      .filter(Boolean)
      .map((name) => ({ path: name })),
    searchDirs: config.ASYNCJOB_PROVIDERS_PATH.split(path.delimiter).filter(Boolean),
    env,
    taskQueue: config.ASYNCJOB_TASK_QUEUE,
    // A rate limit is kept on each provider's own queue (its pacer, the server's dispatch limit); F9.
    ...(config.ASYNCJOB_PROVIDER_RATE_LIMIT !== undefined ? { ownQueues: 'all' as const } : {}),
  });
  // One reading of Temporal's connection conventions (address, namespace, TLS files, API key), shared with the client.
  const temporal = temporalConnectionSettings(config);
  const connection = await connectWorker(temporal, [registry, store]);
  const workers = await createWorkers({
    connection,
    payloadCodecs: payloads.payloadCodecs,
    namespace: temporal.namespace,
    taskQueue: config.ASYNCJOB_TASK_QUEUE,
    ...(bundle ? { workflowBundle: { codePath: bundle.codePath } } : {}),
    maxCachedWorkflows: config.ASYNCJOB_MAX_CACHED_WORKFLOWS,
    maxConcurrentProviderCalls: config.ASYNCJOB_PROVIDER_CALL_SLOTS,
    // The endpoint routes to this task queue (asyncjob doctor checks it); the handler answers there.
    ...(config.ASYNCJOB_NEXUS_ENDPOINT !== undefined
      ? { nexusServices: [asyncJobServiceHandler({ providers: registry })] }
      : {}),
    activities: createActivities({
      store,
      providers: registry,
      artifacts: openArtifactStore(config, env),
      logger,
      pollLoop: pollLoopOf(config),
      ...(deciders !== undefined ? { deciders } : {}),
    }),
    // Only a store the whole fleet shares (PostgreSQL) has send slots; with SQLite each process paces itself.
    ...(store.reserveProviderSend !== undefined ? { reserveProviderSend: store.reserveProviderSend.bind(store) } : {}),
    providerQueues: registry.names().map((name) => ({
      taskQueue: registry.get(name).taskQueue,
      ...(config.ASYNCJOB_PROVIDER_RATE_LIMIT !== undefined
        ? { maxRequestsPerSecond: config.ASYNCJOB_PROVIDER_RATE_LIMIT }
        : {}),
    })),
  });
  const receiverContext = { env, temporal, store, registry, logger, payloadCodecs: payloads.payloadCodecs };
  const stopReceiver = await startReceiverBeside(receiverContext, config);
  // Messages for loops in this process that other workers' workflows received (PostgreSQL; none on SQLite).
  const stopRelay = await relayMessageWakes(store, logger);
  logServing(logger, config, registry.names(), bundle);
  logDeciderPolicy(logger, config.ASYNCJOB_DECIDER_POLICY, deciders);
  try {
    await runWorkers(workers);
  } finally {
    await stopRelay?.();
    await stopReceiver?.();
    await registry.close();
    await store.close();
    await connection.close();
  }
}
