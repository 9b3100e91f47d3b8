/**
 * The durable operation record (M3, C1, P4, T2-T4): one interface, two engines (SQLite by default, PostgreSQL at
 * scale). The store outlives Temporal's history retention, answers operators' queries, and carries the audit
 * chain. Every method is async so both engines fit; every write is safe to repeat (an activity retry that
 * re-appends the same entry gets `duplicate`, never a second row).
 *
 * Layout, shared by both engines (one migration list, `migrations/schema.ts`):
 * - `journal`: ONE hash-chained, append-only table for all entry kinds (intent, transition, observation,
 *   escalation, decision, artifact), keyed by (operation_id, sequence). One table because the chain is one
 *   sequence per operation across all kinds: a single primary key makes duplicates impossible and gaps
 *   detectable, and one ordered scan verifies a chain. The typed columns operators filter on (kind, to_state,
 *   remote_job_id, http_status, delay_source, escalation_reason) are extracted at append time and indexed.
 * - `operations`: the current record, an upserted JSON snapshot with columns copied out of it, guarded by a
 *   monotonically increasing `version`; it also keeps the chain head (`last_sequence`, `last_hash`) so a
 *   deleted tail is detected.
 * - `operation_jobs`: (provider, remote_job_id) -> operation, for the webhook receiver.
 * - `artifacts`: queryable copy of artifact entries (location, sha256, size, validation), append-only.
 * - `webhook_events`: unique by (provider, event_id), for dedupe.
 * - `provider_send_slots`: the next free send instant of each provider queue, from which the PostgreSQL store
 *   hands out a fleet's send slots (`reserveProviderSend`); empty on SQLite.
 * - `audit_checkpoints`: the register of signed checkpoints `asyncjob audit checkpoint` issued,
 *   append-only; `journal.key_id` and `operations.snapshot_hash`/`snapshot_key_id` say which key signed what.
 * - `provider_sessions`: V3, an operation's provider session (its cookie jar, serialised), one row per operation,
 *   replaced on every save. Session state, not history: never journalled, never hashed, never in a snapshot, and
 *   so never in Temporal (activities load and save it around a provider call).
 * UPDATE and DELETE of `journal` and `artifacts` are refused by the API (it has no such method) and by triggers.
 */
import { z } from 'zod';
import { canonicalJson } from '../../core/canonical-json';
import {
  escalationReasonSchema,
  instantSchema,
  journalEntrySchema,
  localStateSchema,
  type JournalEntry,
} from '../../core/journal';
import { type SendSlotReservation } from '../../core/send-slot';
import { type AuditSource } from './audit-source';
import { entryHash, GENESIS_HASH, type ChainKey, type ChainVerification } from './chain';
import { assertNoSecrets } from './secret-guard';
import { invalidInput, StoreError } from './store-errors';

/**
 * The current record of an operation as upserted by `putOperation`. `record` is the caller's full JSON
 * snapshot; the other fields are copied into columns of their own. `version` must grow with every write.
 */
export const operationSnapshotSchema = z.object({
  operationId: z.string().min(1).max(200),
  provider: z.string().min(1).max(200),
  localState: localStateSchema,
  /** Every provider job ID the operation has been linked to (usually one; two after a U3 conflict). */
  remoteJobIds: z.array(z.string().min(1).max(500)).max(100),
  escalationReason: escalationReasonSchema.nullable(),
  resultDeadlineAt: instantSchema.nullable(),
  updatedAt: instantSchema,
  /** Monotonic write guard: a snapshot with a version not above the stored one never replaces it. */
  version: z.number().int().positive(),
  record: z.record(z.string(), z.unknown()),
});
/** An operation snapshot. */
export type OperationSnapshot = z.infer<typeof operationSnapshotSchema>;

/** A webhook delivery as recorded for dedupe (W1); never the raw body, only its digest. */
const webhookEventSchema = z.object({
  provider: z.string().min(1).max(200),
  eventId: z.string().min(1).max(500),
  receivedAt: instantSchema,
  operationId: z.string().min(1).max(200).optional(),
  eventType: z.string().max(200).optional(),
  payloadSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});
/** A webhook event. */
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

/** An artifact as the `artifacts` table holds it (a copy of an artifact journal entry). */
export interface StoredArtifact {
  readonly operationId: string;
  readonly sequence: number;
  readonly at: string;
  readonly location: string;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly contentType: string | null;
  readonly validation: 'valid' | 'invalid' | 'not_checked';
}

/** A journal entry as stored, with its chain links. */
export interface StoredEntry {
  readonly entry: JournalEntry;
  readonly prevHash: string;
  readonly hash: string;
}

