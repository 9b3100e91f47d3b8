/**
 * `npm run test:cluster`: asyncjob on a real Temporal cluster, under chaos. Temporal's own server on PostgreSQL
 * (scripts/cluster.sh), three `asyncjob worker` processes sharing one PostgreSQL store, the simulators with about
 * 5% of provider calls faulted, and N operations (default 2,000) while a worker is SIGKILLed and restarted every
 * few seconds, the Temporal server is restarted once (at about 30% of the operations ended) and PostgreSQL once
 * (at about 60%). A few operations escalate for a human review and are found through the visibility store.
 *
 * Then it proves, from the simulators' accounting and the store: zero duplicate provider jobs, zero lost results,
 * every operation final or escalated within its bounds, `asyncjob audit verify --with-temporal` intact, and the
 * Web UI's search (`AsyncJobState = "escalated"`) answered by the real visibility store. It measures the fleet's
 * provider request rate against the configured limit from the simulators' request logs.
 *
 * With `--hosts`, the workers run on hosts of their own (network namespaces joined by a bridge, reaching only the
 * Temporal frontend, PostgreSQL, the object store and the providers), results go to an S3-compatible object store
 * (moto's server), one worker is cut off the network for `--partition-ms` in the middle of the run, and a client
 * on yet another host reads every result back through the object store.
 *
 *   npm run test:cluster -- --count 2000 --seed 1 --rate 10 --kill-every-ms 4000 [--hosts] [--keep-cluster]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { openArtifactStore } from '../../src/adapters/artifacts/open-artifact-store';
import { loadPayloadCodecs } from '../../src/codec/payload-keys';
import { loadConfig } from '../../src/config';
import { openPostgresStore } from '../../src/adapters/store/postgres-store';
import { AsyncJobClient, providerTaskQueue } from '../../src/client';
import { renderPayload } from '../../src/simulator';
import { writeContract } from '../load/contracts';
import { DIALECTS, planLoad, type Dialect } from '../load/plan';
import {
  outcomeKey,
  pool,
  providerTotals,
  reviewLostBeforeRecord,
  verifyOperation,
  type LoadViolation,
} from '../load/verify';
import { Chaos } from './chaos';
import { auditVerify, clusterCommand, clusterUp, createStoreDatabase, writeWorkflowBundle } from './cluster-control';
import { WorkerFleet } from './fleet';
import { formatClusterReport, type ClusterReport } from './report';
import { payloadsEncryptedProblems } from './database-search';
import { objectStoreMissing } from './object-store';
import { Partition } from './partition';
import { placeRun } from './placement';
import { ProviderView } from './provider-views';
import { fleetRates } from './rate';
import { readResultsBack } from './results';
import { retryingTransient } from './retry';
import { checkVisibility } from './visibility';

const ROOT = path.join(__dirname, '..', '..');

const withoutProblems = <T extends { problems: string[] }>({ problems: _, ...rest }: T): Omit<T, 'problems'> => rest;

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      count: { type: 'string', default: '2000' },
      seed: { type: 'string', default: '1' },
      'fault-rate': { type: 'string', default: '0.05' },
      rate: { type: 'string', default: '10' },
      workers: { type: 'string', default: '3' },
      'kill-every-ms': { type: 'string', default: '4000' },
      reviews: { type: 'string', default: '6' },
      hosts: { type: 'boolean', default: false },
      'partition-ms': { type: 'string', default: '30000' },
      'keep-cluster': { type: 'boolean', default: false },
    },
  });
  const number = (name: keyof typeof values, min: number): number => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
    return value;
  };
  return {
    count: number('count', 1),
    seed: number('seed', 0),
    faultRate: number('fault-rate', 0),
    ratePerSecond: number('rate', 1),
    workers: number('workers', 1),
    killEveryMs: number('kill-every-ms', 500),
    reviews: number('reviews', 1),
    hosts: values.hosts === true,
    partitionMs: number('partition-ms', 1000),
    keepCluster: values['keep-cluster'] === true,
  };
}

/** Whether the server lists process `pid` among the pollers of the workflow queue and every provider queue. */
async function pollsEveryQueue(
  connection: Connection,
  workflowQueue: string,
  providerQueues: string[],
  pid: number,
): Promise<boolean> {
  const queues = [
    { name: workflowQueue, type: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW },
    ...providerQueues.map((name) => ({ name, type: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY })),
  ];
  for (const queue of queues) {
    const { pollers } = await connection.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: queue.name },
      taskQueueType: queue.type,
    });
    if (!(pollers ?? []).some((poller) => poller.identity?.startsWith(`${pid}@`))) return false;
  }
  return true;
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const missing = options.hosts ? objectStoreMissing() : undefined;
  if (missing !== undefined) throw new Error(missing);
  const runId = `${options.seed}-${randomBytes(4).toString('hex')}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'asyncjob-cluster-run-'));
  const logDir = path.join(dataDir, 'logs');
  mkdirSync(logDir);
  // What the run has started, undone in reverse order however the run ends, its setup included.
  const teardown: (() => unknown)[] = [];
  try {
    return await runWith(options, runId, dataDir, logDir, teardown);
  } finally {
    for (const undo of teardown.reverse()) {
      await Promise.resolve()
        .then(undo)
        .catch((error: unknown) => console.error(`cluster run teardown: ${String(error)}`));
    }
  }
}

/** The run itself: `teardown` gets an undo for each thing it starts, as soon as it has started it. */
async function runWith(
  options: ReturnType<typeof parseOptions>,
  runId: string,
  dataDir: string,
  logDir: string,
  teardown: (() => unknown)[],
): Promise<number> {
  // Pushed first: a start that fails halfway (the server up, its registration refused) is stopped too.
  if (!options.keepCluster) teardown.push(() => clusterCommand('stop'));
  const cluster = await clusterUp();
  const storeUrl = await createStoreDatabase(cluster.storeUrl, `asyncjob_run_${runId.replace(/-/g, '_')}`);
  const placement = await placeRun(
    options.hosts,
    options.workers,
    { temporalAddress: cluster.address, storeUrl },
    logDir,
  );
  teardown.push(() => placement.remove());
  const token = `cluster-${randomBytes(12).toString('hex')}`;
  const auditKey = randomBytes(32).toString('hex');
  const provider = (dialect: Dialect): string => `cluster-${dialect}-${runId}`;
  const plan = planLoad({
    count: options.count,
    seed: options.seed,
    faultRate: options.faultRate,
    provider,
    runId,
    idPrefix: 'cluster',
    // Requests wait behind the fleet's rate limit: bounds far above the run's length.
    createDeadlineMs: 30 * 60_000,
    resultDeadlineMs: 60 * 60_000,
    reviews: options.reviews,
  });
  // Each provider in a process of its own, so the run's own work never delays its stamps (provider-views.ts).
  const sims = {} as Record<Dialect, ProviderView>;
  for (const dialect of DIALECTS) {
    const sim = await ProviderView.start({
      dialect,
      token,
      seed: options.seed,
      scenario: { scripts: plan.scripts[dialect] } as never,
      maxRecordedRequests: 2_000_000,
      host: placement.listenHost,
    });
    sims[dialect] = sim;
    teardown.push(() => sim.stop());
  }
  const taskQueue = `cluster-${runId}`;
  const connection = await Connection.connect({ address: cluster.address });
  teardown.push(() => connection.close());
  const artifactsDir = path.join(dataDir, 'artifacts');
  // Where results are kept, as every process that reads them is told: the object store, or the file store here.
  const artifactEnv = placement.objectStore?.env ?? { ASYNCJOB_ARTIFACTS_DIR: artifactsDir };
  // Beyond one machine, payloads are encrypted: every process that reads or writes them holds the key.
  const payloadKeyEnv: Record<string, string> = options.hosts
    ? {
        ASYNCJOB_PAYLOAD_KEYS: 'cluster=env:ASYNCJOB_CLUSTER_PAYLOAD_KEY',
        ASYNCJOB_CLUSTER_PAYLOAD_KEY: randomBytes(32).toString('hex'),
      }
    : {};
  const fleet = new WorkerFleet(
    options.workers,
    {
      TEMPORAL_ADDRESS: placement.reach(cluster.address),
      ASYNCJOB_TASK_QUEUE: taskQueue,
      ASYNCJOB_STORE: placement.reach(storeUrl),
      ASYNCJOB_PROVIDERS: DIALECTS.map((d) => writeContract(dataDir, d, provider(d), sims[d].url)).join(','),
      ...artifactEnv,
      ...payloadKeyEnv,
      ASYNCJOB_SIMULATOR_TOKEN: token,
      ASYNCJOB_AUDIT_HMAC_KEY: auditKey,
      ASYNCJOB_PROVIDER_RATE_LIMIT: String(options.ratePerSecond),
      // Info: each provider call's log line tells the requests the partition's network held (held-deliveries.ts).
      ASYNCJOB_LOG_LEVEL: 'info',
      // Built once, as an operator builds it into the worker's image: a restarted worker polls in seconds.
      ASYNCJOB_WORKFLOW_BUNDLE: await writeWorkflowBundle(path.join(dataDir, 'workflow-bundle.js')),
    },
    logDir,
    (pid) =>
      pollsEveryQueue(
        connection,
        taskQueue,
        DIALECTS.map((d) => providerTaskQueue(taskQueue, provider(d))),
        pid,
      ),
    (slot) => placement.workerPrefix(slot),
  );
  teardown.push(() => fleet.stop());
  const { payloadCodecs } = await loadPayloadCodecs(payloadKeyEnv);
  const temporalClient = new Client({ connection, dataConverter: { payloadCodecs } });
  const client = new AsyncJobClient({ client: temporalClient, taskQueue });
  // Progress as the providers see it: the jobs whose result was fetched (a collect retried after a worker was
  // killed fetches the same job's result again, so requests alone overcount).
  const progress = (): number =>
    DIALECTS.reduce((n, d) => n + new Set(sims[d].requests({ action: 'result' }).map((r) => r.jobId)).size, 0) /
    options.count;
  const partition = placement.hosts
    ? new Partition(placement.hosts, fleet, temporalClient, taskQueue, options.partitionMs)
    : undefined;
  const chaos = new Chaos(fleet, progress, options.killEveryMs, {
    restartServer: () => clusterCommand('restart-server'),
    restartPostgres: () => clusterCommand('restart-postgres'),
    ...(partition ? { partition: () => partition.run() } : {}),
  });
  const violations: LoadViolation[] = [];
  const problems: string[] = [];
  const refreshViews = () => Promise.all(DIALECTS.map((d) => sims[d].refresh()));
  // The progress the chaos goes by, as the providers saw it a moment ago.
  const refresher = setInterval(() => void refreshViews().catch(() => undefined), 2_000);
  teardown.push(
    () => chaos.stop(),
    () => clearInterval(refresher),
  );
  const began = Date.now();
  fleet.start();
  await client.waitForWorkers(DIALECTS.map(provider));
  console.log(
    `cluster run ${runId}: ${options.count} operations, ${options.workers} workers, Temporal ${cluster.address}, data ${dataDir}`,
  );
  chaos.start();
  await pool(plan.operations, 50, (op) => retryingTransient(() => client.start(op.request), chaos.retries));
  console.log(`cluster run: all started in ${Date.now() - began} ms`);

  const progressLog = setInterval(() => {
    const kills = chaos.events.filter((e) => e.what === 'SIGKILL a worker').length;
    console.log(
      `cluster run: ${Math.round(progress() * 100)}% of results fetched at ${Math.round((Date.now() - began) / 1000)} s, ${kills} workers killed, ${fleet.readyCount()} of ${options.workers} polling`,
    );
  }, 30_000);
  // Each operation to its end, or for a reviewed one to its escalation (a human answers it below).
  const summaries = await Promise.race([
    pool(plan.operations, 200, (op) =>
      retryingTransient(() => client.result(op.request.operationId, { untilFinal: !op.needsReview }), chaos.retries),
    ),
    chaos.failure,
  ]);
  clearInterval(progressLog);
  await chaos.stop();
  const store = await openPostgresStore({ connectionString: storeUrl, forbiddenValues: [token] });
  const artifactSettings = { ...process.env, ...artifactEnv };
  const artifacts = openArtifactStore(loadConfig(artifactSettings), artifactSettings);
  const verifyContext = { store, artifacts, sims };
  const reviewed = plan.operations.filter((op) => op.needsReview);
  const summaryOf = (op: (typeof reviewed)[number]) => summaries[plan.operations.indexOf(op)]!;
  await refreshViews();
  const reviewsLost: string[] = [];
  for (const op of reviewed) {
    const summary = summaryOf(op);
    if (summary.escalation?.reason === 'unknown_state') continue;
    if (summary.localState === 'succeeded' && (await reviewLostBeforeRecord(verifyContext, op)))
      reviewsLost.push(op.request.operationId);
    else problems.push(`${op.request.operationId}: a review was planned, it ended ${outcomeKey(summary)}`);
  }
  // What an operator's Web UI search finds: exactly the operations waiting for a human.
  const waiting = reviewed.filter((op) => summaryOf(op).escalation).map((op) => op.request.operationId);
  problems.push(...(await checkVisibility(temporalClient, taskQueue, { escalated: waiting })));
  // The human's answer: an extension within the offered bounds; the operation then reads on and succeeds.
  for (const op of reviewed) {
    const id = op.request.operationId;
    if (reviewsLost.includes(id)) continue;
    const escalation = await client.escalation(id);
    const extend = escalation?.options.find((o) => o.option === 'extend');
    if (!extend) {
      problems.push(`${id}: no extension offered (escalation ${escalation?.reason ?? 'none'})`);
      continue;
    }
    const decision = {
      option: 'extend' as const,
      approvedBy: 'operator@example.com',
      reason: 'cluster run review',
      extendMs: extend.extendMs!,
      extraStatusRequests: extend.extraStatusRequests!,
    };
    await retryingTransient(() => client.decide(id, decision), chaos.retries);
    summaries[plan.operations.indexOf(op)] = await retryingTransient(
      () => client.result(id, { untilFinal: true }),
      chaos.retries,
    );
  }

  clearInterval(refresher);
  await refreshViews();
  const outcomes: Record<string, number> = {};
  for (const [index, op] of plan.operations.entries()) {
    const summary = summaries[index]!;
    outcomes[outcomeKey(summary)] = (outcomes[outcomeKey(summary)] ?? 0) + 1;
    violations.push(...(await verifyOperation(verifyContext, op, summary)));
  }
  await store.close();
  const succeededOps = plan.operations.filter((_, i) => summaries[i]!.localState === 'succeeded');
  const succeeded = succeededOps.length;
  const readBack = placement.objectStore
    ? await readResultsBack(
        placement.clientPrefix(),
        {
          TEMPORAL_ADDRESS: placement.reach(cluster.address),
          ASYNCJOB_TASK_QUEUE: taskQueue,
          ...artifactEnv,
          ...payloadKeyEnv,
        },
        succeededOps.map((op) => ({
          operationId: op.request.operationId,
          sha256: renderPayload(op.result).sha256Hex,
        })),
        dataDir,
      )
    : undefined;
  problems.push(...(readBack?.problems ?? []));
  const partitioned = partition ? await partition.outcome() : undefined;
  // Every request's payload carries `"scenario":"`; encrypted, no column of Temporal's databases holds it.
  if (options.hosts) problems.push(...(await payloadsEncryptedProblems(cluster.storeUrl, '"scenario":"', taskQueue)));
  problems.push(...(partitioned?.problems ?? []));
  problems.push(...(await checkVisibility(temporalClient, taskQueue, { succeeded })));
  const audit = await auditVerify({
    ASYNCJOB_STORE: storeUrl,
    ASYNCJOB_AUDIT_HMAC_KEY: auditKey,
    TEMPORAL_ADDRESS: cluster.address,
    ASYNCJOB_TASK_QUEUE: taskQueue,
    ...artifactEnv,
    ...payloadKeyEnv,
  });
  if (audit.exitCode !== 0) problems.push(`audit verify --with-temporal exited ${audit.exitCode}: ${audit.tail}`);
  for (const exit of fleet.stats.unexpectedExits) problems.push(`a worker exited unasked (${exit})`);
  for (const exit of fleet.stats.unreachableExits)
    if (!chaos.serverWasRestarting(exit.atMs) && !chaos.wasPartitioned(exit.slot, exit.atMs))
      problems.push(`a worker could not reach Temporal while the server was up (code 5: ${exit.logFile})`);
  problems.push(...chaos.missed());

  // The fleet's limit is strict: no provider may see more than it in any one second.
  const rates = await fleetRates(sims, provider, options.ratePerSecond, partition?.spans() ?? [], logDir);
  for (const dialect of DIALECTS) {
    const rate = rates[dialect];
    if (rate.maxInWindow <= options.ratePerSecond) continue;
    const { busiest } = rate;
    problems.push(
      `provider ${dialect} saw ${rate.maxInWindow} requests in one second (limit ${options.ratePerSecond}/s, ${rate.windowsOverLimit} windows over); the first such second, at ${((busiest.startMs - began) / 1000).toFixed(3)} s: ${busiest.requests.join(', ')}`,
    );
  }
  const report: ClusterReport = {
    runId,
    count: options.count,
    workers: options.workers,
    durationMs: Date.now() - began,
    outcomes,
    totals: providerTotals(sims),
    faultsPlanned: plan.faultsPlanned,
    fleet: fleet.stats,
    chaos: chaos.events,
    transientRetries: chaos.retries.byError,
    ratePerSecond: options.ratePerSecond,
    rates,
    audit: audit.tail,
    placement: placement.hosts
      ? `${options.workers} worker hosts and a client host (network namespaces), results in an object store, payloads encrypted`
      : placement.hostsUnavailable !== undefined
        ? `one host (${placement.hostsUnavailable}), results in an object store, payloads encrypted`
        : 'one host, results in files',
    reviews: { planned: reviewed.length, lostBeforeRecord: reviewsLost },
    ...(readBack ? { readBack } : {}),
    ...(partitioned ? { partition: withoutProblems(partitioned) } : {}),
    violations,
    problems,
  };
  console.log(formatClusterReport(report));
  mkdirSync(path.join(ROOT, 'test-artifacts'), { recursive: true });
  writeFileSync(path.join(ROOT, 'test-artifacts', 'cluster-run.json'), JSON.stringify(report, null, 2));
  return violations.length + problems.length > 0 || report.totals.maxJobsPerToken > 1 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`cluster run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
