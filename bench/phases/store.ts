/**
 * Figure 6: one provider step's store writes, as the worker makes them, at 1,000,000 journal entries already
 * stored (100,000 with `--quick`), on SQLite and on PostgreSQL (when `ASYNCJOB_TEST_PG_URL` is set).
 *
 * A step is what `readStatus` does to the store for a status read that says "still running"
 * (`src/activities/call-frame.ts`): the idempotency check `alreadyRecorded` (a chain-head read) and `commitStep`
 * (the step's entries and the operation's snapshot in one transaction, the chain head read again inside it). The
 * store is opened with `openStore`, as the worker opens it, with an HMAC chain key and forbidden values (the
 * production configuration: the worker signs the chain when `ASYNCJOB_AUDIT_HMAC_KEY` is set).
 *
 * The fill (not timed): operations of 100 entries each, every one a copy of one operation the product's core ran
 * (intent, create, status reads of a running job interpreted by the rest preset's adapter) under its own random
 * operation ID, job ID and times, with real HMAC chain hashes, its snapshot and its job link, so a filled chain
 * verifies. Bulk SQL: SQLite one transaction of prepared statements, PostgreSQL multi-row INSERT from JSON.
 * The timed steps continue filled operations picked at random (their next status reads), so they land where
 * production's would: anywhere in the journal's key space, at the newest times.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { alreadyRecorded, commitStep, snapshotOf, toJournalEntry } from '../../src/activities/journal-writer';
import { statusContextOf } from '../../src/activities/read-status';
import { createProviderRegistry, type RegisteredProvider } from '../../src/adapters/providers/registry';
import { chainKeyOf, entryHash, GENESIS_HASH, snapshotHash, type ChainKey } from '../../src/adapters/store/chain';
import { openStore } from '../../src/adapters/store/open-store';
import {
  columnsOf,
  prepareEntry,
  prepareSnapshot,
  type ExtractedColumns,
  type OperationStore,
} from '../../src/adapters/store/operation-store';
import { canonicalJson } from '../../src/core/canonical-json';
import { base64Url, tokenDigest } from '../../src/core/fingerprint';
import type { JournalEntry } from '../../src/core/journal';
import { intentEntryOf, newOperationRecord, type OperationRecord } from '../../src/core/operation';
import {
  afterCreate,
  afterStatus,
  onWake,
  reserveCreateAttempt,
  type StepContext,
  type StepEntry,
} from '../../src/core/step';
import { readOutcome, withoutTails } from '../../src/core/step-outcome';
import { median, nowMs, percentile, round } from '../lib/stats';

/** What a run stores first and how many steps it times. */
interface Scale {
  journalEntries: number;
  timedSteps: number;
  warmUpSteps: number;
}
const SCALES: Record<'full' | 'quick', Scale> = {
  full: { journalEntries: 1_000_000, timedSteps: 2_000, warmUpSteps: 200 },
  quick: { journalEntries: 100_000, timedSteps: 500, warmUpSteps: 50 },
};
/** The target for SQLite: one step's store writes at 1,000,000 entries. */
const TARGET_P99_MS = 2;
const ENTRIES_PER_OPERATION = 100;
/** Operations written side by side in the concurrent run (16 activities at once). */
const LANES = 16;
/** Status reads each timed operation makes, round robin with the others of its run. */
const STEPS_PER_OPERATION = 4;
const PROVIDER = 'acme';
const PROVIDER_URL = 'https://api.acme.example';
const ACTOR = 'worker:bench';
const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);
/** The filled operations started one a minute before the template's (10,000 span a week). */
const START_SPACING_MS = 60_000;
const TEMPLATE_OPERATION = 'op-template-0000';
const TEMPLATE_JOB = 'job_template0000';
/** PostgreSQL fill: operations per INSERT (10,000 journal rows). */
const PG_BATCH_OPERATIONS = 100;

/** One engine's figures. */
export interface StoreEngineResult {
  engine: 'sqlite' | 'postgresql';
  /** What was stored before the first timed step (bulk SQL, not timed as steps). */
  fill: {
    journalEntries: number;
    operations: number;
    entriesPerOperation: number;
    /** How the rows were written. */
    how: string;
    /** How long the bulk fill took (rows generated with real HMAC hashes, and written). */
    seconds: number;
  };
  /** What one timed step writes: a "still running" status read's entries and the snapshot, HMAC-signed. */
  step: { entries: number; kinds: string[]; entryBytes: number; snapshotBytes: number; hmacKeyed: boolean };
  /** Steps timed one at a time (after `warmUpSteps` untimed ones). */
  timedSteps: number;
  warmUpSteps: number;
  /** One step's store writes (chain-head read + commit transaction), one at a time, ms. */
  stepP50Ms: number;
  stepP90Ms: number;
  stepP99Ms: number;
  stepMaxMs: number;
  /** The two parts of a step, one at a time, ms: the idempotency check's head read, the commit transaction. */
  headReadP50Ms: number;
  commitP50Ms: number;
  commitP99Ms: number;
  /**
   * SQLite: the timed steps whose commit ran the automatic WAL checkpoint (their median), and the p99 and max of
   * all the others: what bounds the p99.
   */
  walCheckpoints?: { steps: number; stepP50Ms: number; otherStepsP99Ms: number; otherStepsMaxMs: number };
  /** Steps per second, one at a time. */
  sequentialStepsPerSecond: number;
  /** Steps per second with `concurrentOperations` operations stepping side by side, and a step's p99 then. */
  concurrentOperations: number;
  concurrentSteps: number;
  concurrentStepsPerSecond: number;
  concurrentStepP99Ms: number;
  /** Database size after the run, bytes (SQLite: the file, WAL folded in at close; PostgreSQL: tables, indexes). */
  databaseBytes: number;
  /** The engine's durability and cache settings as measured (they bound the commit). */
  settings: Record<string, string | number>;
  /** Chains of timed operations verified afterwards, from entry 1 (filled) through the timed steps. */
  chainsVerified: number;
}

