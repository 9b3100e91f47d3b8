/**
 * The activities' test harness: the real simulator on loopback in one dialect, a foreign origin that records
 * whatever reaches it, a temp SQLite store and artifact directory, a provider registry pointed at the
 * simulator, captured logs, and helpers to build records and run activities in `MockActivityEnvironment`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type StepEntry } from '../../src/core/step';
import { foldOutcome, outcomeOfRecord, type StepOutcome } from '../../src/core/step-outcome';
import { MockActivityEnvironment } from '@temporalio/testing';
import { FileArtifactStore } from '../../src/adapters/artifacts/artifact-store';
import { createProviderRegistry, type ProviderRegistry } from '../../src/adapters/providers/registry';
import { openSqliteStore, type SqliteOperationStore } from '../../src/adapters/store/sqlite-store';
import { createActivities, type AsyncJobActivities } from '../../src/activities';
import { newIdempotencyToken } from '../../src/core/fingerprint';
import { startRecord, type OperationRecord, type OperationStart, type StartRequest } from '../../src/core/operation';
import { onWake, type StepContext } from '../../src/core/step';
import { startSimulator, type Simulator, type ScenarioInput } from '../../src/simulator';

export const TOKEN = 'activities-bearer-token-7f3a9c2e51d84b60';
export const DIALECTS = ['rest', 'lro', 'operation-location'] as const;
export type Dialect = (typeof DIALECTS)[number];

/** Requests that reached the foreign origin: there must never be any. */
interface ForeignOrigin {
  url: string;
  seen: { method: string; url: string; headers: IncomingHttpHeaders }[];
  server: Server;
}

