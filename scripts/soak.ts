/**
 * Load with faults: N operations (default 1,000) started within a few seconds against three simulators
 * (one per dialect) with about 5% of provider calls faulted at random (seeded: 503, 429, dropped connection,
 * reset), an in-process worker, its own Temporal dev server (or `--temporal ADDRESS`) and a SQLite store.
 *
 * Checks, from the simulators' accounting and the store, never from the workflow's own opinion:
 * - every operation ends in a final state or a bounded escalation (one a human can answer, closed by its decision deadline);
 * - zero duplicate provider jobs (jobs per idempotency token <= 1);
 * - zero lost results: every succeeded operation has exactly one valid artifact whose bytes hash to the sha256
 *   of the payload the simulator served;
 * - every job the provider finished successfully belongs to an operation that either succeeded or escalated.
 *
 * With `--via nexus`, each operation is started by a caller workflow in another namespace through the `asyncjob`
 * Nexus service's `runJob` (an endpoint made with the Temporal CLI), and each caller must receive the operation's own
 * end and be its recorded starter (`load/nexus-route.ts`).
 *
 * Prints a table of outcomes and exits 1 on any violation. `npm run soak -- --count 200 --seed 7 --fault-rate 0.05`.
 * Importable: `runSoak({ count: 60 })` resolves with the report (the integration test runs a reduced count).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { createActivities } from '../src/activities';
import { FileArtifactStore } from '../src/adapters/artifacts/artifact-store';
import { createProviderRegistry } from '../src/adapters/providers/registry';
import { openSqliteStore } from '../src/adapters/store/sqlite-store';
import { AsyncJobClient } from '../src/client';
import { startDevServer, type DevServer } from '../src/dev/temporal-server';
import { startSimulator, type Simulator } from '../src/simulator';
import { createWorkers, runWorkers, shutdownWorkers, workflowsPath } from '../src/worker';
import { asyncJobServiceHandler } from '../src/nexus/handler';
import { openNexusRoute, type NexusRoute } from './load/nexus-route';
import { DIALECTS, planLoad, type Dialect } from './load/plan';
import {
  formatRows,
  outcomeKey,
  percentile,
  pool,
  providerTotals,
  verifyOperation,
  type LoadViolation,
  type UnusualOutcome,
  unusualOutcome,
} from './load/verify';

/** Options of {@link runSoak}. */
export interface SoakOptions {
  /** Operations to run (default 1,000). */
  count?: number;
  /** Seed of the fault and script choices (default 1). */
  seed?: number;
  /** Share of provider calls faulted (default 0.05). */
  faultRate?: number;
  /** A Temporal server to use; a dev server of its own is started when absent. */
  temporalAddress?: string;
  /** Each operation's create deadline (default 60 s); a shorter one ends never-created operations sooner. */
  createDeadlineMs?: number;
  /** How many starts and result waits are in flight at once (default 100). */
  concurrency?: number;
  /** Where progress and the table go (default console.log); pass `() => {}` to silence. */
  log?: (line: string) => void;
  /** How operations are started: the client (default), or caller workflows through Nexus `runJob`. */
  via?: 'client' | 'nexus';
}

/** One violation of the soak's invariants. */
export type SoakViolation = LoadViolation;

/** What a soak run found. */
export interface SoakReport {
  count: number;
  via: 'client' | 'nexus';
  seed: number;
  faultRate: number;
  /** Faults planned into the scripts, by kind. */
  faultsPlanned: Record<string, number>;
  /** Faults the simulators actually applied (from their request logs), by label. */
  faultsApplied: Record<string, number>;
  /** Provider requests received, all simulators together. */
  providerRequests: number;
  /** Operations by outcome: the local state, or `escalated:<reason>`. */
  outcomes: Record<string, number>;
  /** Largest number of provider jobs under one idempotency token (must be <= 1). */
  maxJobsPerToken: number;
  startSpreadMs: number;
  durationMs: number;
  /** Time from start to the final summary, percentiles in ms. */
  endLatencyMs: { p50: number; p95: number; max: number };
  violations: SoakViolation[];
  /** Every operation that did not end succeeded: its outcome, the faults planned into its script, and why. */
  unusual: UnusualOutcome[];
}

