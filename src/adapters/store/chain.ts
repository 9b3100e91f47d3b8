/**
 * The audit chain (T2): every journal entry of an operation carries the hash of the previous entry of the same
 * operation (a fixed genesis value for sequence 1) and its own hash over canonical content:
 *
 *   hash = "sha256:" + hex(sha256(canonicalJson({ operationId, sequence, at, actor, body, prevHash })))
 *   or, with a key kept outside the database, "hmac-sha256:" + hex(HMAC-SHA256(key, same text)).
 *
 * Anyone can recompute a plain chain; only the key holder can recompute (or forge) an HMAC chain. The engine-
 * independent verification walk lives here so SQLite and PostgreSQL report breaks identically.
 */
import { createHash, createHmac } from 'node:crypto';
import { canonicalJson } from '../../core/canonical-json';
import { type JournalEntry } from '../../core/journal';

/** The `prevHash` of every operation's first entry. */
export const GENESIS_HASH = `sha256:${'0'.repeat(64)}`;

/** Computes an entry's chain hash; `hmacKey` (never stored) switches to HMAC-SHA256. Pure; deterministic. */
export function entryHash(entry: JournalEntry, prevHash: string, hmacKey?: string | Uint8Array): string {
  const text = canonicalJson({
    operationId: entry.operationId,
    sequence: entry.sequence,
    at: entry.at,
    actor: entry.actor,
    body: entry.body,
    prevHash,
  });
  if (hmacKey !== undefined && hmacKey.length > 0) {
    return `hmac-sha256:${createHmac('sha256', hmacKey).update(text, 'utf8').digest('hex')}`;
  }
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/** The kinds of broken link `verifyChains` reports. */
export type ChainProblem = 'hash_mismatch' | 'prev_link_mismatch' | 'gap' | 'missing_head';

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

/** The outcome of `verifyChains`: counts, and the first break of every broken operation (empty when intact). */
export interface ChainVerification {
  readonly operationsChecked: number;
  readonly entriesChecked: number;
  readonly breaks: readonly ChainBreak[];
}

/** One stored journal row as the verifier needs it; `entry` is null when the stored text no longer parses. */
export interface StoredChainRow {
  readonly sequence: number;
  readonly entry: JournalEntry | null;
  readonly prevHash: string;
  readonly hash: string;
}

/** The head the operations table records for an operation (null when that row is missing). */
export interface RecordedHead {
  readonly lastSequence: number;
  readonly lastHash: string | null;
}

/**
 * Walks one operation's stored rows in sequence order and returns the first broken link, or null. Detects an
 * edited row (hash_mismatch), a re-linked row (prev_link_mismatch), a deleted row in the middle (gap) and a
 * deleted tail or a missing head record (missing_head, against the head kept in the operations table).
 */
export function verifyOperationRows(
  operationId: string,
  rows: Iterable<StoredChainRow>,
  head: RecordedHead | null,
  hmacKey?: string | Uint8Array,
): { break: ChainBreak | null; entriesChecked: number } {
  let expectedSequence = 1;
  let prevHash = GENESIS_HASH;
  let checked = 0;
  for (const row of rows) {
    checked += 1;
    if (row.sequence !== expectedSequence) {
      return {
        break: { operationId, sequence: expectedSequence, problem: 'gap', expected: String(expectedSequence), found: String(row.sequence) },
        entriesChecked: checked,
      };
    }
    if (row.prevHash !== prevHash) {
      return {
        break: { operationId, sequence: row.sequence, problem: 'prev_link_mismatch', expected: prevHash, found: row.prevHash },
        entriesChecked: checked,
      };
    }
    const expectedHash = row.entry === null ? '(stored entry no longer parses)' : entryHash(row.entry, prevHash, hmacKey);
    if (row.entry === null || row.entry.operationId !== operationId || row.entry.sequence !== row.sequence || expectedHash !== row.hash) {
      return {
        break: { operationId, sequence: row.sequence, problem: 'hash_mismatch', expected: expectedHash, found: row.hash },
        entriesChecked: checked,
      };
    }
    prevHash = row.hash;
    expectedSequence += 1;
  }
  const lastSequence = expectedSequence - 1;
  if (head === null) {
    return {
      break: { operationId, sequence: lastSequence, problem: 'missing_head', expected: 'a head record in operations', found: 'none' },
      entriesChecked: checked,
    };
  }
  if (head.lastSequence !== lastSequence || (lastSequence > 0 && head.lastHash !== prevHash)) {
    return {
      break: {
        operationId,
        sequence: Math.min(head.lastSequence, lastSequence) + 1,
        problem: 'missing_head',
        expected: `last sequence ${head.lastSequence} with hash ${head.lastHash ?? 'none'}`,
        found: `last sequence ${lastSequence} with hash ${lastSequence > 0 ? prevHash : 'none'}`,
      },
      entriesChecked: checked,
    };
  }
  return { break: null, entriesChecked: checked };
}