/** The outcome of one append: written now, or already there identically (a no-op). */
export type AppendResult =
  { readonly kind: 'appended'; readonly hash: string } | { readonly kind: 'duplicate'; readonly hash: string };

/** The outcome of `putOperation`: written, the same version already stored identically, or refused as older. */
export type PutOperationResult =
  | { readonly kind: 'written'; readonly version: number }
  | { readonly kind: 'unchanged'; readonly version: number }
  | { readonly kind: 'stale'; readonly storedVersion: number };

/** V3: the largest serialised provider session the store keeps (64 KiB of UTF-8). */
const MAX_PROVIDER_SESSION_BYTES = 64 * 1024;

/** An operation's provider session as stored. */
export interface StoredProviderSession {
  /** The serialised session (JSON text, opaque to the store). */
  readonly json: string;
  /** When it was last saved (ISO-8601). */
  readonly updatedAt: string;
}

/** A workflow's request for its operation back from a status loop, as the workers sharing a store pass it on. */
export interface LoopWakeNotice {
  operationId: string;
  /** The process that sent it (a random ID of that process). */
  origin: string;
}

/** Options shared by both engines. */
export interface OperationStoreOptions {
  /** Key for HMAC-SHA256 chain hashes, kept outside the database (e.g. `ASYNCJOB_AUDIT_HMAC_KEY`). Never stored. */
  readonly hmacKey?: string;
  /** Secret strings (credentials the worker holds) that must never appear in anything recorded. */
  readonly forbiddenValues?: readonly string[];
}

/**
 * The durable operation record. Implemented once, by `SqlOperationStore` (`sql-store.ts`) over a SQL driver;
 * `SqliteOperationStore` and `PostgresOperationStore` are it on each engine.
 */
export interface OperationStore {
  /** Applies pending schema migrations in one transaction; safe when two processes start at once. Idempotent. */
  migrate(): Promise<void>;
  /**
   * Appends one entry to its operation's chain. Same entry again: `duplicate` (no-op). A different entry under
   * an existing (operationId, sequence): `ASYNCJOB_ERR_JOURNAL_CONFLICT`. A sequence beyond the next one:
   * `ASYNCJOB_ERR_JOURNAL_GAP`. Invalid entry: `ASYNCJOB_ERR_INVALID_INPUT`. Credential: `ASYNCJOB_ERR_SECRET_IN_RECORD`.
   */
  append(entry: JournalEntry): Promise<AppendResult>;
  /** Appends entries in order, all or none, with the same rules as `append`. */
  appendMany(entries: readonly JournalEntry[]): Promise<AppendResult[]>;
  /** Upserts the current record; never moves backwards (a version not above the stored one is `stale`). */
  putOperation(snapshot: OperationSnapshot): Promise<PutOperationResult>;
  /**
   * B2 inside a status-polling activity: rewrites the snapshot at its own version (a status read reserved and
   * counted, nothing journalled yet) before the read is sent, only while the stored version and local state are
   * still these. False, writing nothing, when another writer moved the operation on (this activity was replaced).
   */
  putReservation(snapshot: OperationSnapshot): Promise<boolean>;
  /**
   * `appendMany` and `putOperation` in one transaction: a step's entries and the snapshot that accounts for them
   * are stored together or not at all, so a worker killed in between never leaves the journal ahead of the
   * snapshot. Same rules and errors as the two.
   */
  appendWithSnapshot(
    entries: readonly JournalEntry[],
    snapshot: OperationSnapshot,
  ): Promise<{ appended: AppendResult[]; snapshot: PutOperationResult }>;
  /** The current record, or null when no snapshot was ever put. */
  getOperation(operationId: string): Promise<OperationSnapshot | null>;
  /** The chain head the store keeps: the last sequence (0 when empty) and its hash. */
  chainHead(operationId: string): Promise<{ lastSequence: number; lastHash: string | null }>;
  /** An operation's entries in sequence order, from `fromSequence` (default 1). */
  entries(operationId: string, options?: { fromSequence?: number }): Promise<StoredEntry[]>;
  /**
   * The IDs of the operation(s) linked to a provider job ID, by a snapshot's `remoteJobIds` or by a transition or
   * observation naming it (the provider then comes from the intent entry). Usually one; more is a U3 incident.
   */
  findByProviderJobId(provider: string, remoteJobId: string): Promise<string[]>;
  /** Records a webhook delivery; `duplicate` when (provider, eventId) was already recorded. */
  recordWebhookEvent(event: WebhookEvent): Promise<'recorded' | 'duplicate'>;
  /** The artifacts recorded for an operation, in sequence order. */
  artifacts(operationId: string): Promise<StoredArtifact[]>;
  /**
   * V3: the operation's provider session (its serialised cookie jar), or null when none was saved. Never part of
   * the journal or the snapshot.
   */
  loadProviderSession(operationId: string): Promise<StoredProviderSession | null>;
  /**
   * V3: replaces the operation's provider session (last write wins: one operation makes one provider call at a
   * time). `json` must be JSON text of at most {@link MAX_PROVIDER_SESSION_BYTES} bytes
   * (`ASYNCJOB_ERR_SESSION_TOO_LARGE`, nothing written) and carry no credential or configured secret value.
   */
  saveProviderSession(operationId: string, json: string): Promise<void>;
  /**
   * The next send slot of a provider's queue, shared by every worker on this store, in one statement: the slot is
   * the later of the database's clock and the row's next free instant, which moves one `intervalMs` past it
   * (`core/send-slot.ts` says why that makes a fleet's rate strict). Both instants come from the database's clock,
   * so no host's clock is compared with another's. Each call takes a slot (not safe to repeat: a slot taken and not
   * used is lost, which only lowers the rate). Only on a store that several hosts share (PostgreSQL); absent on
   * SQLite, whose single host paces each process itself.
   */
  reserveProviderSend?(taskQueue: string, intervalMs: number): Promise<SendSlotReservation>;
  /**
   * Tells every worker sharing this store that a workflow asked for its operation back from the status loop
   * (`activities/loop-wake.ts`): PostgreSQL's NOTIFY, nothing stored, delivered to the processes listening then.
   * `origin` names the sending process, so it can ignore its own. Absent on SQLite: a loop in another process
   * there hands back at its next heartbeat.
   */
  publishLoopWake?(notice: LoopWakeNotice): Promise<void>;
  /**
   * Calls `listener` for each {@link publishLoopWake} of this store's schema, from a connection of its own, which is
   * made again when lost (reported to `onError`; what was sent meanwhile is missed). Resolves to the function that
   * stops listening. Absent on SQLite.
   */
  listenForLoopWakes?(
    listener: (notice: LoopWakeNotice) => void,
    onError: (err: Error) => void,
  ): Promise<() => Promise<void>>;
  /** Recomputes every chain (or one operation's) and reports the first broken link per operation. Read-only. */
  verifyChains(options?: { operationId?: string }): Promise<ChainVerification>;
  /** Everything `asyncjob audit` reads (every column, the journal's own heads, the checkpoint register). */
  auditSource(): AuditSource;
  /** Releases the connection(s). Idempotent. */
  close(): Promise<void>;
}

