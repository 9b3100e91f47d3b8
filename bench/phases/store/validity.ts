/**
 * Figure 6's validity checks: the fill's spliced rows against the store's own functions (before the fill), and
 * what the timed steps left in the store (after them).
 */
import { snapshotOf } from '../../../src/activities/journal-writer';
import { entryHash, GENESIS_HASH, snapshotHash, type ChainKey } from '../../../src/adapters/store/chain';
import { prepareEntry, prepareSnapshot, type OperationStore } from '../../../src/adapters/store/operation-store';
import { filledRows, marked } from './filled-rows';
import {
  filledRecord,
  TEMPLATE_JOB,
  TEMPLATE_OPERATION,
  type FilledOperation,
  type PlannedStep,
  type Template,
} from './template';

/**
 * Holds one filled operation's spliced rows to what the store itself would write for the same entries and
 * snapshot (`prepareEntry`, `entryHash`, `columnsOf`, `prepareSnapshot`, `snapshotHash`); throws on any difference.
 */
export function checkFill(template: Template, op: FilledOperation, key: ChainKey): void {
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

/**
 * Checks what the timed steps left: every timed operation's chain head and snapshot where its last step put
 * them, and the whole chain (filled entries and timed ones) of a sample verified with the key. Returns how many
 * chains were verified.
 */
export async function checkStored(store: OperationStore, steps: readonly PlannedStep[]): Promise<number> {
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
