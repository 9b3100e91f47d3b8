/**
 * The snapshot's hash against its text, keyed like the chain. As for journal rows, the key ID column
 * (`snapshot_key_id`) is bound by the signature rather than hashed: the configured key is tried whatever the
 * column names, so an edited key ID is a change (key_id_mismatch), and a snapshot naming a key that is not
 * configured, beside journal entries the configured key verifies, is one too (key_id_unknown). Pure.
 */
import { type AuditOperationRow } from '../adapters/store/audit-source';
import { isKeyed, snapshotHash, type ChainKey } from '../adapters/store/chain';
import { opFinding, type AuditFinding } from './findings';

/** `unverifiable`: signed by a key not configured; `none`: no snapshot to check. */
export type SnapshotHashStatus = 'checked' | 'unverifiable' | 'none';

/** What checking the snapshot's hash found. */
export interface SnapshotHashVerdict {
  readonly finding?: AuditFinding;
  readonly hash: SnapshotHashStatus;
}

/**
 * One operations row's snapshot to check: `version` is its snapshot's; `chainVerified`, whether the configured key
 * verified entries of the same operation's journal (then a snapshot naming an unknown key is a change, not "cannot
 * verify").
 */
export interface SnapshotCheck {
  operationId: string;
  row: AuditOperationRow;
  version: number;
  key: ChainKey | undefined;
  chainVerified: boolean;
}

function signedVerdict({ operationId, row, version, key, chainVerified }: SnapshotCheck): SnapshotHashVerdict {
  const stored = row.snapshotHash!;
  const keyId = row.snapshotKeyId;
  if (key === undefined) return { hash: 'unverifiable' };
  const expected = snapshotHash(row.snapshot!, key);
  const foreign = keyId !== null && keyId !== key.id;
  if (expected === stored) {
    if (keyId === key.id) return { hash: 'checked' };
    const finding = opFinding(
      operationId,
      version,
      'key_id_mismatch',
      `snapshot_key_id ${key.id} (the key whose signature the snapshot carries)`,
      keyId === null ? 'no snapshot_key_id' : `snapshot_key_id ${keyId}`,
    );
    return { hash: 'checked', finding };
  }
  if (!foreign)
    return { hash: 'checked', finding: opFinding(operationId, version, 'snapshot_hash_mismatch', expected, stored) };
  if (!chainVerified) return { hash: 'unverifiable' };
  const finding = opFinding(
    operationId,
    version,
    'key_id_unknown',
    `a snapshot signed by ${key.id}, the key that verifies this operation's journal`,
    `snapshot_key_id ${keyId} (not configured), a signature ${key.id} does not verify`,
  );
  return { hash: 'checked', finding };
}

/** Checks an operations row's snapshot hash (see {@link SnapshotCheck}). */
export function snapshotHashVerdict(check: SnapshotCheck): SnapshotHashVerdict {
  const { operationId, row, version, key } = check;
  const stored = row.snapshotHash;
  // Every snapshot is written with its hash: one without was stripped of it.
  if (stored === null)
    return {
      hash: 'checked',
      finding: opFinding(operationId, version, 'snapshot_hash_missing', 'the hash written with the snapshot', 'none'),
    };
  if (isKeyed(stored)) return signedVerdict(check);
  if (key !== undefined || row.snapshotKeyId !== null) {
    return {
      hash: 'checked',
      finding: opFinding(
        operationId,
        version,
        'snapshot_unsigned',
        `hmac-sha256 with key ${row.snapshotKeyId ?? key!.id}`,
        stored,
      ),
    };
  }
  const expected = snapshotHash(row.snapshot!);
  return expected === stored
    ? { hash: 'checked' }
    : { hash: 'checked', finding: opFinding(operationId, version, 'snapshot_hash_mismatch', expected, stored) };
}