/** SQLite's figure, held to the target. */
export interface SqliteStoreResult extends StoreEngineResult {
  engine: 'sqlite';
  targetP99Ms: number;
  /** `stepP99Ms <= targetP99Ms`, computed here. */
  met: boolean;
}

/** Figure 6. */
export interface StoreResult {
  sqlite: SqliteStoreResult;
  postgresql: StoreEngineResult | { skipped: string };
}

// ------------------------------------------------------------------------------------------------------------
// The template operation: what the product's core records for one operation, step by step.
// ------------------------------------------------------------------------------------------------------------

/** One step as the worker commits it: the activity's input record, the record after, its entries, its clock. */
interface PlannedStep {
  operationId: string;
  input: OperationRecord;
  record: OperationRecord;
  entries: StepEntry[];
  nowMs: number;
}

/** The operation every filled one copies. */
interface Template {
  /** Its entries as the store validated them, sequence 1 on. */
  entries: JournalEntry[];
  atMs: number[];
  /** Its record after the last entry (without tails), as JSON. */
  recordJson: string;
  lastAtMs: number;
}

/** A filled operation: its IDs and how far before the template it started. */
interface FilledOperation {
  id: string;
  jobId: string;
  offsetMs: number;
}

function stepContext(provider: RegisteredProvider, nowMs: number): StepContext {
  return {
    nowMs,
    random: Math.random(),
    actor: ACTOR,
    capabilities: provider.facts.capabilities,
    reconciliation: provider.facts.reconciliation,
  };
}

/** The rest dialect's answer to a status read of a running job (as the simulator sends it). */
function runningAnswer(jobId: string, atMs: number, poll: number) {
  const requestId = `req_${poll.toString(16).padStart(8, '0')}`;
  return {
    status: 200,
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    bodyJson: {
      job_id: jobId,
      state: 'running',
      updated_at: new Date(atMs - 1_000).toISOString(),
      progress: poll % 100,
    },
    receivedAtMs: atMs,
    durationMs: 14,
    providerRequestId: requestId,
  };
}

/**
 * The next status read of a running job: the workflow's reservation (`onWake`), the record the activity gets
 * (without tails), the adapter's reading of the answer, and the planner's step (`afterStatus`), as `readStatus`.
 */
function statusStep(provider: RegisteredProvider, held: OperationRecord, jobId: string): PlannedStep {
  const wakeMs = held.schedule.nextPollAtMs ?? T0;
  const woke = onWake(held, stepContext(provider, wakeMs));
  if (woke.kind !== 'read_status') throw new Error(`${held.operationId}: expected a status read, got ${woke.kind}`);
  const input = withoutTails(woke.record);
  const atMs = wakeMs + 40;
  const answer = runningAnswer(jobId, atMs, input.used.statusRequests);
  const observation = {
    ...provider.adapter.interpretStatus(answer, statusContextOf(input)),
    requestsSent: 1,
  };
  const step = afterStatus(input, observation, stepContext(provider, atMs));
  if (step.record.localState !== 'observing')
    throw new Error(`${held.operationId}: a running job left observing (${step.record.localState})`);
  return { operationId: held.operationId, input, record: step.record, entries: step.entries, nowMs: atMs };
}