async function startForeignOrigin(): Promise<ForeignOrigin> {
  const seen: ForeignOrigin['seen'] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}`, seen, server };
}

/** Scripts every dialect's tests pick with the payload field `scenario`. */
function scenarioFor(dialect: Dialect): ScenarioInput {
  const steps = [{ state: 'queued', polls: 1 }, { state: 'running', polls: 1, progress: 50 }, { state: 'succeeded' }];
  const json = { kind: 'json' as const, body: { rows: [1, 2, 3] } };
  return {
    scripts: {
      default: { steps, result: json },
      quick: { steps: [{ state: 'succeeded' }], result: json },
      drop: { steps, result: json, faults: [{ on: 'create', nth: 1, fault: { kind: 'drop' } }] },
      unavailable: {
        steps,
        faults: [{ on: 'status', nth: 1, fault: { kind: 'http_error', status: 503, retryAfterSeconds: 7 } }],
      },
      review: { steps: [{ state: 'manual_review' }] },
      mismatch: {
        steps: [{ state: 'queued', polls: 1 }, { state: 'succeeded' }],
        result: json,
        faults: [
          { on: dialect === 'lro' ? 'status' : 'result', fault: { kind: 'result_mismatch', field: 'checksum' } },
        ],
      },
      truncated: {
        steps: [{ state: 'succeeded' }],
        result: { kind: 'generated', sizeBytes: 200_000 },
        faults: [{ on: 'result', fault: { kind: 'truncated' } }],
      },
      sync: { steps: [{ state: 'succeeded' }], sync: true, result: json },
      malformed: {
        steps,
        result: json,
        faults: [{ on: 'status', nth: 1, fault: { kind: 'malformed', body: 'html' } }],
      },
      large: { steps: [{ state: 'succeeded' }], result: { kind: 'generated', sizeBytes: 3_500_000 } },
      batch: { steps: [{ state: 'succeeded' }], result: { kind: 'batch', items: 5, failedItems: [1, 3] } },
      ndjson: {
        steps: [{ state: 'succeeded' }],
        result: { kind: 'ndjson', records: [{ a: 1 }, { a: 2 }, { a: 3 }, { a: 4 }] },
      },
      foreign: { steps, faults: [{ on: 'create', fault: { kind: 'foreign_location' } }] },
      foreignStatus: {
        steps: [{ state: 'queued', polls: 1 }, { state: 'succeeded' }],
        result: json,
        faults: [{ on: 'status', fault: { kind: 'foreign_location' } }],
      },
    },
  } as ScenarioInput;
}

/** Captured log lines, as JSON text. */
class CapturedLogger {
  readonly lines: string[] = [];
  info(message: string, fields?: Record<string, unknown>): void {
    this.lines.push(JSON.stringify({ level: 'info', message, ...fields }));
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.lines.push(JSON.stringify({ level: 'warn', message, ...fields }));
  }
}

export interface Harness {
  dialect: Dialect;
  sim: Simulator;
  foreign: ForeignOrigin;
  dir: string;
  dbPath: string;
  store: SqliteOperationStore;
  registry: ProviderRegistry;
  artifacts: FileArtifactStore;
  logger: CapturedLogger;
  activities: AsyncJobActivities;
  close(): Promise<void>;
}

export async function startHarness(dialect: Dialect, options: { maxParseBytes?: number } = {}): Promise<Harness> {
  const foreign = await startForeignOrigin();
  const sim = await startSimulator({
    dialect,
    token: TOKEN,
    scenario: scenarioFor(dialect),
    foreignBaseUrl: foreign.url,
  });
  const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-activities-'));
  const dbPath = path.join(dir, 'store.db');
  const store = await openSqliteStore({ path: dbPath });
  const registry = await createProviderRegistry({
    providers: [{ name: dialect, path: dialect }],
    baseUrls: { [dialect]: sim.url },
    env: { ASYNCJOB_SIMULATOR_TOKEN: TOKEN },
    http: { connectTimeoutMs: 2_000, headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000 },
  });
  const artifacts = new FileArtifactStore(path.join(dir, 'artifacts'));
  const logger = new CapturedLogger();
  const activities = createActivities({
    store,
    providers: registry,
    artifacts,
    logger,
    ...(options.maxParseBytes !== undefined ? { maxParseBytes: options.maxParseBytes } : {}),
  });
  return {
    dialect,
    sim,
    foreign,
    dir,
    dbPath,
    store,
    registry,
    artifacts,
    logger,
    activities,
    async close() {
      await registry.close();
      await store.close();
      await sim.stop();
      await new Promise<void>((resolve) => foreign.server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh operation start (request, instant, token and trace) with fast millisecond policies. */
export function newStart(
  provider: string,
  payload: Record<string, unknown>,
  overrides: Record<string, unknown> = {},
): OperationStart {
  const token = newIdempotencyToken(randomBytes(32));
  if (token.kind !== 'ok') throw new Error(token.message);
  return {
    request: {
      operationId: `op-${randomUUID()}`,
      provider,
      payload,
      startedBy: 'svc:test',
      authorisedBy: 'alice@example.com',
      createDeadline: { afterMs: 60_000 },
      resultDeadline: { afterMs: 600_000 },
      policy: { baseDelayMs: 1, maxDelayMs: 5, notFoundWindowMs: 1_000 },
      ...overrides,
    } as StartRequest,
    startedAtMs: Date.now(),
    idempotencyToken: token.token,
    traceId: `trace-${randomUUID()}`,
  };
}

/** A fresh record in create_pending with fast millisecond policies. */
export function newRecord(
  provider: string,
  payload: Record<string, unknown>,
  overrides: Record<string, unknown> = {},
): OperationRecord {
  const result = startRecord(newStart(provider, payload, overrides));
  if (result.kind !== 'ok') throw new Error(JSON.stringify(result.issues));
  return result.record;
}

/** Runs an activity as Temporal would, in a mock activity context. */
export function run<I, O>(activity: (input: I) => Promise<O>, input: I): Promise<O> {
  return new MockActivityEnvironment().run(activity, input);
}

/**
 * Runs a writing activity the way the workflow does: it gets the operation state (and the record's own entries,
 * for `recordIntent`) and its `{state, entries}` outcome is folded into the record held before.
 */
export async function step<Input extends { state: OperationRecord }>(
  activity: (input: Input) => Promise<StepOutcome>,
  input: Omit<Input, 'state' | 'entries'> & { record: OperationRecord; entries?: StepEntry[] },
): Promise<OperationRecord> {
  const { record, ...rest } = input;
  const { state, entries } = outcomeOfRecord(record);
  const outcome = await run(activity, { state, entries, ...rest } as unknown as Input);
  return foldOutcome(record, outcome);
}

/** The workflow's part between polls: wait until the record is due and reserve one status request (B2). */
export async function reserveStatus(
  record: OperationRecord,
  ctx: Pick<StepContext, 'capabilities' | 'reconciliation'>,
): Promise<OperationRecord> {
  for (let i = 0; i < 200; i++) {
    const woke = onWake(record, { nowMs: Date.now(), random: 0.5, actor: 'workflow', ...ctx });
    if (woke.kind === 'read_status') return woke.record;
    if (woke.kind === 'stopped') throw new Error(`stopped: ${JSON.stringify(woke.step.record.escalation)}`);
    await new Promise((r) => setTimeout(r, Math.max(1, Math.min(50, woke.atMs - Date.now()))));
  }
  throw new Error('never due');
}