/** Formats the report as a plain-text table. */
export function formatSoakReport(report: SoakReport): string {
  const rows: [string, string][] = [
    ['operations', `${report.count} (started through ${report.via === 'nexus' ? 'Nexus runJob' : 'the client'})`],
    ['seed / fault rate', `${report.seed} / ${report.faultRate}`],
    ['started within', `${report.startSpreadMs} ms`],
    ['total duration', `${report.durationMs} ms`],
    [
      'end latency p50 / p95 / max',
      `${report.endLatencyMs.p50} / ${report.endLatencyMs.p95} / ${report.endLatencyMs.max} ms`,
    ],
    ['provider requests', String(report.providerRequests)],
    ['max provider jobs per token', String(report.maxJobsPerToken)],
    ...Object.entries(report.faultsPlanned)
      .sort()
      .map(([k, v]): [string, string] => [`fault planned ${k}`, String(v)]),
    ...Object.entries(report.faultsApplied)
      .sort()
      .map(([k, v]): [string, string] => [`fault applied ${k}`, String(v)]),
    ...Object.entries(report.outcomes)
      .sort()
      .map(([k, v]): [string, string] => [`outcome ${k}`, String(v)]),
    ['violations', String(report.violations.length)],
  ];
  const lines = formatRows(rows);
  for (const u of report.unusual.slice(0, 30))
    lines.push(`  ${u.outcome} ${u.operationId} (faults: ${u.faults.join(', ') || 'none'}): ${u.detail}`);
  for (const v of report.violations.slice(0, 50)) lines.push(`  VIOLATION ${v.kind} ${v.operationId}: ${v.detail}`);
  return lines.join('\n');
}