/** Runs the core through intent, create and status reads until the operation holds `ENTRIES_PER_OPERATION` entries. */
function templateOperation(provider: RegisteredProvider): Template {
  const created = newOperationRecord({
    request: {
      operationId: TEMPLATE_OPERATION,
      provider: PROVIDER,
      payload: { report: 'sales', year: 2026, region: 'emea', format: 'csv' },
      startedBy: 'svc:billing',
      authorisedBy: 'alice@example.com',
      createDeadline: { afterMs: 120_000 },
      resultDeadline: { afterMs: 30 * 24 * 3_600_000 },
      policy: { maxStatusRequests: 100_000 },
    },
    nowMs: T0,
    idempotencyToken: base64Url(randomBytes(16)),
    traceId: 'trace-template-0000',
  });
  if (created.kind !== 'ok') throw new Error(`template record refused: ${JSON.stringify(created.issues)}`);
  let record = created.record;
  // recordIntent: the intent and the record's first entries.
  const steps: StepEntry[][] = [
    [
      intentEntryOf(record, tokenDigest(record.idempotencyToken)),
      ...readOutcome(record).entries.filter((e) => e.sequence > 1 && e.sequence < record.journal.nextSequence),
    ],
  ];
  record = withoutTails(record);
  const reserved = reserveCreateAttempt(record, stepContext(provider, T0 + 50));
  if (reserved.kind !== 'reserved') throw new Error('template: create not reserved');
  const createAnswer = {
    status: 202,
    headers: { 'content-type': 'application/json', location: `/v1/jobs/${TEMPLATE_JOB}`, 'x-request-id': 'req_c' },
    bodyJson: { job_id: TEMPLATE_JOB, state: 'queued', status_url: `${PROVIDER_URL}/v1/jobs/${TEMPLATE_JOB}` },
    receivedAtMs: T0 + 120,
    durationMs: 70,
    providerRequestId: 'req_c',
  };
  const createObservation = {
    ...provider.adapter.interpretCreate(createAnswer, { requestUrl: `${PROVIDER_URL}/v1/jobs` }),
    requestsSent: 1,
  };
  const afterCreated = afterCreate(reserved.record, createObservation, stepContext(provider, T0 + 120));
  steps.push(afterCreated.entries);
  record = withoutTails(afterCreated.record);
  let count = steps.flat().length;
  while (count < ENTRIES_PER_OPERATION) {
    const step = statusStep(provider, record, TEMPLATE_JOB);
    steps.push(step.entries);
    record = withoutTails(step.record);
    count += step.entries.length;
  }
  const entries = steps.flat().map((e) => prepareEntry(toJournalEntry(TEMPLATE_OPERATION, e)).entry);
  const atMs = entries.map((e) => Date.parse(e.at));
  return { entries, atMs, recordJson: JSON.stringify(record), lastAtMs: atMs[atMs.length - 1]! };
}

/** A filled operation's record: the template's under its own IDs (its times stay the template's). */
function filledRecord(template: Template, op: FilledOperation): OperationRecord {
  const json = template.recordJson.split(TEMPLATE_OPERATION).join(op.id).split(TEMPLATE_JOB).join(op.jobId);
  return JSON.parse(json) as OperationRecord;
}

// ------------------------------------------------------------------------------------------------------------
// The fill: rows exactly as `appendEntry` and `writeSnapshot` write them.
// ------------------------------------------------------------------------------------------------------------

type Cell = string | number | null;

/** One filled operation's rows, in the column order of the INSERTs below. */
interface FilledRows {
  operation: Cell[];
  journal: Cell[][];
  job: Cell[];
}

const OPERATION_COLUMNS =
  'operation_id, provider, local_state, remote_job_ids, escalation_reason, result_deadline_at_ms, updated_at, version, snapshot, snapshot_hash, snapshot_key_id, last_sequence, last_hash';
const JOURNAL_COLUMNS =
  'operation_id, sequence, at, actor, kind, entry, prev_hash, hash, to_state, remote_job_id, http_status, delay_source, escalation_reason, key_id';
const JOB_COLUMNS = 'provider, remote_job_id, operation_id';

function filledOperations(count: number): FilledOperation[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `op-${randomBytes(16).toString('hex')}`,
    jobId: `job_${randomBytes(8).toString('hex')}`,
    offsetMs: (i - count) * START_SPACING_MS,
  }));
}

/**
 * Filling 1,000,000 rows through `canonicalJson` and `entryHash` would take minutes, so each canonical text is
 * computed once for the template with marks where a filled operation's values go (its operation ID, job ID,
 * entry time, previous hash), and filled by splicing: exact because those values are plain ASCII, which canonical
 * JSON writes as is. `checkFill` holds the spliced rows to the store's own functions on every run.
 */
const AT_MARK = '@@at@@';
const PREV_MARK = '@@prevHash@@';
const MARKS = new RegExp(`(${[TEMPLATE_OPERATION, TEMPLATE_JOB, AT_MARK, PREV_MARK].join('|')})`);

/** A text split at its marks: the marks at odd indexes. */
type Marked = string[];

function fillMarks(text: Marked, values: Record<string, string>): string {
  let out = '';
  for (let i = 0; i < text.length; i++) out += i % 2 === 1 ? values[text[i]!]! : text[i]!;
  return out;
}

/** A template entry's texts with their marks, and its query columns. */
interface MarkedEntry {
  sequence: number;
  atMs: number;
  actor: string;
  entry: Marked;
  /** The text `entryHash` signs. */
  hashed: Marked;
  columns: ExtractedColumns;
}

/** The template's rows with marks, computed once. */
interface MarkedTemplate {
  entries: MarkedEntry[];
  snapshot: Marked;
  remoteJobIds: Marked;
  snapshotFields: { provider: string; localState: string; resultDeadlineAtMs: number | null; version: number };
}

