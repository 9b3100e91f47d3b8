/**
 * Holds an operation's stored journal to what witnesses saw: the anchors of the checkpoints
 * (every sequence up to each anchored head must still be there, with the anchored hash at the head) and the
 * entries Temporal's history shows were recorded. Reports the first missing range or the first anchor the chain
 * no longer reaches. Pure.
 */
import { type AuditJournalRow } from '../adapters/store/audit-source';
import { canonicalJson } from '../core/canonical-json';
import { journalEntryBodySchema } from '../core/journal';
import { type Anchor } from './checkpoint-chain';
import { opFinding, type AuditFinding } from './findings';
import { type WitnessedOperation } from './temporal-witness';

/** The first run of sequences in 1..`through` that `present` lacks, or undefined. */
function firstMissingRange(present: ReadonlySet<number>, through: number): { from: number; to: number } | undefined {
  for (let s = 1; s <= through; s++) {
    if (present.has(s)) continue;
    let to = s;
    while (to + 1 <= through && !present.has(to + 1)) to += 1;
    return { from: s, to };
  }
  return undefined;
}

/** The store's journal of one operation against every anchor the checkpoints pinned for it. */
export function checkAnchors(
  operationId: string,
  rows: readonly AuditJournalRow[],
  anchors: readonly Anchor[],
): AuditFinding[] {
  if (anchors.length === 0) return [];
  const newest = anchors.reduce((a, b) => (b.sequence >= a.sequence ? b : a));
  if (rows.length === 0) {
    return [
      opFinding(
        operationId,
        1,
        'operation_missing',
        `sequences 1-${newest.sequence} (checkpoint ${newest.checkpoint} covered them)`,
        'no journal rows at all',
        {
          through: newest.sequence,
          checkpoint: newest.checkpoint,
        },
      ),
    ];
  }
  const findings: AuditFinding[] = [];
  const bySequence = new Map(rows.map((r) => [r.sequence, r]));
  const missing = firstMissingRange(new Set(bySequence.keys()), newest.sequence);
  if (missing !== undefined) {
    const covering = anchors.find((a) => a.sequence >= missing.from) ?? newest;
    findings.push(
      opFinding(
        operationId,
        missing.from,
        'truncated',
        `sequences 1-${newest.sequence} (checkpoint ${covering.checkpoint} covered through ${covering.sequence})`,
        `the store holds ${rows.length} entries; sequences ${missing.from}-${missing.to} are missing`,
        {
          through: missing.to,
          checkpoint: covering.checkpoint,
        },
      ),
    );
  }
  let lastGood = 0;
  for (const a of [...anchors].sort((x, y) => x.sequence - y.sequence)) {
    const row = bySequence.get(a.sequence);
    if (row === undefined) continue;
    if (row.hash !== a.hash) {
      findings.push(
        opFinding(operationId, lastGood + 1, 'anchor_mismatch', `${a.hash} at sequence ${a.sequence}`, row.hash, {
          through: a.sequence,
          checkpoint: a.checkpoint,
        }),
      );
      break;
    }
    lastGood = a.sequence;
  }
  return findings;
}

function sameEntry(row: AuditJournalRow, seen: { at: string; actor: string; body: unknown }): boolean {
  if (row.entry === null) return true; // an unreadable row is the chain's finding
  const body = journalEntryBodySchema.safeParse(seen.body);
  return (
    body.success &&
    row.entry.at === seen.at &&
    row.entry.actor === seen.actor &&
    canonicalJson(row.entry.body) === canonicalJson(body.data)
  );
}

/** The store's journal of one operation against what its Temporal history shows was recorded. */
export function checkWitness(
  operationId: string,
  rows: readonly AuditJournalRow[],
  seen: WitnessedOperation,
): AuditFinding[] {
  if (seen.reached === 0) return [];
  if (rows.length === 0) {
    return [
      opFinding(
        operationId,
        1,
        'operation_missing',
        `sequences 1-${seen.reached} (Temporal's history shows them recorded)`,
        'no journal rows at all',
        { through: seen.reached },
      ),
    ];
  }
  const findings: AuditFinding[] = [];
  const bySequence = new Map(rows.map((r) => [r.sequence, r]));
  const missing = firstMissingRange(new Set(bySequence.keys()), seen.reached);
  if (missing !== undefined) {
    findings.push(
      opFinding(
        operationId,
        missing.from,
        'temporal_missing',
        `sequences 1-${seen.reached} (Temporal's history shows them recorded)`,
        `sequences ${missing.from}-${missing.to} are missing`,
        {
          through: missing.to,
        },
      ),
    );
  }
  for (const entry of [...seen.entries.values()].sort((a, b) => a.sequence - b.sequence)) {
    const row = bySequence.get(entry.sequence);
    if (row !== undefined && !sameEntry(row, entry)) {
      findings.push(
        opFinding(
          operationId,
          entry.sequence,
          'temporal_mismatch',
          canonicalJson({ at: entry.at, actor: entry.actor, body: entry.body }).slice(0, 300),
          canonicalJson({ at: row.entry!.at, actor: row.entry!.actor, body: row.entry!.body }).slice(0, 300),
        ),
      );
      break;
    }
  }
  return findings;
}
