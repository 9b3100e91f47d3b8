/**
 * asyncjob as a user runs it, for the conformance scenarios: a SQLite store, a provider registry of the scenario
 * adapters, an in-process worker (the workflow worker and one activity worker per provider queue) on a Temporal
 * server, and an `AsyncJobClient` that starts one operation per scenario and waits, bounded, for its end.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities';
import { FileArtifactStore } from '../../src/adapters/artifacts/artifact-store';
import { createProviderRegistry } from '../../src/adapters/providers/registry';
import { openSqliteStore, type SqliteOperationStore } from '../../src/adapters/store/sqlite-store';
import { formatStoryText, renderStory } from '../../src/audit/story';
import { AsyncJobClient } from '../../src/client';
import type { StartRequest } from '../../src/core/operation';
import type { OperationSummary } from '../../src/workflows/messages';
import { createWorkers, runWorkers, shutdownWorkers, workflowsPath } from '../../src/worker';

/** Options of {@link startAsyncjob}. */
export interface HarnessOptions {
  temporalAddress: string;
  namespace?: string;
  /** The adapter documents to serve. */
  providers: { name: string; path: string }[];
  /** The environment `${VAR}` in the documents' baseUrl is read from. */
  env: NodeJS.ProcessEnv;
  /** Store, artifacts and the worker log go here. */
  dataDir: string;
}

/** asyncjob, running. */
export interface Harness {
  client: AsyncJobClient;
  store: SqliteOperationStore;
  artifacts: FileArtifactStore;
  /** The worker's log file (Temporal runtime warnings and errors, activity logs). */
  logFile: string;
  stop(): Promise<void>;
}

