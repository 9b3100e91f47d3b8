/**
 * What `asyncjob audit verify` can find, as data: one {@link AuditFinding} per problem, naming the operation and
 * the first bad sequence (or the missing range), or the checkpoint. Stable names: only ever added.
 */
import { type ChainBreak, type ChainProblem } from '../adapters/store/chain';

/** Every kind of finding. */
export type AuditProblem =
  | ChainProblem
  | 'column_mismatch'
  | 'operation_row_mismatch'
  | 'snapshot_mismatch'
  | 'snapshot_hash_mismatch'
  | 'snapshot_unsigned'
  | 'snapshot_hash_missing'
  | 'snapshot_ahead'
  | 'snapshot_behind'
  | 'artifact_row_mismatch'
  | 'artifact_row_missing'
  | 'artifact_file_mismatch'
  | 'artifact_file_missing'
  | 'artifact_unreadable'
  | 'artifact_row_orphan'
  | 'job_link_missing'
  | 'append_only_guard_missing'
  | 'job_link_unsupported'
  | 'operation_missing'
  | 'truncated'
  | 'anchor_mismatch'
  | 'checkpoint_invalid'
  | 'checkpoint_signature'
  | 'checkpoint_chain'
  | 'checkpoint_unrecorded'
  | 'checkpoint_register'
  | 'checkpoint_missing'
  | 'checkpoint_inconsistent'
  | 'temporal_missing'
  | 'temporal_mismatch'
  | 'decision_policy_mismatch'
  | 'decision_signature_invalid'
  | 'decision_not_allowed'
  | 'decision_rule_mismatch'
  | 'decision_unsigned'
  | 'decision_by_agent'
  | 'decision_self_approval';

/** What each problem means, for the text report. */
export const PROBLEM_DESCRIPTIONS: Readonly<Record<AuditProblem, string>> = {
  hash_mismatch: 'the entry was changed after it was written (its hash no longer matches its content)',
  prev_link_mismatch: 'the entry no longer links to the entry before it (an earlier entry was rewritten or replaced)',
  gap: 'an entry is missing (deleted) before this sequence',
  missing_head:
    'the chain ends before the recorded head (entries were deleted from the end) or the head record is missing',
  unsigned_entry:
    'a plain SHA-256 entry where a signed one belongs (rewritten by someone without the key, or written before the key was set)',
  key_id_mismatch:
    'the key ID names another key than the one whose signature the entry or snapshot carries (the key ID was edited)',
  key_id_unknown:
    "the entry or snapshot names a key that is not configured while the configured key verifies the operation's other records (edited, with an invented key ID)",
  column_mismatch: 'a journal column differs from the hashed entry it is copied from (the column was edited)',
  operation_row_mismatch: 'a column of the operation row differs from its snapshot (the row was edited)',
  snapshot_mismatch: 'the snapshot disagrees with the journal entries it accounts for (state or facts were edited)',
  snapshot_hash_mismatch: 'the snapshot was changed after it was written (its hash no longer matches)',
  snapshot_unsigned: 'a plain snapshot hash where the chain key is configured (rewritten without the key)',
  snapshot_hash_missing: 'the snapshot has no hash: every snapshot is written with one, so it was removed',
  snapshot_ahead: 'the snapshot accounts for entries the journal no longer holds (entries were deleted from the end)',
  snapshot_behind:
    'the snapshot lags the journal (an older snapshot was put back, or a worker died between the two writes)',
  artifact_row_mismatch:
    'the artifacts table differs from the artifact entry it copies (digest, size or location edited)',
  artifact_row_missing: 'an artifact entry has no row in the artifacts table (deleted)',
  artifact_file_mismatch: 'the artifact file no longer has the digest or size the journal recorded',
  artifact_file_missing:
    'the artifact file is gone from this host (its folder is here, the file is not; --allow-missing-artifacts for deliberate retention)',
  artifact_unreadable:
    'an object of the object store configured here could not be read (credentials, permissions or an outage), so it was not checked',
  artifact_row_orphan:
    'an artifacts row has no journal entry at its sequence (the entry was deleted, or the row forged)',
  job_link_missing: 'a job the journal named has no link in the webhook lookup (operation_jobs row deleted)',
  append_only_guard_missing:
    'a trigger refusing UPDATE or DELETE of an append-only table is gone, disabled or no longer refuses (dropped to edit rows)',
  job_link_unsupported: 'the webhook lookup links a provider job this operation never named',
  operation_missing: 'the operation is gone: a witness knows it, the store holds none of its journal',
  truncated: 'entries a witness covered are missing from the store (deleted)',
  anchor_mismatch: 'the chain no longer reaches the hash a checkpoint anchored (history rewritten in this range)',
  checkpoint_invalid: 'not a checkpoint document',
  checkpoint_signature: 'the checkpoint signature does not verify (the checkpoint was edited)',
  checkpoint_chain: 'the checkpoint does not follow the one before it (edited, replayed or out of order)',
  checkpoint_unrecorded:
    'the store has no record of this checkpoint (its register was cut back, or the checkpoint is from another store)',
  checkpoint_register: "the store's record of this checkpoint differs from it (the register was edited)",
  checkpoint_missing: 'a checkpoint in the middle of the chain is neither given nor recorded',
  checkpoint_inconsistent: 'a later checkpoint shows a shorter or different chain than an earlier one',
  temporal_missing: "entries the workflow's history shows were recorded are missing from the store",
  temporal_mismatch: "the stored entry differs from the one in the workflow's history",
  decision_policy_mismatch:
    'the decision names another decider policy than the intent records, or the recorded policy no longer has its digest (the policy or the decision was edited)',
  decision_signature_invalid:
    "the decision's signature does not verify with the decider's keys in the recorded policy over the decision as recorded (a field, the decider or the signature was changed)",
  decision_not_allowed:
    'no rule of the recorded decider policy allows this decider this option on this escalation within these bounds (forged or edited)',
  decision_rule_mismatch:
    'the decision names another rule than the one the recorded policy allows it by (the rule was edited)',
  decision_unsigned:
    'the recorded policy requires this decision signed and it carries no signature (the signature was removed)',
  decision_by_agent:
    'an agent granted something: agents ask and only decline (keep_bounds), people grant (forged or edited)',
  decision_self_approval:
    'the one who asked for the escalation granted it (in canonical form); they may only withdraw it (forged or edited)',
};

