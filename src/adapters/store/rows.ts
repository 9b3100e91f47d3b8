/** Row shapes shared by both engines (snake_case columns) and their mapping to the store's types. */
import { parseStoredEntry, type StoredArtifact, type StoredEntry } from './operation-store';
import { StoreError } from './store-errors';

/** A `journal` row as selected for reading (PostgreSQL returns BIGINT as a string). */
export interface JournalRow {
  operation_id: string;
  sequence: number | string;
  entry: string;
  prev_hash: string;
  hash: string;
}

/** An `artifacts` row. */
export interface ArtifactRow {
  operation_id: string;
  sequence: number | string;
  at: string;
  location: string;
  sha256: string;
  size_bytes: number | string;
  content_type: string | null;
  validation: StoredArtifact['validation'];
}

/** Maps an `artifacts` row. */
export function toStoredArtifact(r: ArtifactRow): StoredArtifact {
  return {
    operationId: r.operation_id,
    sequence: Number(r.sequence),
    at: r.at,
    location: r.location,
    sha256: r.sha256,
    sizeBytes: Number(r.size_bytes),
    contentType: r.content_type,
    validation: r.validation,
  };
}

/** Maps a `journal` row; throws when the stored text no longer parses (a tampered row: run audit verify). */
export function toStoredEntry(r: JournalRow): StoredEntry {
  const entry = parseStoredEntry(r.entry);
  if (entry === null) {
    throw new StoreError(
      'ASYNCJOB_ERR_INVALID_INPUT',
      `stored entry ${r.operation_id}#${String(r.sequence)} no longer parses (run audit verify)`,
    );
  }
  return { entry, prevHash: r.prev_hash, hash: r.hash };
}
