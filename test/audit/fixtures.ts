/**
 * A realistic signed operation for the tamper suite: the journal a succeeded operation writes (intent, create,
 * acceptance, status reads, collect, artifact, success), its snapshots as the worker puts them (record and all),
 * and a real artifact file. Written in two phases so an older genuine snapshot exists to be put back.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type OperationSnapshot, type OperationStore } from '../../src/adapters/store/operation-store';
import { type JournalEntry } from '../../src/core/journal';
import { intentEntryOf, newOperationRecord, type OperationRecord } from '../../src/core/operation';

const T0 = Date.parse('2026-11-29T10:18:00.000Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();

/** The base record of an operation, as the workflow makes it. */
function baseRecord(operationId: string): OperationRecord {
  const made = newOperationRecord({
    request: {
      operationId,
      provider: 'acme',
      payload: { report: 'sales', month: '2026-10' },
      startedBy: 'billing-service',
      authorisedBy: 'alice@example.com',
      createDeadline: { afterMs: 300_000 },
      resultDeadline: { afterMs: 3_600_000 },
    },
    nowMs: T0,
    idempotencyToken: 'tok_0123456789abcdefghijkl',
    traceId: `trace-${operationId}`,
  });
  if (made.kind !== 'ok') throw new Error(JSON.stringify(made.issues));
  return made.record;
}

function entry(operationId: string, sequence: number, actor: string, body: JournalEntry['body']): JournalEntry {
  return { operationId, sequence, at: at(sequence), actor, body };
}

/** The journal of a succeeded operation: sequences 1-7 (phase one), 8-9 (the artifact and -> succeeded). */
function succeededJournal(
  operationId: string,
  artifact: { location: string; sha256: string; sizeBytes: number },
): JournalEntry[] {
  const intent = intentEntryOf(baseRecord(operationId));
  const job = `job_${operationId}`;
  return [
    { operationId, sequence: 1, at: at(0), actor: intent.actor, body: intent.body },
    entry(operationId, 2, 'billing-service', {
      kind: 'transition',
      from: null,
      to: 'create_pending',
      cause: 'operation_started',
    }),
    entry(operationId, 3, 'worker:host-a', {
      kind: 'observation',
      action: 'create',
      transport: 'response',
      httpStatus: 202,
      remoteJobId: job,
      decision: 'accept',
    }),
    entry(operationId, 4, 'worker:host-a', {
      kind: 'transition',
      from: 'create_pending',
      to: 'accepted',
      cause: 'create_accepted',
      evidenceSequence: 3,
      remoteJobId: job,
    }),
    entry(operationId, 5, 'worker:host-a', {
      kind: 'observation',
      action: 'status',
      transport: 'response',
      httpStatus: 503,
      headers: { 'retry-after': '2' },
      decision: 'wait',
      nextPollAt: at(7),
      delaySource: 'provider_retry_after',
      statusRequestsUsed: 1,
      statusRequestsAllowed: 20,
    }),
    entry(operationId, 6, 'worker:host-a', {
      kind: 'observation',
      action: 'status',
      transport: 'response',
      httpStatus: 200,
      remoteJobId: job,
      remoteState: 'done',
      decision: 'collect',
      statusRequestsUsed: 2,
      statusRequestsAllowed: 20,
    }),
    entry(operationId, 7, 'worker:host-a', {
      kind: 'transition',
      from: 'accepted',
      to: 'result_collecting',
      cause: 'status_observed',
      evidenceSequence: 6,
      remoteJobId: job,
    }),
    entry(operationId, 8, 'worker:host-a', {
      kind: 'artifact',
      ...artifact,
      contentType: 'application/json',
      validation: 'valid',
    }),
    entry(operationId, 9, 'worker:host-a', {
      kind: 'transition',
      from: 'result_collecting',
      to: 'succeeded',
      cause: 'collect_response:8',
      evidenceSequence: 8,
      remoteJobId: job,
    }),
  ];
}

/** The snapshot the worker puts after the entry `version` of {@link succeededJournal}. */
function snapshotAt(
  operationId: string,
  version: number,
  artifact: { location: string; sha256: string; sizeBytes: number },
): OperationSnapshot {
  const job = `job_${operationId}`;
  const base = baseRecord(operationId);
  const done = version >= 9;
  const record: OperationRecord = {
    ...base,
    jobId: job,
    acceptedAtMs: T0 + 4000,
    localState: done ? 'succeeded' : 'result_collecting',
    remote: { jobIds: [job], state: 'done', category: 'success', observedAtMs: T0 + 6000 },
    used: { ...base.used, statusRequests: 2, createAttempts: 1 },
    result: done
      ? {
          artifactLocation: artifact.location,
          sha256: artifact.sha256,
          sizeBytes: artifact.sizeBytes,
          validation: 'valid',
        }
      : null,
    journal: { nextSequence: version + 1, transitions: [], observations: [] },
  };
  return {
    operationId,
    provider: 'acme',
    localState: record.localState,
    remoteJobIds: [job],
    escalationReason: null,
    resultDeadlineAt: new Date(record.deadlines.resultDeadlineMs).toISOString(),
    updatedAt: at(version),
    version,
    record: record as unknown as Record<string, unknown>,
  };
}

/** Writes an artifact file and returns its location, digest and size. */
export function writeArtifact(
  dir: string,
  operationId: string,
): { location: string; sha256: string; sizeBytes: number; path: string } {
  const path = join(dir, `${operationId}-8-result.json`);
  const bytes = Buffer.from(JSON.stringify({ rows: [{ id: 1, total: 42 }], operationId }), 'utf8');
  writeFileSync(path, bytes);
  return {
    location: pathToFileURL(path).href,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    sizeBytes: bytes.length,
    path,
  };
}

/** Phase one: sequences 1-7 and the snapshot at 7. */
export async function writePhaseOne(
  store: OperationStore,
  operationId: string,
  artifact: { location: string; sha256: string; sizeBytes: number },
): Promise<void> {
  await store.appendMany(succeededJournal(operationId, artifact).slice(0, 7));
  await store.putOperation(snapshotAt(operationId, 7, artifact));
}

/** Phase two: the artifact and the success, and the snapshot at 9. */
export async function writePhaseTwo(
  store: OperationStore,
  operationId: string,
  artifact: { location: string; sha256: string; sizeBytes: number },
): Promise<void> {
  await store.appendMany(succeededJournal(operationId, artifact).slice(7));
  await store.putOperation(snapshotAt(operationId, 9, artifact));
}
