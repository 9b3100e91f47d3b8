/**
 * `asyncjob audit checkpoint`: signs the next checkpoint over the journal's own heads (never the operations
 * table's copy), after checking, as RFC 9162 asks of a new tree head, that it is consistent with the previous
 * one: every operation the register's checkpoints anchored is still there, at or beyond its anchored head, still
 * reaching the anchored hash; and every operation that changed since has an intact chain up to its new head.
 * A store that fails is refused a checkpoint (a checkpoint never blesses a truncation). The checkpoint is recorded
 * in the store's register first, then written out by the caller.
 */
import { type AuditSource } from '../adapters/store/audit-source';
import { verifyOperationRows, type ChainKey } from '../adapters/store/chain';
import { buildCheckpoint, checkpointDigest, type Checkpoint, type HeadSet } from './checkpoint';
import { resolveCheckpoints } from './checkpoint-chain';
import { checkAnchors } from './coverage';
import { fromChainBreak, type AuditFinding } from './findings';
import { type CheckpointSigner, type CheckpointVerifier } from './keys';

/** The outcome of taking a checkpoint. */
export type CheckpointOutcome =
  | { readonly kind: 'taken'; readonly checkpoint: Checkpoint }
  | { readonly kind: 'refused'; readonly findings: AuditFinding[]; readonly unverifiable: string[] }
  | { readonly kind: 'busy'; readonly sequence: number };

/** What taking a checkpoint needs. */
export interface TakeCheckpointInput {
  readonly signer: CheckpointSigner;
  readonly verifier: CheckpointVerifier;
  readonly key?: ChainKey;
  readonly now: () => Date;
}

async function changedOperationFindings(
  source: AuditSource,
  base: HeadSet,
  current: HeadSet,
  anchors: ReturnType<typeof resolveCheckpoints>['anchors'],
  key: ChainKey | undefined,
): Promise<AuditFinding[]> {
  const findings: AuditFinding[] = [];
  const ids = new Set([...base.keys(), ...current.keys()]);
  for (const id of [...ids].sort()) {
    const before = base.get(id);
    const now = current.get(id);
    if (before !== undefined && now !== undefined && before[0] === now[0] && before[1] === now[1]) continue;
    const data = await source.readOperation(id);
    const through = now?.[0] ?? 0;
    const rows = data.journal.filter((r) => r.sequence <= through);
    findings.push(...checkAnchors(id, rows, anchors.get(id) ?? []));
    if (now === undefined) continue;
    const chain = verifyOperationRows(id, rows, { lastSequence: now[0], lastHash: now[1] }, key);
    if (chain.break) findings.push(fromChainBreak(chain.break));
  }
  return findings;
}

/** Takes the next checkpoint of the store, or says why not. */
export async function takeCheckpoint(source: AuditSource, input: TakeCheckpointInput): Promise<CheckpointOutcome> {
  const resolved = resolveCheckpoints([], await source.checkpoints(), input.verifier);
  if (resolved.findings.length > 0 || resolved.unverifiable.length > 0)
    return { kind: 'refused', findings: resolved.findings, unverifiable: resolved.unverifiable };
  const current: HeadSet = new Map(
    (await source.journalHeads()).map((h) => [h.operationId, [h.sequence, h.hash] as const]),
  );
  const findings = await changedOperationFindings(source, resolved.heads, current, resolved.anchors, input.key);
  if (findings.length > 0) return { kind: 'refused', findings, unverifiable: [] };
  const checkpoint = buildCheckpoint({
    previous: resolved.newest,
    base: resolved.heads,
    current,
    takenAt: input.now().toISOString(),
    signer: input.signer,
  });
  const recorded = await source.recordCheckpoint({
    sequence: checkpoint.sequence,
    takenAt: checkpoint.takenAt,
    digest: checkpointDigest(checkpoint),
    document: JSON.stringify(checkpoint),
  });
  return recorded === 'recorded' ? { kind: 'taken', checkpoint } : { kind: 'busy', sequence: checkpoint.sequence };
}