function marked(template: Template): MarkedTemplate {
  const entries = template.entries.map((t, i): MarkedEntry => {
    const open = { ...t, at: AT_MARK };
    const { operationId, sequence, at, actor, body } = open;
    return {
      sequence,
      atMs: template.atMs[i]!,
      actor,
      entry: canonicalJson(open).split(MARKS),
      // As `entryHash` builds it (src/adapters/store/chain.ts).
      hashed: canonicalJson({ operationId, sequence, at, actor, body, prevHash: PREV_MARK }).split(MARKS),
      columns: columnsOf(t),
    };
  });
  const record = JSON.parse(template.recordJson) as OperationRecord;
  const snapshot = prepareSnapshot(snapshotOf(record, template.lastAtMs)).snapshot;
  return {
    entries,
    snapshot: canonicalJson({ ...snapshot, updatedAt: AT_MARK }).split(MARKS),
    remoteJobIds: JSON.stringify(snapshot.remoteJobIds).split(MARKS),
    snapshotFields: {
      provider: snapshot.provider,
      localState: snapshot.localState,
      resultDeadlineAtMs: snapshot.resultDeadlineAt === null ? null : Date.parse(snapshot.resultDeadlineAt),
      version: snapshot.version,
    },
  };
}

/** An HMAC chain hash as `entryHash` writes it with a key (`checkFill` holds it to that). */
function hmacOf(text: string, key: ChainKey): string {
  return `hmac-sha256:${createHmac('sha256', key.secret).update(text, 'utf8').digest('hex')}`;
}

/** The template's entries under `op`'s IDs and times, hash-chained with `key`; its snapshot; its job link. */
function filledRows(template: MarkedTemplate, op: FilledOperation, key: ChainKey): FilledRows {
  const values: Record<string, string> = {
    [TEMPLATE_OPERATION]: op.id,
    [TEMPLATE_JOB]: op.jobId,
    [AT_MARK]: '',
    [PREV_MARK]: GENESIS_HASH,
  };
  const journal = template.entries.map((t): Cell[] => {
    const prevHash = values[PREV_MARK]!;
    const at = new Date(t.atMs + op.offsetMs).toISOString();
    values[AT_MARK] = at;
    const hash = hmacOf(fillMarks(t.hashed, values), key);
    values[PREV_MARK] = hash;
    const c = t.columns;
    const remoteJobId = c.remoteJobId === TEMPLATE_JOB ? op.jobId : c.remoteJobId;
    return [
      op.id,
      t.sequence,
      at,
      t.actor,
      c.kind,
      fillMarks(t.entry, values),
      prevHash,
      hash,
      c.toState,
      remoteJobId,
      c.httpStatus,
      c.delaySource,
      c.escalationReason,
      key.id,
    ];
  });
  const lastHash = values[PREV_MARK]!;
  values[AT_MARK] = new Date(template.entries[template.entries.length - 1]!.atMs + op.offsetMs).toISOString();
  const snapshot = fillMarks(template.snapshot, values);
  const f = template.snapshotFields;
  const operation: Cell[] = [
    op.id,
    f.provider,
    f.localState,
    fillMarks(template.remoteJobIds, values),
    null,
    f.resultDeadlineAtMs,
    values[AT_MARK],
    f.version,
    snapshot,
    snapshotHash(snapshot, key),
    key.id,
    template.entries.length,
    lastHash,
  ];
  return { operation, journal, job: [PROVIDER, op.jobId, op.id] };
}

/**
 * Holds one filled operation's spliced rows to what the store itself would write for the same entries and
 * snapshot (`prepareEntry`, `entryHash`, `columnsOf`, `prepareSnapshot`, `snapshotHash`); throws on any difference.
 */
function checkFill(template: Template, op: FilledOperation, key: ChainKey): void {
  const rows = filledRows(marked(template), op, key);
  let prevHash = GENESIS_HASH;
  template.entries.forEach((t, i) => {
    const moved = JSON.parse(
      JSON.stringify(t).split(TEMPLATE_OPERATION).join(op.id).split(TEMPLATE_JOB).join(op.jobId),
    );
    const prepared = prepareEntry({ ...moved, at: new Date(template.atMs[i]! + op.offsetMs).toISOString() });
    const hash = entryHash(prepared.entry, prevHash, key);
    const c = prepared.columns;
    const expected = [
      op.id,
      t.sequence,
      prepared.entry.at,
      t.actor,
      c.kind,
      prepared.canonical,
      prevHash,
      hash,
      c.toState,
      c.remoteJobId,
      c.httpStatus,
      c.delaySource,
      c.escalationReason,
      key.id,
    ];
    if (JSON.stringify(rows.journal[i]) !== JSON.stringify(expected))
      throw new Error(
        `fill: entry ${t.sequence} differs from what the store writes:\n${JSON.stringify(rows.journal[i])}\n${JSON.stringify(expected)}`,
      );
    prevHash = hash;
  });
  const { canonical } = prepareSnapshot(snapshotOf(filledRecord(template, op), template.lastAtMs + op.offsetMs));
  if (
    rows.operation[8] !== canonical ||
    rows.operation[9] !== snapshotHash(canonical, key) ||
    rows.operation[12] !== prevHash
  )
    throw new Error('fill: the snapshot row differs from what the store writes');
}