/** Columns extracted from an entry for queries; derived data, not part of the hash. */
export interface ExtractedColumns {
  readonly kind: string;
  readonly toState: string | null;
  readonly remoteJobId: string | null;
  readonly httpStatus: number | null;
  readonly delaySource: string | null;
  readonly escalationReason: string | null;
  readonly provider: string | null;
}

/** A validated entry ready for an engine to write: its canonical text and extracted columns. */
export interface PreparedEntry {
  readonly entry: JournalEntry;
  readonly canonical: string;
  readonly columns: ExtractedColumns;
}

/**
 * Validates an entry (every problem named), refuses secrets, and computes what both engines write. Pure.
 * Strips unknown keys (zod) so what is hashed is exactly the vocabulary of `src/core/journal.ts`.
 */
export function prepareEntry(input: unknown, forbiddenValues: readonly string[] = []): PreparedEntry {
  const parsed = journalEntrySchema.safeParse(input);
  if (!parsed.success) throw invalidInput('journal entry', parsed.error.issues);
  const entry = parsed.data;
  assertNoSecrets(`journal entry ${entry.operationId}#${entry.sequence}`, entry, forbiddenValues);
  return { entry, canonical: canonicalJson(entry), columns: columnsOf(entry) };
}

/** The query columns an entry is stored with: derived from the hashed entry, so the auditor recomputes them. Pure. */
export function columnsOf(entry: JournalEntry): ExtractedColumns {
  const b = entry.body;
  return {
    kind: b.kind,
    toState: b.kind === 'transition' ? b.to : null,
    remoteJobId: b.kind === 'transition' || b.kind === 'observation' ? (b.remoteJobId ?? null) : null,
    httpStatus: b.kind === 'observation' ? (b.httpStatus ?? null) : null,
    delaySource: b.kind === 'observation' ? (b.delaySource ?? null) : null,
    escalationReason: b.kind === 'escalation' ? b.reason : null,
    provider: b.kind === 'intent' ? b.provider : null,
  };
}