/** Runs the soak and returns its report (never throws for a violation: they are in `violations`). */
export async function runSoak(options: SoakOptions = {}): Promise<SoakReport> {
  const count = options.count ?? 1_000;
  const seed = options.seed ?? 1;
  const faultRate = options.faultRate ?? 0.05;
  const concurrency = options.concurrency ?? 100;
  const via = options.via ?? 'client';
  const log = options.log ?? ((line: string) => console.log(line));
  const runId = `${seed}-${createHash('sha256').update(`${process.pid}:${process.hrtime.bigint()}`).digest('hex').slice(0, 8)}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'asyncjob-soak-'));
  const token = `soak-${createHash('sha256').update(runId).digest('hex').slice(0, 24)}`;
  const provider = (d: Dialect): string => `soak-${d}-${runId}`.slice(0, 64);
  const { scripts, operations, faultsPlanned } = planLoad({
    count,
    seed,
    faultRate,
    provider,
    runId,
    idPrefix: 'soak',
    createDeadlineMs: options.createDeadlineMs ?? 60_000,
    resultDeadlineMs: 600_000,
  });
  try {
    // Worker logs at ERROR so the table stays readable (a runtime installed by the caller is kept).
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Already installed in this process.
  }

  const cleanups: (() => Promise<unknown>)[] = [];
  const violations: SoakViolation[] = [];
  try {
    let server: DevServer | undefined;
    if (options.temporalAddress === undefined) {
      server = await startDevServer();
      cleanups.unshift(() => server!.stop());
    }
    const address = options.temporalAddress ?? server!.address;
    const sims = {} as Record<Dialect, Simulator>;
    for (const d of DIALECTS) {
      sims[d] = await startSimulator({
        dialect: d,
        token,
        seed,
        scenario: { scripts: scripts[d] } as never,
        maxRecordedRequests: 1_000_000,
      });
      const sim = sims[d];
      cleanups.unshift(() => sim.stop());
    }
    const store = await openSqliteStore({ path: path.join(dataDir, 'asyncjob.db'), forbiddenValues: [token] });
    cleanups.unshift(() => store.close());
    const taskQueue = `soak-${runId}`;
    const registry = await createProviderRegistry({
      providers: DIALECTS.map((d) => ({ name: provider(d), path: d })),
      baseUrls: Object.fromEntries(DIALECTS.map((d) => [provider(d), sims[d].url])),
      env: { ASYNCJOB_SIMULATOR_TOKEN: token, ASYNCJOB_SIMULATOR_URL: sims.rest.url },
      http: { headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000, connectTimeoutMs: 2_000 },
      taskQueue,
    });
    cleanups.unshift(() => registry.close());
    const artifacts = new FileArtifactStore(path.join(dataDir, 'artifacts'));
    const nativeConnection = await NativeConnection.connect({ address });
    cleanups.unshift(() => nativeConnection.close());
    const workers: Worker[] = await createWorkers({
      connection: nativeConnection,
      taskQueue,
      activities: createActivities({ store, providers: registry, artifacts }),
      providerQueues: registry.names().map((name) => ({ taskQueue: registry.get(name).taskQueue })),
      workflowBundle: await bundleWorkflowCode({
        workflowsPath,
        logger: {
          log: () => {},
          trace: () => {},
          debug: () => {},
          info: () => {},
          warn: () => {},
          error: (m) => log(m),
        },
      }),
      shutdownGraceTime: '2 seconds',
      ...(via === 'nexus' ? { nexusServices: [asyncJobServiceHandler({ providers: registry })] } : {}),
    });
    const running = runWorkers(workers);
    cleanups.unshift(async () => {
      shutdownWorkers(workers);
      await running.catch(() => undefined);
    });
    const connection = await Connection.connect({ address });
    cleanups.unshift(() => connection.close());
    const client = new AsyncJobClient({ client: new Client({ connection }), taskQueue });
    // Operations start only once every provider's queue has a poller: a start refuses an unserved provider.
    await client.waitForWorkers(registry.names());
    let route: NexusRoute | undefined;
    if (via === 'nexus') {
      route = await openNexusRoute({ address, namespace: 'default', taskQueue, runId, nativeConnection, connection });
      cleanups.unshift(() => route!.close());
    }

    log(`soak: ${count} operations, seed ${seed}, fault rate ${faultRate}, Temporal ${address}, data ${dataDir}`);
    const began = Date.now();
    const startedAt = await pool(operations, concurrency, async (op) => {
      if (route) await route.start(op.request);
      else await client.start(op.request);
      return Date.now();
    });
    const startSpreadMs = Math.max(...startedAt) - began;
    log(`soak: all started in ${startSpreadMs} ms`);

    const outcomes: Record<string, number> = {};
    const unusual: SoakReport['unusual'] = [];
    const latencies: number[] = [];
    let done = 0;
    await pool(operations, concurrency, async (op, i) => {
      const id = op.request.operationId;
      try {
        // Through Nexus the operation exists once its caller's runJob started it: the caller ends after it does.
        await route?.ended(id);
        const summary = await client.result(id, { untilFinal: true });
        latencies.push(Date.now() - startedAt[i]!);
        const key = outcomeKey(summary);
        outcomes[key] = (outcomes[key] ?? 0) + 1;
        const explained = await unusualOutcome(client, op, summary);
        if (explained) unusual.push(explained);
        violations.push(...(await verifyOperation({ store, artifacts, sims }, op, summary)));
        if (route) violations.push(...(await route.check(id, summary, client)));
      } catch (error) {
        outcomes.error = (outcomes.error ?? 0) + 1;
        violations.push({
          operationId: id,
          kind: 'error',
          detail: errorChain(error).slice(0, 600),
        });
      }
      done++;
      if (done % 100 === 0) log(`soak: ${done}/${count} ended`);
    });

    const totals = providerTotals(sims);
    latencies.sort((a, b) => a - b);
    return {
      count,
      via,
      seed,
      faultRate,
      faultsPlanned,
      faultsApplied: totals.faultsApplied,
      providerRequests: totals.requests,
      outcomes,
      maxJobsPerToken: totals.maxJobsPerToken,
      startSpreadMs,
      durationMs: Date.now() - began,
      endLatencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: latencies.at(-1) ?? 0 },
      violations,
      unusual,
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** An error's message with its causes' (a typed client error keeps the server's own answer as its cause). */
function errorChain(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e !== undefined && parts.length < 4; e = e instanceof Error ? e.cause : undefined)
    parts.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  return parts.join(' <- ');
}

function parseArgs(argv: readonly string[]): SoakOptions {
  const options: SoakOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.includes('=') ? argv[i]!.split('=', 2) : [argv[i]!, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const int = (name: string, min: number): number => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}`);
      return n;
    };
    switch (flag) {
      case '--count':
        options.count = int('--count', 1);
        break;
      case '--seed':
        options.seed = int('--seed', 0);
        break;
      case '--concurrency':
        options.concurrency = int('--concurrency', 1);
        break;
      case '--fault-rate': {
        const rate = Number(value());
        if (!(rate >= 0 && rate <= 1)) throw new Error('--fault-rate must be between 0 and 1');
        options.faultRate = rate;
        break;
      }
      case '--create-deadline-ms':
        options.createDeadlineMs = int('--create-deadline-ms', 1);
        break;
      case '--temporal':
        options.temporalAddress = value();
        break;
      case '--via': {
        const via = value();
        if (via !== 'client' && via !== 'nexus') throw new Error('--via must be client or nexus');
        options.via = via;
        break;
      }
      default:
        throw new Error(
          `unknown option ${flag} (use --count N, --seed N, --fault-rate R, --concurrency N, --create-deadline-ms N, --temporal HOST:PORT, --via client|nexus)`,
        );
    }
  }
  return options;
}

if (require.main === module) {
  let options: SoakOptions;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`soak: ${(error as Error).message}`);
    process.exit(2);
  }
  runSoak(options).then(
    (report) => {
      console.log(formatSoakReport(report));
      process.exit(report.violations.length > 0 ? 1 : 0);
    },
    (error: unknown) => {
      console.error(`soak failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(1);
    },
  );
}
