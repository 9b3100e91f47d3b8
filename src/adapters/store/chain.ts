/**
 * The audit chain (T2): every journal entry of an operation carries the hash of the previous entry of the same
 * operation (a fixed genesis value for sequence 1) and its own hash over canonical content:
 *
 *   hash = "sha256:" + hex(sha256(canonicalJson({ operationId, sequence, at, actor, body, prevHash })))
 *   or, with a key kept outside the database, "hmac-sha256:" + hex(HMAC-SHA256(key, same text)).
 *
 * The hashed text holds every fact of the entry; the journal's other columns (kind, to_state, remote_job_id, ...)
 * are copies derived from it, compared by `asyncjob audit verify`. A keyed row also records
 * the key's ID (`key_id`, {@link chainKeyId}: an HMAC of a fixed label, never the key), so a verifier holding
 * another key or none says so instead of calling the entry changed. The key ID is bound by the signature, not
 * hashed: the configured key is tried on every signed row whatever its key ID says, so an edited key ID is a
 * change, never a way to turn a change into "cannot verify" (`verifyOperationRows`). Anyone can recompute a plain chain; only the
 * key holder can recompute (or forge) an HMAC chain. The engine-independent walk lives here so SQLite and
 * PostgreSQL report breaks identically.
 */
import { createHash, createHmac } from 'node:crypto';
import { canonicalJson } from '../../core/canonical-json';
import { type JournalEntry } from '../../core/journal';

/** The `prevHash` of every operation's first entry. */
export const GENESIS_HASH = `sha256:${'0'.repeat(64)}`;

/** An HMAC chain key and its public ID. The secret is never stored, printed or logged. */
export interface ChainKey {
  readonly secret: string;
  readonly id: string;
}

/** The public ID of an HMAC key: `hmac:` + 16 hex digits of HMAC(key, a fixed label). Reveals nothing usable. */
export function chainKeyId(secret: string): string {
  return `hmac:${createHmac('sha256', secret).update('asyncjob audit key id', 'utf8').digest('hex').slice(0, 16)}`;
}

/** The {@link ChainKey} of a secret, or undefined for none/empty. */
export function chainKeyOf(secret: string | undefined): ChainKey | undefined {
  return secret === undefined || secret.length === 0 ? undefined : { secret, id: chainKeyId(secret) };
}

