/**
 * Resolves which checkpoints a verification holds the store to: the ones given (`audit verify --against FILE`,
 * from outside the database) and the store's own register, each signature checked, linked into one chain
 * (sequence n names the digest of n-1), cross-checked (a given checkpoint must be recorded, identically), and
 * folded into anchors: every (operation, sequence, hash) any checkpoint in the chain pinned. The newest checkpoint
 * known from either source wins, so replaying an old checkpoint file cannot hide what a newer recorded one covers.
 */
import { type StoredCheckpoint } from '../adapters/store/audit-source';
import {
  checkpointDigest,
  checkSignature,
  headSetSummary,
  parseCheckpoint,
  type Checkpoint,
  type HeadSet,
  type ParsedCheckpoint,
} from './checkpoint';
import { checkpointFinding, type AuditFinding } from './findings';
import { keyNotConfigured, type CheckpointVerifier } from './keys';

/** A head a checkpoint pinned. */
export interface Anchor {
  readonly sequence: number;
  readonly hash: string;
  readonly checkpoint: number;
}

/** The outcome: findings, unverifiable signatures, notes, and what the store is held to. */
export interface ResolvedCheckpoints {
  readonly findings: AuditFinding[];
  readonly unverifiable: string[];
  readonly notes: string[];
  /** The newest checkpoint in the chain (null when there is none). */
  readonly newest: Checkpoint | null;
  /** Every operation's anchors, oldest first. */
  readonly anchors: Map<string, Anchor[]>;
  /** Every operation's head as of the newest checkpoint. */
  readonly heads: HeadSet;
}

interface Accepted {
  readonly checkpoint: Checkpoint;
  readonly digest: string;
  readonly where: string;
}

function accept(
  parsed: ParsedCheckpoint,
  verifier: CheckpointVerifier,
  out: ResolvedCheckpoints,
): Accepted | undefined {
  if (!parsed.ok) {
    out.findings.push(
      checkpointFinding(undefined, 'checkpoint_invalid', 'a checkpoint document', `${parsed.where}: ${parsed.problem}`),
    );
    return undefined;
  }
  const c = parsed.checkpoint;
  const signature = checkSignature(c, verifier);
  if (signature === 'unknown_key') {
    const line = `${keyNotConfigured(c.keyId, 'checkpoint')}: checkpoints signed by it not checked`;
    if (!out.unverifiable.includes(line)) out.unverifiable.push(line);
    return undefined;
  }
  if (signature === 'bad') {
    out.findings.push(
      checkpointFinding(
        c.sequence,
        'checkpoint_signature',
        `a valid ${c.alg} signature by ${c.keyId}`,
        `a signature that does not verify (${parsed.where})`,
      ),
    );
    return undefined;
  }
  return { checkpoint: c, digest: checkpointDigest(c), where: parsed.where };
}

function readRegister(
  register: readonly StoredCheckpoint[],
  verifier: CheckpointVerifier,
  out: ResolvedCheckpoints,
): Map<number, Accepted> {
  const recorded = new Map<number, Accepted>();
  for (const row of register) {
    const where = `the store's register, row ${row.sequence}`;
    const parsed = parseCheckpoint(row.document, where);
    if (
      parsed.ok &&
      (parsed.checkpoint.sequence !== row.sequence ||
        checkpointDigest(parsed.checkpoint) !== row.digest ||
        parsed.checkpoint.takenAt !== row.takenAt)
    ) {
      out.findings.push(
        checkpointFinding(
          row.sequence,
          'checkpoint_register',
          `row ${row.sequence} taken at ${row.takenAt} holding checkpoint ${row.sequence} with digest ${row.digest}`,
          `checkpoint ${parsed.checkpoint.sequence} taken at ${parsed.checkpoint.takenAt} with digest ${checkpointDigest(parsed.checkpoint)}`,
        ),
      );
      continue;
    }
    const accepted = accept(parsed, verifier, out);
    if (accepted) recorded.set(row.sequence, accepted);
  }
  return recorded;
}

