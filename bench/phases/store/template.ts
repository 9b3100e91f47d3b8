/**
 * The template operation: what the product's core records for one operation, step by step (intent, create,
 * status reads of a running job interpreted by the rest preset's adapter), and the filled operations that copy it
 * under their own IDs and times. The timed steps are the next status reads of filled operations, planned the same
 * way.
 */
import { randomBytes } from 'node:crypto';
import { toJournalEntry } from '../../../src/activities/journal-writer';
import { statusContextOf } from '../../../src/activities/read-status';
import type { RegisteredProvider } from '../../../src/adapters/providers/registry';
import { prepareEntry } from '../../../src/adapters/store/operation-store';
import { base64Url, tokenDigest } from '../../../src/core/fingerprint';
import type { JournalEntry } from '../../../src/core/journal';
import { intentEntryOf, newOperationRecord, type OperationRecord } from '../../../src/core/operation';
import {
  afterCreate,
  afterStatus,
  onWake,
  reserveCreateAttempt,
  type StepContext,
  type StepEntry,
} from '../../../src/core/step';
import { outcomeOfRecord, withoutTails } from '../../../src/core/step-outcome';
import { ENTRIES_PER_OPERATION } from './scale';

export const PROVIDER = 'acme';
export const PROVIDER_URL = 'https://api.acme.example';
const ACTOR = 'worker:bench';
const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);
/** The filled operations started one a minute before the template's (10,000 span a week). */
const START_SPACING_MS = 60_000;
export const TEMPLATE_OPERATION = 'op-template-0000';
/** How long a status read takes, wake-up to answer, ms: a step's reservation is stored this long before its answer. */
export const READ_MS = 40;
export const TEMPLATE_JOB = 'job_template0000';

/**
 * One step as the worker commits it: the record it reads with (the reservation), the record after, its entries,
 * its clock, and whether it is a later read of the status-polling activity's loop (`pollStatus`).
 */
export interface PlannedStep {
  operationId: string;
  input: OperationRecord;
  record: OperationRecord;
  entries: StepEntry[];
  nowMs: number;
  /**
   * false: the activity's first read (the workflow reserved it; the activity checks `alreadyRecorded` first);
   * true: a later read of its loop (the activity stores the reservation first, `putReservation`).
   */
  inLoop: boolean;
}

/** The operation every filled one copies. */
export interface Template {
  /** Its entries as the store validated them, sequence 1 on. */
  entries: JournalEntry[];
  atMs: number[];
  /** Its record after the last entry (without tails), as JSON. */
  recordJson: string;
  lastAtMs: number;
}

/** A filled operation: its IDs and how far before the template it started. */
export interface FilledOperation {
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
 * The next status read of a running job: its reservation (`onWake`), the record it reads with (without tails),
 * the adapter's reading of the answer, and the planner's step (`afterStatus`), as `pollStatus` makes each read.
 */
export function statusStep(provider: RegisteredProvider, held: OperationRecord, jobId: string): PlannedStep {
  const wakeMs = held.schedule.nextPollAtMs ?? T0;
  const woke = onWake(held, stepContext(provider, wakeMs));
  if (woke.kind !== 'read_status') throw new Error(`${held.operationId}: expected a status read, got ${woke.kind}`);
  const input = withoutTails(woke.record);
  const atMs = wakeMs + READ_MS;
  const answer = runningAnswer(jobId, atMs, input.used.statusRequests);
  const observation = {
    ...provider.adapter.interpretStatus(answer, statusContextOf(input)),
    requestsSent: 1,
  };
  const step = afterStatus(input, observation, stepContext(provider, atMs));
  if (step.record.localState !== 'observing')
    throw new Error(`${held.operationId}: a running job left observing (${step.record.localState})`);
  return {
    operationId: held.operationId,
    input,
    record: step.record,
    entries: step.entries,
    nowMs: atMs,
    inLoop: false,
  };
}

/** Runs the core through intent, create and status reads until the operation holds `ENTRIES_PER_OPERATION` entries. */
export function templateOperation(provider: RegisteredProvider): Template {
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
      ...outcomeOfRecord(record).entries.filter((e) => e.sequence > 1 && e.sequence < record.journal.nextSequence),
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
export function filledRecord(template: Template, op: FilledOperation): OperationRecord {
  const json = template.recordJson.split(TEMPLATE_OPERATION).join(op.id).split(TEMPLATE_JOB).join(op.jobId);
  return JSON.parse(json) as OperationRecord;
}

/** `count` filled operations with random IDs, one `START_SPACING_MS` apart up to the template's start. */
export function filledOperations(count: number): FilledOperation[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `op-${randomBytes(16).toString('hex')}`,
    jobId: `job_${randomBytes(8).toString('hex')}`,
    offsetMs: (i - count) * START_SPACING_MS,
  }));
}