/**
 * One finding. `operationId` is null for a finding about a checkpoint itself; `sequence` is the first bad
 * sequence (or the first missing one, with `through` the last); `checkpoint` names the checkpoint concerned.
 */
export interface AuditFinding {
  readonly operationId: string | null;
  readonly sequence: number | null;
  readonly through?: number;
  readonly checkpoint?: number;
  /** The table a finding about the store's schema names (append-only triggers). */
  readonly table?: string;
  readonly problem: AuditProblem;
  readonly expected: string;
  readonly found: string;
}

/** A finding about one operation. */
export function opFinding(
  operationId: string,
  sequence: number,
  problem: AuditProblem,
  expected: string,
  found: string,
  extra: { through?: number; checkpoint?: number } = {},
): AuditFinding {
  return {
    operationId,
    sequence,
    ...(extra.through !== undefined && extra.through !== sequence ? { through: extra.through } : {}),
    ...(extra.checkpoint !== undefined ? { checkpoint: extra.checkpoint } : {}),
    problem,
    expected,
    found,
  };
}

/** A finding about a checkpoint. */
export function checkpointFinding(
  checkpoint: number | undefined,
  problem: AuditProblem,
  expected: string,
  found: string,
): AuditFinding {
  return {
    operationId: null,
    sequence: null,
    ...(checkpoint !== undefined ? { checkpoint } : {}),
    problem,
    expected,
    found,
  };
}

/** A finding about a table of the store (not one operation's records). */
export function tableFinding(table: string, problem: AuditProblem, expected: string, found: string): AuditFinding {
  return { operationId: null, sequence: null, table, problem, expected, found };
}

/** A chain break as a finding. */
export function fromChainBreak(b: ChainBreak): AuditFinding {
  return { operationId: b.operationId, sequence: b.sequence, problem: b.problem, expected: b.expected, found: b.found };
}

/** Where a finding is: `operation X at sequence 4`, `operation X, sequences 8-9`, `checkpoint 5`. */
export function findingPlace(f: AuditFinding): string {
  if (f.operationId === null) return f.table !== undefined ? `table ${f.table}` : `checkpoint ${f.checkpoint ?? '?'}`;
  const where =
    f.through !== undefined
      ? `, sequences ${f.sequence}-${f.through}`
      : f.sequence !== null
        ? ` at sequence ${f.sequence}`
        : '';
  return `operation ${f.operationId}${where}${f.checkpoint !== undefined ? ` (checkpoint ${f.checkpoint})` : ''}`;
}