/** Validates a snapshot and refuses secrets; returns it with its canonical text. Pure. */
export function prepareSnapshot(
  input: unknown,
  forbiddenValues: readonly string[] = [],
): { snapshot: OperationSnapshot; canonical: string } {
  const parsed = operationSnapshotSchema.safeParse(input);
  if (!parsed.success) throw invalidInput('operation snapshot', parsed.error.issues);
  assertNoSecrets(`operation snapshot ${parsed.data.operationId}`, parsed.data, forbiddenValues);
  return { snapshot: parsed.data, canonical: canonicalJson(parsed.data) };
}

/** Validates a webhook event and refuses secrets. Pure. */
export function prepareWebhookEvent(input: unknown, forbiddenValues: readonly string[] = []): WebhookEvent {
  const parsed = webhookEventSchema.safeParse(input);
  if (!parsed.success) throw invalidInput('webhook event', parsed.error.issues);
  assertNoSecrets(`webhook event ${parsed.data.provider}/${parsed.data.eventId}`, parsed.data, forbiddenValues);
  return parsed.data;
}

/**
 * Validates a provider session before it is saved: an operation ID, JSON text, at most
 * {@link MAX_PROVIDER_SESSION_BYTES} bytes, no credential of ours. The error never quotes the session. Pure.
 */
export function prepareProviderSession(
  operationId: unknown,
  json: unknown,
  forbiddenValues: readonly string[] = [],
): { operationId: string; json: string } {
  const id = z.string().min(1).max(200).safeParse(operationId);
  if (!id.success)
    throw invalidInput(
      'provider session',
      id.error.issues.map((i) => ({ ...i, path: ['operationId'] })),
    );
  if (typeof json !== 'string')
    throw invalidInput('provider session', [{ path: ['json'], message: 'must be JSON text' }]);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_PROVIDER_SESSION_BYTES) {
    throw new StoreError(
      'ASYNCJOB_ERR_SESSION_TOO_LARGE',
      `the provider session of ${id.data} is ${bytes} bytes, above the ${MAX_PROVIDER_SESSION_BYTES}-byte limit; it was not saved`,
      [{ path: 'json', message: `${bytes} bytes, at most ${MAX_PROVIDER_SESSION_BYTES}` }],
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw invalidInput('provider session', [{ path: ['json'], message: 'is not JSON text' }]);
  }
  // Our credentials never belong in a provider session (the jar holds what the provider set, nothing of ours).
  assertNoSecrets(`provider session ${id.data}`, parsed, forbiddenValues);
  return { operationId: id.data, json };
}

/** Parses a stored entry text back; null when it no longer parses (a tampered row). */
export function parseStoredEntry(text: string): JournalEntry | null {
  try {
    const parsed = journalEntrySchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** What the engine must do with an entry, decided from the chain head and any row already at its sequence. */
export type AppendDecision =
  | { readonly kind: 'duplicate'; readonly hash: string }
  | { readonly kind: 'write'; readonly prevHash: string; readonly hash: string };

/**
 * The engine-independent append rule, applied inside the engine's write transaction (with the operation's head
 * locked). Pure. Throws `ASYNCJOB_ERR_JOURNAL_CONFLICT` / `ASYNCJOB_ERR_JOURNAL_GAP`.
 */
export function decideAppend(
  prepared: PreparedEntry,
  head: { lastSequence: number; lastHash: string | null },
  existing: { entry: string; hash: string } | null,
  hmacKey: ChainKey | string | undefined,
): AppendDecision {
  const { operationId, sequence } = prepared.entry;
  if (sequence <= head.lastSequence) {
    if (existing !== null && existing.entry === prepared.canonical) return { kind: 'duplicate', hash: existing.hash };
    throw new StoreError(
      'ASYNCJOB_ERR_JOURNAL_CONFLICT',
      existing === null
        ? `operation ${operationId} sequence ${sequence} is below the recorded head ${head.lastSequence} but its row is missing (run audit verify)`
        : `operation ${operationId} already has a different entry at sequence ${sequence}; it is never overwritten`,
      [{ path: 'sequence', message: `sequence ${sequence} is taken` }],
    );
  }
  if (sequence !== head.lastSequence + 1) {
    throw new StoreError(
      'ASYNCJOB_ERR_JOURNAL_GAP',
      `operation ${operationId} has ${head.lastSequence} entries; sequence ${sequence} would leave a gap (next is ${head.lastSequence + 1})`,
      [{ path: 'sequence', message: `expected ${head.lastSequence + 1}` }],
    );
  }
  const prevHash = sequence === 1 ? GENESIS_HASH : (head.lastHash ?? GENESIS_HASH);
  return { kind: 'write', prevHash, hash: entryHash(prepared.entry, prevHash, hmacKey) };
}