function mergeGiven(
  given: readonly ParsedCheckpoint[],
  recorded: Map<number, Accepted>,
  verifier: CheckpointVerifier,
  out: ResolvedCheckpoints,
): Map<number, Accepted> {
  const chain = new Map<number, Accepted>();
  for (const parsed of given) {
    const a = accept(parsed, verifier, out);
    if (a === undefined) continue;
    const n = a.checkpoint.sequence;
    const twin = chain.get(n);
    if (twin !== undefined && twin.digest !== a.digest) {
      out.findings.push(
        checkpointFinding(
          n,
          'checkpoint_chain',
          `one checkpoint ${n} (${twin.where})`,
          `a different checkpoint ${n} (${a.where})`,
        ),
      );
      continue;
    }
    chain.set(n, a);
    const reg = recorded.get(n);
    if (reg === undefined)
      out.findings.push(
        checkpointFinding(
          n,
          'checkpoint_unrecorded',
          `checkpoint ${n} recorded in the store's register`,
          `no record of it (${a.where})`,
        ),
      );
    else if (reg.digest !== a.digest)
      out.findings.push(
        checkpointFinding(
          n,
          'checkpoint_register',
          `the given checkpoint ${n}, digest ${a.digest}`,
          `the register's, digest ${reg.digest}`,
        ),
      );
  }
  for (const [n, a] of recorded) if (!chain.has(n)) chain.set(n, a);
  return chain;
}

function fold(
  chain: Map<number, Accepted>,
  checkRootAt: ReadonlySet<number>,
  out: ResolvedCheckpoints,
): Checkpoint | null {
  const newestSequence = Math.max(0, ...chain.keys());
  let complete = true;
  let newest: Checkpoint | null = null;
  for (let n = 1; n <= newestSequence; n++) {
    const a = chain.get(n);
    if (a === undefined) {
      complete = false;
      out.findings.push(
        checkpointFinding(
          n,
          'checkpoint_missing',
          `checkpoint ${n} (named by checkpoint ${n + 1})`,
          "neither given nor in the store's register",
        ),
      );
      continue;
    }
    const c = a.checkpoint;
    const before = chain.get(n - 1);
    const previous = n === 1 ? null : (before?.digest ?? c.previous);
    if (c.previous !== previous)
      out.findings.push(
        checkpointFinding(
          n,
          'checkpoint_chain',
          `previous = ${previous ?? 'null (the first)'}`,
          `previous = ${c.previous ?? 'null'} (${a.where})`,
        ),
      );
    for (const [operationId, sequence, hash] of c.heads) {
      const held = out.heads.get(operationId);
      if (held !== undefined && (sequence < held[0] || (sequence === held[0] && hash !== held[1]))) {
        out.findings.push({
          ...checkpointFinding(
            n,
            'checkpoint_inconsistent',
            `${operationId} at or beyond sequence ${held[0]} with ${held[1]}`,
            `sequence ${sequence} with ${hash}`,
          ),
          operationId,
        });
      }
      out.heads.set(operationId, [sequence, hash]);
      const list = out.anchors.get(operationId) ?? [];
      list.push({ sequence, hash, checkpoint: n });
      out.anchors.set(operationId, list);
    }
    if (complete && (checkRootAt.has(n) || n === newestSequence)) {
      const summary = headSetSummary(out.heads);
      if (summary.root !== c.root || summary.operations !== c.operations || summary.entries !== c.entries) {
        out.findings.push(
          checkpointFinding(
            n,
            'checkpoint_inconsistent',
            `root ${c.root} over ${c.operations} operations, ${c.entries} entries`,
            `root ${summary.root} over ${summary.operations}, ${summary.entries} (folded from checkpoints 1-${n})`,
          ),
        );
      }
    }
    newest = c;
  }
  return newest;
}

/** Resolves the given checkpoints (may be none) and the store's register into one chain and its anchors. */
export function resolveCheckpoints(
  given: readonly ParsedCheckpoint[],
  register: readonly StoredCheckpoint[],
  verifier: CheckpointVerifier,
): ResolvedCheckpoints {
  const out: ResolvedCheckpoints = {
    findings: [],
    unverifiable: [],
    notes: [],
    newest: null,
    anchors: new Map(),
    heads: new Map(),
  };
  const recorded = readRegister(register, verifier, out);
  const chain = mergeGiven(given, recorded, verifier, out);
  const givenSequences = new Set(given.flatMap((g) => (g.ok ? [g.checkpoint.sequence] : [])));
  const newest = fold(chain, givenSequences, out);
  const newestGiven = Math.max(0, ...givenSequences);
  if (newest !== null && newestGiven > 0 && newest.sequence > newestGiven) {
    out.notes.push(
      `checkpoint ${newestGiven} was given; the store's register holds checkpoints up to ${newest.sequence}, so the store was held to ${newest.sequence}`,
    );
  }
  return { ...out, newest };
}