/** Starts the store, the registry, the worker and the client. */
export async function startAsyncjob(options: HarnessOptions): Promise<Harness> {
  const logFile = path.join(options.dataDir, 'worker.log');
  const log = (line: string): void => {
    try {
      appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`);
    } catch {
      // The data directory is gone (the run is over): the line has nowhere to go.
    }
  };
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN', (entry) =>
        log(`${entry.level} ${entry.message} ${JSON.stringify(entry.meta ?? {})}`),
      ),
    });
  } catch {
    // A runtime is already installed in this process (a test file's); keep it.
  }
  const cleanups: (() => Promise<unknown>)[] = [];
  const stop = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => undefined);
  };
  try {
    const store = await openSqliteStore({ path: path.join(options.dataDir, 'asyncjob.db') });
    cleanups.unshift(() => store.close());
    const taskQueue = `conformance-${randomBytes(4).toString('hex')}`;
    const registry = await createProviderRegistry({
      providers: options.providers,
      env: options.env,
      http: { headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000, connectTimeoutMs: 5_000 },
      taskQueue,
    });
    cleanups.unshift(() => registry.close());
    const artifacts = new FileArtifactStore(path.join(options.dataDir, 'artifacts'));
    const nativeConnection = await NativeConnection.connect({ address: options.temporalAddress });
    cleanups.unshift(() => nativeConnection.close());
    const quiet = () => undefined;
    const workers: Worker[] = await createWorkers({
      connection: nativeConnection,
      ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
      taskQueue,
      activities: createActivities({
        store,
        providers: registry,
        artifacts,
        logger: {
          info: (m, f) => log(`info ${m} ${JSON.stringify(f ?? {})}`),
          warn: (m, f) => log(`warn ${m} ${JSON.stringify(f ?? {})}`),
        },
      }),
      providerQueues: registry.names().map((name) => ({ taskQueue: registry.get(name).taskQueue })),
      workflowBundle: await bundleWorkflowCode({
        workflowsPath,
        logger: {
          log: quiet,
          trace: quiet,
          debug: quiet,
          info: quiet,
          warn: quiet,
          error: (m) => log(`bundle error ${m}`),
        },
      }),
      shutdownGraceTime: '2 seconds',
    });
    const running = runWorkers(workers);
    cleanups.unshift(async () => {
      shutdownWorkers(workers);
      await running.catch(() => undefined);
    });
    const connection = await Connection.connect({ address: options.temporalAddress });
    cleanups.unshift(() => connection.close());
    const client = new AsyncJobClient({
      client: new Client({ connection, ...(options.namespace !== undefined ? { namespace: options.namespace } : {}) }),
      taskQueue,
    });
    // Scenarios start only once every provider's queue has a poller: a start refuses an unserved provider.
    await client.waitForWorkers(registry.names());
    return { client, store, artifacts, logFile, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** How one operation ended, as asyncjob reports it. */
export interface Outcome {
  /** `succeeded`, `failed`, `cancelled`, `escalated:<reason>`, ..., or `timeout:<state>` / `error`. */
  got: string;
  succeeded: boolean;
  /** The stored result, parsed as JSON, when the operation succeeded with an artifact. */
  result?: { json: unknown } | { unparseable: string };
  /** Why it ended so, in one line. */
  detail: string;
  summary?: OperationSummary;
}

const REASONED: ReadonlySet<string> = new Set([
  'failed',
  'cancelled',
  'result_unavailable',
  'result_validation_failed',
  'result_timed_out',
]);

/** Waits (at most `timeoutMs`) for the operation's summary, then reads its result artifact. */
export async function awaitOutcome(harness: Harness, operationId: string, timeoutMs: number): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  let summary: OperationSummary | 'timeout';
  try {
    summary = await Promise.race([harness.client.result(operationId), timedOut]);
  } catch (error) {
    return { got: 'error', succeeded: false, detail: (error as Error).message.slice(0, 300) };
  } finally {
    clearTimeout(timer);
  }
  if (summary === 'timeout') {
    const record = await harness.client.get(operationId).catch(() => undefined);
    const state = record?.localState ?? 'unknown';
    return {
      got: `timeout:${state}`,
      succeeded: false,
      detail: `no end within ${timeoutMs} ms (still ${state})${record?.escalation ? `, escalated ${record.escalation.reason}` : ''}`,
    };
  }
  const got = summary.escalation ? `escalated:${summary.escalation.reason}` : summary.localState;
  let detail = '';
  if (summary.escalation) {
    const text = summary.escalation.text.replace(/\s+/g, ' ');
    const stopped = text.indexOf('Stopped because');
    detail = (stopped >= 0 ? text.slice(stopped) : text).slice(0, 240);
  } else if (summary.localState !== 'succeeded') {
    const last = (await harness.client.history(operationId).catch(() => [])).at(-1);
    detail = `${last?.body.reason ?? ''}`.replace(/\s+/g, ' ').slice(0, 240);
  }
  const outcome: Outcome = { got, succeeded: summary.localState === 'succeeded', detail, summary };
  if (!outcome.succeeded && !summary.escalation && !REASONED.has(summary.localState))
    outcome.detail ||= `ended ${summary.localState}`;
  const location = summary.result?.artifactLocation;
  if (outcome.succeeded && location !== undefined) {
    const chunks: Buffer[] = [];
    for await (const chunk of await harness.artifacts.open(location)) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      outcome.result = { json: JSON.parse(text) as unknown };
    } catch {
      outcome.result = { unparseable: text.slice(0, 200) };
    }
  }
  return outcome;
}

/**
 * Starts one operation per scenario (`conformance-<runId>-<scenario name>`, its provider, payload and policy as
 * `startOf` says), then waits for every outcome, each at most `waitTimeoutMs`; a start the client refused is an
 * `error` outcome. Outcomes are in the order of `scenarios`.
 */
export async function startAndAwait<S extends { name: string }>(
  harness: Harness,
  scenarios: readonly S[],
  options: { runId: string; waitTimeoutMs: number },
  startOf: (scenario: S) => Pick<StartRequest, 'provider' | 'payload' | 'policy'>,
): Promise<{ scenario: S; operationId: string; outcome: Outcome }[]> {
  const started = await Promise.all(
    scenarios.map(async (scenario) => {
      const operationId = `conformance-${options.runId}-${scenario.name}`;
      try {
        await harness.client.start({
          operationId,
          ...startOf(scenario),
          startedBy: 'conformance',
          authorisedBy: 'conformance',
          // Not what a scenario tests (none ends by a deadline): room for a machine loaded by other work.
          createDeadline: { afterMs: 90_000 },
          resultDeadline: { afterMs: 150_000 },
        });
        return { scenario, operationId, startError: undefined };
      } catch (error) {
        return { scenario, operationId, startError: (error as Error).message };
      }
    }),
  );
  return Promise.all(
    started.map(async ({ scenario, operationId, startError }) => ({
      scenario,
      operationId,
      outcome:
        startError !== undefined
          ? { got: 'error', succeeded: false, detail: `start refused: ${startError}` }
          : await awaitOutcome(harness, operationId, options.waitTimeoutMs),
    })),
  );
}

/** The operation's audit story (what `asyncjob audit show` prints). */
export async function storyOf(harness: Harness, operationId: string): Promise<string> {
  const stored = await harness.store.entries(operationId);
  return formatStoryText(operationId, renderStory(stored.map((s) => s.entry)), null);
}

/** One scenario's line of a conformance table: its cells, whether it passed, and why not. */
interface TableRow {
  cells: readonly string[];
  pass: boolean;
  why: string;
}

/**
 * A conformance table: the header, then one line per scenario with a last `pass` / `FAIL` column, each column
 * padded to its widest cell, and under each failed scenario the reason it failed.
 */
export function formatResultTable(header: readonly string[], rows: readonly TableRow[]): string {
  const cellRows = rows.map((row) => [...row.cells, row.pass ? 'pass' : 'FAIL']);
  const fullHeader = [...header, 'pass'];
  const widths = fullHeader.map((h, i) => Math.max(h.length, ...cellRows.map((cells) => cells[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const out = [line(fullHeader), line(widths.map((w) => '-'.repeat(w)))];
  for (const [i, cells] of cellRows.entries()) {
    out.push(line(cells));
    if (!rows[i]!.pass) out.push(`    why: ${rows[i]!.why}`);
  }
  return out.join('\n');
}