function digestOf(text: string, key: ChainKey | string | undefined): string {
  const secret = typeof key === 'string' ? key : key?.secret;
  if (secret !== undefined && secret.length > 0)
    return `hmac-sha256:${createHmac('sha256', secret).update(text, 'utf8').digest('hex')}`;
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/** Computes an entry's chain hash; a key (never stored) switches to HMAC-SHA256. Pure; deterministic. */
export function entryHash(entry: JournalEntry, prevHash: string, hmacKey?: ChainKey | string): string {
  const text = canonicalJson({
    operationId: entry.operationId,
    sequence: entry.sequence,
    at: entry.at,
    actor: entry.actor,
    body: entry.body,
    prevHash,
  });
  return digestOf(text, hmacKey);
}

/** The hash kept beside an operation's snapshot: over its canonical text, keyed like the chain. */
export function snapshotHash(canonicalSnapshot: string, key?: ChainKey): string {
  return digestOf(`asyncjob.snapshot/v1\n${canonicalSnapshot}`, key);
}

/** Whether a stored hash was made with a key. */
export function isKeyed(hash: string): boolean {
  return hash.startsWith('hmac-sha256:');
}

/** The kinds of broken link `verifyChains` reports. */
export type ChainProblem =
  | 'hash_mismatch'
  | 'prev_link_mismatch'
  | 'gap'
  | 'missing_head'
  | 'unsigned_entry'
  | 'key_id_mismatch'
  | 'key_id_unknown';

/**
 * The first broken link of one operation's chain. `expected` is what an intact chain would hold at `sequence`
 * (a hash, a sequence number, or the recorded head); `found` is what the database holds.
 */
export interface ChainBreak {
  readonly operationId: string;
  readonly sequence: number;
  readonly problem: ChainProblem;
  readonly expected: string;
  readonly found: string;
}

/** A signed entry the verifier cannot check: its key (`keyId`, null when the row names none) is not configured. */
export interface UnverifiableEntry {
  readonly operationId: string;
  readonly sequence: number;
  readonly keyId: string | null;
}

/** The outcome of `verifyChains`: counts, and the first break of every broken operation (empty when intact). */
export interface ChainVerification {
  readonly operationsChecked: number;
  readonly entriesChecked: number;
  readonly breaks: readonly ChainBreak[];
  /** Present only when some signed entries could not be checked (their key is not configured). */
  readonly unverifiable?: readonly UnverifiableEntry[];
}

/** One stored journal row as the verifier needs it; `entry` is null when the stored text no longer parses. */
export interface StoredChainRow {
  readonly sequence: number;
  readonly entry: JournalEntry | null;
  readonly prevHash: string;
  readonly hash: string;
  /** The signing key's ID; null for plain rows. */
  readonly keyId?: string | null;
}

/** The head the operations table records for an operation (null when that row is missing). */
export interface RecordedHead {
  readonly lastSequence: number;
  readonly lastHash: string | null;
}

/** The walk of one operation's chain. */
export interface OperationChainResult {
  readonly break: ChainBreak | null;
  readonly entriesChecked: number;
  /** The first entry whose signature could not be checked, when one could not. */
  readonly unverifiable: UnverifiableEntry | null;
  /** How many entries the configured key verified (their HMAC holds under it). */
  readonly verified: number;
}

type RowVerdict =
  | { kind: 'ok'; verified: boolean }
  | { kind: 'unverifiable'; keyId: string | null }
  | { kind: 'break'; problem: ChainProblem; expected: string; found?: string };

/**
 * A signed row. The key ID column is not part of the hashed text; the signature binds it instead: the configured
 * key is always tried, whatever the column says, so a row it verifies that names another key had its key ID
 * edited (key_id_mismatch). A row it does not verify is unverifiable only when it names another key; whether that
 * is a finding is decided over the whole operation (key_id_unknown, in `verifyOperationRows`).
 */
function signedVerdict(
  row: StoredChainRow,
  entry: JournalEntry,
  prevHash: string,
  key: ChainKey | undefined,
): RowVerdict {
  const keyId = row.keyId ?? null;
  if (key === undefined) return { kind: 'unverifiable', keyId };
  const expected = entryHash(entry, prevHash, key);
  if (expected === row.hash) {
    if (keyId === key.id) return { kind: 'ok', verified: true };
    return {
      kind: 'break',
      problem: 'key_id_mismatch',
      expected: `key_id ${key.id} (the key whose signature the entry carries)`,
      found: keyId === null ? 'no key_id' : `key_id ${keyId}`,
    };
  }
  if (keyId !== null && keyId !== key.id) return { kind: 'unverifiable', keyId };
  return { kind: 'break', problem: 'hash_mismatch', expected };
}

function rowVerdict(operationId: string, row: StoredChainRow, prevHash: string, key: ChainKey | undefined): RowVerdict {
  if (row.entry === null || row.entry.operationId !== operationId || row.entry.sequence !== row.sequence) {
    return {
      kind: 'break',
      problem: 'hash_mismatch',
      expected:
        row.entry === null ? '(stored entry no longer parses)' : `operation ${operationId} sequence ${row.sequence}`,
    };
  }
  if (isKeyed(row.hash)) return signedVerdict(row, row.entry, prevHash, key);
  // A plain hash on a row that names its key, or under a configured key: signed once, rewritten without the key.
  if ((row.keyId ?? null) !== null || key !== undefined)
    return { kind: 'break', problem: 'unsigned_entry', expected: `hmac-sha256 with key ${row.keyId ?? key!.id}` };
  const expected = entryHash(row.entry, prevHash);
  return expected === row.hash
    ? { kind: 'ok', verified: false }
    : { kind: 'break', problem: 'hash_mismatch', expected };
}

/**
 * Walks one operation's stored rows in sequence order and returns the first broken link, or null. Detects an
 * edited row (hash_mismatch), a re-linked row (prev_link_mismatch), a deleted row in the middle (gap), a deleted
 * tail or a missing head record (missing_head, against the head kept in the operations table), and, with a key
 * configured, a plain row where a signed one belongs (unsigned_entry). A row signed with a key that is not
 * configured is never called changed: the walk notes it as unverifiable and goes on checking links.
 */
export function verifyOperationRows(
  operationId: string,
  rows: Iterable<StoredChainRow>,
  head: RecordedHead | null,
  hmacKey?: ChainKey | string,
): OperationChainResult {
  const key = typeof hmacKey === 'string' ? chainKeyOf(hmacKey) : hmacKey;
  let expectedSequence = 1;
  let prevHash = GENESIS_HASH;
  let checked = 0;
  let verified = 0;
  let unverifiable: UnverifiableEntry | null = null;
  const broken = (b: Omit<ChainBreak, 'operationId'>): OperationChainResult => ({
    break: { operationId, ...b },
    entriesChecked: checked,
    unverifiable,
    verified,
  });
  for (const row of rows) {
    checked += 1;
    if (row.sequence !== expectedSequence)
      return broken({
        sequence: expectedSequence,
        problem: 'gap',
        expected: String(expectedSequence),
        found: String(row.sequence),
      });
    if (row.prevHash !== prevHash)
      return broken({ sequence: row.sequence, problem: 'prev_link_mismatch', expected: prevHash, found: row.prevHash });
    const verdict = rowVerdict(operationId, row, prevHash, key);
    if (verdict.kind === 'break')
      return broken({
        sequence: row.sequence,
        problem: verdict.problem,
        expected: verdict.expected,
        found: verdict.found ?? row.hash,
      });
    if (verdict.kind === 'unverifiable' && unverifiable === null)
      unverifiable = { operationId, sequence: row.sequence, keyId: verdict.keyId };
    if (verdict.kind === 'ok' && verdict.verified) verified += 1;
    prevHash = row.hash;
    expectedSequence += 1;
  }
  if (unverifiable !== null && verified > 0 && key !== undefined) {
    const foreign = unverifiable;
    unverifiable = null;
    return broken({
      sequence: foreign.sequence,
      problem: 'key_id_unknown',
      expected: `a signature by ${key.id}, the key that verifies this operation's other entries`,
      found: `key_id ${foreign.keyId ?? 'none'} (not configured), a signature ${key.id} does not verify`,
    });
  }
  const lastSequence = expectedSequence - 1;
  if (head === null)
    return broken({
      sequence: lastSequence,
      problem: 'missing_head',
      expected: 'a head record in operations',
      found: 'none',
    });
  if (head.lastSequence !== lastSequence || (lastSequence > 0 && head.lastHash !== prevHash)) {
    return broken({
      sequence: Math.min(head.lastSequence, lastSequence) + 1,
      problem: 'missing_head',
      expected: `last sequence ${head.lastSequence} with hash ${head.lastHash ?? 'none'}`,
      found: `last sequence ${lastSequence} with hash ${lastSequence > 0 ? prevHash : 'none'}`,
    });
  }
  return { break: null, entriesChecked: checked, unverifiable, verified };
}
