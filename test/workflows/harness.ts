/**
 * The integration harness: a real Temporal dev server (shared by the run), real workers, three real provider
 * simulators (one per dialect), a SQLite store and an artifact directory in a temp folder (`startDocumentWorker`). Providers are
 * registered under names unique to the test file, so files running side by side never share a task queue.
 */
import type { AsyncJobActivities } from '../../src/activities/types';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ProviderRegistry } from '../../src/adapters/providers/registry';
import type { OperationStore } from '../../src/adapters/store/operation-store';
import { type AsyncJobClient } from '../../src/client';
import type { DeciderPolicyInForce } from '../../src/core/decider-policy';
import type { StartRequest } from '../../src/core/operation';
import type { PollLoopLimits } from '../../src/core/poll-loop';
import type { RequestRecord } from '../../src/simulator/accounting';
import type { ScenarioInput } from '../../src/simulator/scenario';
import { startSimulator, type Simulator } from '../../src/simulator';
import { uniqueId } from '../setup/temporal';
import type { AsyncJobWorkerOptions } from '../../src/worker';
import { startDocumentWorker } from './document-worker';

/** The simulators' bearer token: the secret that must never leak. */
export const SIM_TOKEN = `sim-secret-${randomBytes(12).toString('hex')}`;
/** The dialects the simulator speaks. */
export const DIALECTS = ['rest', 'lro', 'operation-location'] as const;
export type Dialect = (typeof DIALECTS)[number];

/**
 * How long after its writing a request may be stamped by the simulator, ms. The worker writes no status read at
 * or after the deadline (S3, proved at the write instant in `test/activities/activities.test.ts`); the simulator
 * stamps a request when its headers are parsed, on this process's event loop, so a read written in the deadline's
 * last millisecond can carry the deadline's own stamp or a later one. A read sent one poll interval late (100 ms
 * or more in these tests) is still caught.
 */
export const ARRIVAL_LAG_MS = 50;

/** A running harness. */
export interface Harness {
  env: TestWorkflowEnvironment;
  client: AsyncJobClient;
  store: OperationStore;
  registry: ProviderRegistry;
  sims: Record<Dialect, Simulator>;
  /** The provider name registered for a dialect in this file. */
  provider(dialect: Dialect): string;
  taskQueue: string;
  dataDir: string;
  /** A start request with millisecond deadlines and policy, for a dialect and a simulator script. */
  request(dialect: Dialect, overrides?: Partial<StartRequest> & { script?: string }): StartRequest;
  /** The status reads the provider saw for a job, in order (the simulator may show a prefixed public ID). */
  statusReads(dialect: Dialect, jobId: string | undefined): RequestRecord[];
  stop(): Promise<void>;
}

/** Options of {@link startHarness}. */
export interface HarnessOptions {
  /** A scenario per dialect (scripts selected by the payload's `scenario` field). */
  scenarios?: Partial<Record<Dialect, ScenarioInput>>;
  /** Rate limit per provider queue (requests per second). */
  maxRequestsPerSecond?: number;
  /** The fleet's send slots of rate-limited queues (a PostgreSQL store's `reserveProviderSend`). Default: none. */
  reserveProviderSend?: AsyncJobWorkerOptions['reserveProviderSend'];
  /** The worker's status loop (`core/poll-loop.ts`); `false`: one activity per status read. Default: on. */
  pollLoop?: PollLoopLimits | false;
  /** The decider policy the worker holds (D2), as `loadDeciderPolicy` reads it: operations started keep it. Default: none. */
  deciders?: DeciderPolicyInForce;
  /** Serve the `asyncjob` Nexus service on the workflows' task queue. Default: not served. */
  nexus?: boolean;
  /** Changes the activities the worker registers (a worker of an earlier version, say). Default: as made. */
  activities?: (made: AsyncJobActivities) => AsyncJobActivities;
}

/** Starts everything a workflow test needs. */
export async function startHarness(label: string, options: HarnessOptions = {}): Promise<Harness> {
  const id = uniqueId(label)
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-');
  const dataDir = await mkdtemp(path.join(tmpdir(), `asyncjob-${label}-`));
  const sims = {} as Record<Dialect, Simulator>;
  for (const dialect of DIALECTS) {
    sims[dialect] = await startSimulator({
      dialect,
      token: SIM_TOKEN,
      seed: 7,
      ...(options.scenarios?.[dialect] ? { scenario: options.scenarios[dialect] } : {}),
    });
  }
  const provider = (dialect: Dialect): string => `${dialect}-${id}`.slice(0, 64);
  // Operations start only once every provider's queue has a poller: a start refuses an unserved provider.
  const worker = await startDocumentWorker({
    taskQueue: `wf-${id}`,
    dataDir,
    providers: DIALECTS.map((d) => ({ name: provider(d), path: d })),
    baseUrls: Object.fromEntries(DIALECTS.map((d) => [provider(d), sims[d].url])),
    env: { ASYNCJOB_SIMULATOR_TOKEN: SIM_TOKEN, ASYNCJOB_SIMULATOR_URL: sims.rest.url },
    forbiddenValues: [SIM_TOKEN],
    ...(options.pollLoop !== undefined ? { pollLoop: options.pollLoop } : {}),
    ...(options.maxRequestsPerSecond !== undefined ? { maxRequestsPerSecond: options.maxRequestsPerSecond } : {}),
    ...(options.reserveProviderSend !== undefined ? { reserveProviderSend: options.reserveProviderSend } : {}),
    ...(options.deciders !== undefined ? { deciders: options.deciders } : {}),
    ...(options.nexus === true ? { nexus: true } : {}),
    ...(options.activities !== undefined ? { activities: options.activities } : {}),
  });
  const { env, client, store, registry, taskQueue } = worker;
  return {
    env,
    client,
    store,
    registry,
    sims,
    provider,
    taskQueue,
    dataDir,
    request(dialect, overrides = {}) {
      const { script, ...rest } = overrides;
      return {
        operationId: uniqueId(`op-${dialect}`),
        provider: provider(dialect),
        payload: { report: 'monthly-sales', ...(script !== undefined ? { scenario: script } : {}) },
        startedBy: 'service:test-suite',
        authorisedBy: 'policy:integration-tests',
        createDeadline: { afterMs: 20_000 },
        resultDeadline: { afterMs: 60_000 },
        policy: {
          baseDelayMs: 20,
          maxDelayMs: 200,
          notFoundWindowMs: 2_000,
          cancelDeadlineMs: 5_000,
          maxHintMs: 60_000,
        },
        ...rest,
      };
    },
    statusReads(dialect, jobId) {
      if (jobId === undefined) return [];
      return sims[dialect]
        .requests({ action: 'status' })
        .filter((r) => r.jobId !== undefined && (r.jobId === jobId || r.jobId.endsWith(`/${jobId}`)));
    },
    async stop() {
      await worker.stop();
      await Promise.all(Object.values(sims).map((s) => s.stop()));
    },
  };
}