const marks = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/**
 * Fills a migrated SQLite file on a connection of its own: one transaction of prepared statements, with a
 * rollback journal in memory and a large cache for the fill only; the file is left in WAL mode, as the store
 * leaves it.
 */
function fillSqlite(file: string, template: MarkedTemplate, ops: readonly FilledOperation[], key: ChainKey): void {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -1048576');
    const operation = db.prepare(`INSERT INTO operations (${OPERATION_COLUMNS}) VALUES (${marks(13)})`);
    const entry = db.prepare(`INSERT INTO journal (${JOURNAL_COLUMNS}) VALUES (${marks(14)})`);
    const job = db.prepare(`INSERT INTO operation_jobs (${JOB_COLUMNS}) VALUES (${marks(3)})`);
    db.transaction(() => {
      for (const op of ops) {
        const rows = filledRows(template, op, key);
        operation.run(...rows.operation);
        for (const row of rows.journal) entry.run(...row);
        job.run(...rows.job);
      }
    })();
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
  // On disk before the steps: the fill wrote with synchronous = OFF, and a step's checkpoint must not pay its fsync.
  const fd = openSync(file, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** `INSERT ... SELECT` from one JSON array of rows (JSON.stringify is native: far cheaper than array literals). */
function insertFromJson(table: string, columns: string, types: readonly string[]): string {
  const cells = types.map((type, i) => `(r->>${i})::${type}`).join(', ');
  return `INSERT INTO ${table} (${columns}) SELECT ${cells} FROM jsonb_array_elements($1::jsonb) AS r`;
}

/** The column types, in the order of the column lists above. */
const OPERATION_TYPES = 'text text text jsonb text bigint text bigint text text text bigint text'.split(' ');
const JOURNAL_TYPES = 'text bigint text text text text text text text text int text text text'.split(' ');
const INSERT_OPERATIONS = insertFromJson('operations', OPERATION_COLUMNS, OPERATION_TYPES);
const INSERT_JOURNAL = insertFromJson('journal', JOURNAL_COLUMNS, JOURNAL_TYPES);
const INSERT_JOBS = insertFromJson('operation_jobs', JOB_COLUMNS, ['text', 'text', 'text']);

async function insertBatch(client: Client, batch: readonly FilledRows[]): Promise<void> {
  await client.query(INSERT_OPERATIONS, [JSON.stringify(batch.map((rows) => rows.operation))]);
  await client.query(INSERT_JOURNAL, [JSON.stringify(batch.flatMap((rows) => rows.journal))]);
  await client.query(INSERT_JOBS, [JSON.stringify(batch.map((rows) => rows.job))]);
}

/**
 * Fills a migrated PostgreSQL schema in one transaction: multi-row INSERTs from JSON arrays of rows, the next
 * batch generated while the server writes the last; then VACUUM ANALYZE, so the steps meet current statistics and
 * no autovacuum of the bulk fill (which production's steady trickle of inserts would not cause) runs among them.
 */
async function fillPostgres(client: Client, template: MarkedTemplate, ops: readonly FilledOperation[], key: ChainKey) {
  await client.query('BEGIN');
  try {
    let pending: Promise<void> = Promise.resolve();
    for (let i = 0; i < ops.length; i += PG_BATCH_OPERATIONS) {
      const batch = ops.slice(i, i + PG_BATCH_OPERATIONS).map((op) => filledRows(template, op, key));
      await pending;
      pending = insertBatch(client, batch);
    }
    await pending;
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
  await client.query('VACUUM ANALYZE operations, journal, operation_jobs');
  // Written out before the steps, so no step meets the fill's dirty buffers (needs a superuser: else skipped).
  await client.query('CHECKPOINT').catch(() => undefined);
}

// ------------------------------------------------------------------------------------------------------------
// The timed steps.
// ------------------------------------------------------------------------------------------------------------

/** `perOperation` status reads of each operation, round robin (one step of each in turn), as a fleet's would come. */
function roundRobin(
  provider: RegisteredProvider,
  template: Template,
  ops: readonly FilledOperation[],
  perOperation: number,
): PlannedStep[] {
  const byOperation = ops.map((op) => {
    let held = filledRecord(template, op);
    return Array.from({ length: perOperation }, () => {
      const step = statusStep(provider, held, op.jobId);
      held = withoutTails(step.record);
      return step;
    });
  });
  const steps: PlannedStep[] = [];
  for (let k = 0; k < perOperation; k++) for (const own of byOperation) steps.push(own[k]!);
  return steps;
}

/** The filled operations in a random order (Fisher-Yates). */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** What each run of steps is given: planned before the store opens, so the timings hold store work only. */
interface Plan {
  warmUp: PlannedStep[];
  sequential: PlannedStep[];
  lanes: PlannedStep[][];
}

function plan(provider: RegisteredProvider, template: Template, ops: readonly FilledOperation[], scale: Scale): Plan {
  const order = shuffled(ops);
  const take = (steps: number): FilledOperation[] => order.splice(0, Math.ceil(steps / STEPS_PER_OPERATION));
  const warmUp = roundRobin(provider, template, take(scale.warmUpSteps), STEPS_PER_OPERATION);
  const sequential = roundRobin(provider, template, take(scale.timedSteps), STEPS_PER_OPERATION);
  const lanes = Array.from({ length: LANES }, () =>
    roundRobin(provider, template, take(scale.timedSteps / LANES), STEPS_PER_OPERATION),
  );
  return { warmUp, sequential, lanes };
}

interface Timing {
  stepMs: number;
  headReadMs: number;
  commitMs: number;
  /** SQLite: the WAL's checkpoint sequence number after the step (read outside the timed span). */
  walEpoch?: number;
}

/** One step's store writes exactly as `inCallFrame` makes them: the idempotency check, then `commitStep`. */
async function timeStep(store: OperationStore, step: PlannedStep): Promise<Timing> {
  const t0 = nowMs();
  const recorded = await alreadyRecorded(store, step.input);
  const t1 = nowMs();
  if (recorded !== undefined)
    throw new Error(`${step.operationId}: step ${step.input.journal.nextSequence} already recorded`);
  await commitStep(store, step.record, step.entries, step.nowMs);
  const t2 = nowMs();
  return { stepMs: t2 - t0, headReadMs: t1 - t0, commitMs: t2 - t1 };
}

async function timeSequentially(
  store: OperationStore,
  steps: readonly PlannedStep[],
  walEpoch?: () => number,
): Promise<Timing[]> {
  const timings: Timing[] = [];
  for (const step of steps) {
    const timing = await timeStep(store, step);
    timings.push(walEpoch === undefined ? timing : { ...timing, walEpoch: walEpoch() });
  }
  return timings;
}

/**
 * SQLite: which timed steps ran the automatic WAL checkpoint (SQLite's default: once the WAL holds 1,000 pages,
 * the committing connection copies them into the database file, with an fsync of each file). A checkpoint is
 * seen in the WAL header's checkpoint sequence number, which the first commit after it rewrites: so the step
 * before the one that changed it ran the checkpoint.
 */
function walCheckpoints(timings: readonly Timing[]): StoreEngineResult['walCheckpoints'] {
  if (timings.some((t) => t.walEpoch === undefined)) return undefined;
  const ran = new Set<number>();
  for (let i = 1; i < timings.length; i++) if (timings[i]!.walEpoch !== timings[i - 1]!.walEpoch) ran.add(i - 1);
  const checkpointing = [...ran].map((i) => timings[i]!.stepMs);
  const others = timings.filter((_, i) => !ran.has(i)).map((t) => t.stepMs);
  return {
    steps: checkpointing.length,
    stepP50Ms: ms(median(checkpointing)),
    otherStepsP99Ms: ms(percentile(others, 99)),
    otherStepsMaxMs: ms(Math.max(...others)),
  };
}

/**
 * Checks what the timed steps left: every timed operation's chain head and snapshot where its last step put
 * them, and the whole chain (filled entries and timed ones) of a sample verified with the key. Returns how many
 * chains were verified.
 */
async function checkStored(store: OperationStore, steps: readonly PlannedStep[]): Promise<number> {
  const last = new Map<string, PlannedStep>();
  for (const step of steps) last.set(step.operationId, step);
  for (const [operationId, step] of last) {
    const head = await store.chainHead(operationId);
    const snapshot = await store.getOperation(operationId);
    const expected = step.record.journal.nextSequence - 1;
    if (head.lastSequence !== expected || snapshot?.version !== expected)
      throw new Error(`${operationId}: head ${head.lastSequence}, snapshot ${snapshot?.version}, expected ${expected}`);
  }
  const sample = [...last.keys()].slice(0, 10);
  for (const operationId of sample) {
    const verified = await store.verifyChains({ operationId });
    if (verified.breaks.length > 0 || verified.unverifiable !== undefined)
      throw new Error(`${operationId}: the chain does not verify: ${JSON.stringify(verified)}`);
  }
  return sample.length;
}

/** What differs per engine: how the store is opened (as the worker opens it), filled, sized and configured. */
interface Engine {
  name: StoreEngineResult['engine'];
  open(): Promise<OperationStore>;
  fill(template: MarkedTemplate, ops: readonly FilledOperation[]): Promise<void>;
  fillHow: string;
  /** SQLite: the WAL header's checkpoint sequence number (see {@link walCheckpoints}). */
  walEpoch?(): number;
  sizeBytes(): Promise<number>;
  settings(): Promise<Record<string, string | number>>;
}

const ms = (value: number): number => round(value, 3);

/** The operation every filled one copies, as run by the core and as rows, and the provider that read it. */
interface Model {
  provider: RegisteredProvider;
  template: Template;
  rows: MarkedTemplate;
}

async function measureEngine(
  engine: Engine,
  scale: Scale,
  { provider, template, rows }: Model,
  log: (line: string) => void,
): Promise<StoreEngineResult> {
  await (await engine.open()).close();
  const operations = Math.round(scale.journalEntries / template.entries.length);
  const ops = filledOperations(operations);
  const f0 = nowMs();
  await engine.fill(rows, ops);
  const fillSeconds = round((nowMs() - f0) / 1000, 1);
  log(
    `  ${engine.name}: filled ${operations * template.entries.length} entries (${operations} operations) in ${fillSeconds} s`,
  );
  const steps = plan(provider, template, ops, scale);
  const store = await engine.open();
  let sequential: Timing[];
  let sequentialMs: number;
  let concurrent: Timing[][];
  let concurrentMs: number;
  let chainsVerified: number;
  try {
    await timeSequentially(store, steps.warmUp);
    const s0 = nowMs();
    sequential = await timeSequentially(store, steps.sequential, engine.walEpoch);
    sequentialMs = nowMs() - s0;
    const c0 = nowMs();
    concurrent = await Promise.all(steps.lanes.map((lane) => timeSequentially(store, lane)));
    concurrentMs = nowMs() - c0;
    chainsVerified = await checkStored(store, [...steps.sequential, ...steps.lanes.flat()]);
  } finally {
    await store.close();
  }
  const stepMs = sequential.map((t) => t.stepMs);
  const commitMs = sequential.map((t) => t.commitMs);
  const concurrentSteps = concurrent.flat();
  const timed = steps.sequential;
  return {
    engine: engine.name,
    fill: {
      journalEntries: operations * template.entries.length,
      operations,
      entriesPerOperation: template.entries.length,
      how: engine.fillHow,
      seconds: fillSeconds,
    },
    step: describeSteps(timed),
    timedSteps: timed.length,
    warmUpSteps: steps.warmUp.length,
    stepP50Ms: ms(median(stepMs)),
    stepP90Ms: ms(percentile(stepMs, 90)),
    stepP99Ms: ms(percentile(stepMs, 99)),
    stepMaxMs: ms(Math.max(...stepMs)),
    headReadP50Ms: ms(median(sequential.map((t) => t.headReadMs))),
    commitP50Ms: ms(median(commitMs)),
    commitP99Ms: ms(percentile(commitMs, 99)),
    ...(engine.walEpoch ? { walCheckpoints: walCheckpoints(sequential) } : {}),
    sequentialStepsPerSecond: Math.round((timed.length / sequentialMs) * 1000),
    concurrentOperations: LANES,
    concurrentSteps: concurrentSteps.length,
    concurrentStepsPerSecond: Math.round((concurrentSteps.length / concurrentMs) * 1000),
    concurrentStepP99Ms: ms(
      percentile(
        concurrentSteps.map((t) => t.stepMs),
        99,
      ),
    ),
    databaseBytes: await engine.sizeBytes(),
    settings: await engine.settings(),
    chainsVerified,
  };
}

/** What the timed steps write: entries per step (mean), their kinds, their and the snapshot's canonical size. */
function describeSteps(steps: readonly PlannedStep[]): StoreEngineResult['step'] {
  const entries = steps.flatMap((s) => s.entries.map((e) => toJournalEntry(s.operationId, e)));
  const snapshots = steps.map((s) => canonicalJson(snapshotOf(s.record, s.nowMs)).length);
  return {
    entries: round(entries.length / steps.length, 2),
    kinds: [...new Set(entries.map((e) => e.body.kind))],
    entryBytes: Math.round(entries.reduce((sum, e) => sum + canonicalJson(e).length, 0) / entries.length),
    snapshotBytes: Math.round(snapshots.reduce((a, b) => a + b, 0) / snapshots.length),
    hmacKeyed: true,
  };
}

// ------------------------------------------------------------------------------------------------------------
// The two engines.
// ------------------------------------------------------------------------------------------------------------

/** The worker's store options: the chain key and the process's secret values (the key among them). */
interface Keys {
  key: ChainKey;
  forbiddenValues: string[];
}

function sqliteEngine(root: string, keys: Keys): Engine {
  const file = path.join(root, 'store-cost.db');
  return {
    name: 'sqlite',
    open: () => openStore(`sqlite:${file}`, { hmacKey: keys.key.secret, forbiddenValues: keys.forbiddenValues }),
    fill: async (template, ops) => fillSqlite(file, template, ops, keys.key),
    fillHow:
      'one transaction of prepared INSERTs on a connection of its own (rollback journal in memory, synchronous OFF), then fsync',
    walEpoch: () => {
      const header = Buffer.alloc(16);
      const fd = openSync(`${file}-wal`, 'r');
      try {
        readSync(fd, header, 0, 16, 0);
      } finally {
        closeSync(fd);
      }
      return header.readUInt32BE(12);
    },
    sizeBytes: async () => statSync(file).size,
    settings: async () => {
      const db = new Database(file, { readonly: true });
      try {
        return {
          journalMode: String(db.pragma('journal_mode', { simple: true })),
          // Set by SqliteDriver on its own connection.
          synchronous: 'NORMAL',
          cacheSizeKiB: Math.abs(Number(db.pragma('cache_size', { simple: true }))),
          walAutocheckpointPages: Number(db.pragma('wal_autocheckpoint', { simple: true })),
          pageSize: Number(db.pragma('page_size', { simple: true })),
        };
      } finally {
        db.close();
      }
    },
  };
}

function postgresEngine(url: string, raw: Client, schema: string, keys: Keys): Engine {
  return {
    name: 'postgresql',
    // The worker's pool (openStore: 10 connections by default).
    open: () => openStore(url, { schema, hmacKey: keys.key.secret, forbiddenValues: keys.forbiddenValues }),
    fill: async (template, ops) => {
      await raw.query(`SET search_path TO "${schema}"`);
      await fillPostgres(raw, template, ops, keys.key);
    },
    fillHow: `one transaction of INSERT ... SELECT from JSON arrays of ${PG_BATCH_OPERATIONS * ENTRIES_PER_OPERATION} rows, then VACUUM ANALYZE and CHECKPOINT`,
    sizeBytes: async () =>
      Number(
        (
          await raw.query(
            `SELECT sum(pg_total_relation_size(c.oid)) AS bytes FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
            [schema],
          )
        ).rows[0].bytes,
      ),
    settings: async () => {
      const show = async (name: string): Promise<string> => String((await raw.query(`SHOW ${name}`)).rows[0][name]);
      return {
        serverVersion: await show('server_version'),
        fsync: await show('fsync'),
        synchronousCommit: await show('synchronous_commit'),
        sharedBuffers: await show('shared_buffers'),
        poolSize: 10,
      };
    },
  };
}

async function postgresql(
  url: string,
  scale: Scale,
  model: Model,
  keys: Keys,
  log: (line: string) => void,
): Promise<StoreEngineResult> {
  const schema = `asyncjob_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  const raw = new Client({ connectionString: url });
  await raw.connect();
  try {
    return await measureEngine(postgresEngine(url, raw, schema, keys), scale, model, log);
  } finally {
    await raw.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await raw.end();
  }
}

function summary(e: StoreEngineResult): string {
  return (
    `  ${e.engine}: step p50 / p99 / max ${e.stepP50Ms} / ${e.stepP99Ms} / ${e.stepMaxMs} ms at ${e.fill.journalEntries} entries; ` +
    `${e.sequentialStepsPerSecond}/s one at a time, ${e.concurrentStepsPerSecond}/s with ${e.concurrentOperations} side by side; ` +
    `${round(e.databaseBytes / 2 ** 20, 1)} MiB`
  );
}

/** Measures figure 6. */
export async function measureStore(root: string, quick: boolean, log: (line: string) => void): Promise<StoreResult> {
  const scale = SCALES[quick ? 'quick' : 'full'];
  const secret = randomBytes(32).toString('base64url');
  const keys: Keys = {
    key: chainKeyOf(secret)!,
    forbiddenValues: [secret, `bench-provider-credential-${randomBytes(12).toString('hex')}`],
  };
  const registry = await createProviderRegistry({
    providers: [{ name: PROVIDER, path: 'rest' }],
    baseUrls: { [PROVIDER]: PROVIDER_URL },
    env: {
      ASYNCJOB_SIMULATOR_TOKEN: keys.forbiddenValues[1],
      ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: 'bench-webhook-secret',
    },
  });
  try {
    const provider = registry.get(PROVIDER);
    const template = templateOperation(provider);
    const model: Model = { provider, template, rows: marked(template) };
    checkFill(template, filledOperations(1)[0]!, keys.key);
    const s = await measureEngine(sqliteEngine(root, keys), scale, model, log);
    const sqlite: SqliteStoreResult = {
      ...s,
      engine: 'sqlite',
      targetP99Ms: TARGET_P99_MS,
      met: s.stepP99Ms <= TARGET_P99_MS,
    };
    log(summary(sqlite));
    const url = process.env.ASYNCJOB_TEST_PG_URL;
    if (!url) return { sqlite, postgresql: { skipped: 'ASYNCJOB_TEST_PG_URL is not set' } };
    try {
      const p = await postgresql(url, scale, model, keys, log);
      log(summary(p));
      return { sqlite, postgresql: p };
    } catch (err) {
      // A missing PostgreSQL must not cost the other figures: say why it is absent.
      const reason = `PostgreSQL failed: ${err instanceof Error ? err.message : String(err)}`;
      log(`  ${reason}`);
      return { sqlite, postgresql: { skipped: reason } };
    }
  } finally {
    await registry.close();
  }
}
