/**
 * Checkpoints: signed statements of what the store held, kept outside the database, so truncation and
 * whole-operation removal are found later. Modelled on RFC 9162's signed tree heads, adapted to a verifier that
 * reads the whole store anyway (so it needs no inclusion proofs, only the anchors):
 *
 *   { schema, sequence, takenAt, previous, operations, entries, root, heads, alg, keyId, signature }
 *
 * - `heads`: `[operationId, lastSequence, lastHash]` of every operation whose journal head changed since the
 *   previous checkpoint (all of them in the first). Folding the heads of checkpoints 1..n gives every operation's
 *   head as of checkpoint n; a head only ever moves forward.
 * - `root`: the RFC 9162 Merkle tree hash over that folded set (leaves sorted by operation ID), so checkpoint n
 *   alone pins the whole set; `operations` and `entries` are its size (entries = sum of head sequences).
 * - `previous`: the digest (SHA-256 of the canonical JSON, signature included) of checkpoint n-1, null for the
 *   first: checkpoints form a chain, so an edited, dropped or replayed one breaks a link.
 * - `signature`: Ed25519 (public half verifies offline) or HMAC-SHA256 over the canonical JSON without `signature`.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { issueText } from '../core/issues';
import { canonicalJson } from '../core/canonical-json';
import { type CheckpointSigner, type CheckpointVerifier } from './keys';

/** The schema name of a checkpoint document. */
const CHECKPOINT_SCHEMA = 'asyncjob.audit-checkpoint/v1';

const digestPattern = /^sha256:[0-9a-f]{64}$/;
const headSchema = z.tuple([
  z.string().min(1).max(200),
  z.number().int().positive(),
  z.string().regex(/^(sha256|hmac-sha256):[0-9a-f]{64}$/),
]);

/** A checkpoint document. */
const checkpointSchema = z
  .object({
    schema: z.literal(CHECKPOINT_SCHEMA),
    sequence: z.number().int().positive(),
    takenAt: z.iso.datetime({ offset: false }),
    previous: z.string().regex(digestPattern).nullable(),
    operations: z.number().int().nonnegative(),
    entries: z.number().int().nonnegative(),
    root: z.string().regex(digestPattern),
    heads: z.array(headSchema),
    alg: z.enum(['ed25519', 'hmac-sha256']),
    keyId: z.string().min(1).max(100),
    signature: z.string().min(1).max(200),
  })
  .strict();
/** A checkpoint. */
export type Checkpoint = z.infer<typeof checkpointSchema>;
/** One anchored head: operation, last sequence, the hash of that entry. */
type CheckpointHead = z.infer<typeof headSchema>;
/** Every operation's head as of a checkpoint: operation ID -> [sequence, hash]. */
export type HeadSet = Map<string, readonly [number, string]>;

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();

/** RFC 9162 section 2.1.1 Merkle tree hash over `leaves` (already encoded). */
export function merkleRoot(leaves: readonly Buffer[]): string {
  const mth = (from: number, to: number): Buffer => {
    const n = to - from;
    if (n === 0) return sha256(Buffer.alloc(0));
    if (n === 1) return sha256(Buffer.concat([Buffer.from([0]), leaves[from]!]));
    let k = 1;
    while (k * 2 < n) k *= 2;
    return sha256(Buffer.concat([Buffer.from([1]), mth(from, from + k), mth(from + k, to)]));
  };
  return `sha256:${mth(0, leaves.length).toString('hex')}`;
}

/** The root, operation count and entry count of a head set. */
export function headSetSummary(heads: HeadSet): { root: string; operations: number; entries: number } {
  const ids = [...heads.keys()].sort();
  let entries = 0;
  const leaves = ids.map((id) => {
    const [sequence, hash] = heads.get(id)!;
    entries += sequence;
    return Buffer.from(canonicalJson([id, sequence, hash]), 'utf8');
  });
  return { root: merkleRoot(leaves), operations: ids.length, entries };
}

/** The digest that the next checkpoint names as `previous`. */
export function checkpointDigest(checkpoint: Checkpoint): string {
  return `sha256:${sha256(canonicalJson(checkpoint)).toString('hex')}`;
}

function signedBytes(checkpoint: Omit<Checkpoint, 'signature'>): Buffer {
  const { signature: _signature, ...payload } = checkpoint as Checkpoint;
  return Buffer.from(canonicalJson(payload), 'utf8');
}

/** Builds and signs checkpoint `sequence` over `current` (every head now), given the previous one and its folded set. */
export function buildCheckpoint(input: {
  readonly previous: Checkpoint | null;
  readonly base: HeadSet;
  readonly current: HeadSet;
  readonly takenAt: string;
  readonly signer: CheckpointSigner;
}): Checkpoint {
  const heads: CheckpointHead[] = [];
  for (const id of [...input.current.keys()].sort()) {
    const [sequence, hash] = input.current.get(id)!;
    const before = input.base.get(id);
    if (before === undefined || before[0] !== sequence || before[1] !== hash) heads.push([id, sequence, hash]);
  }
  const summary = headSetSummary(input.current);
  const unsigned = {
    schema: CHECKPOINT_SCHEMA,
    sequence: (input.previous?.sequence ?? 0) + 1,
    takenAt: input.takenAt,
    previous: input.previous === null ? null : checkpointDigest(input.previous),
    ...summary,
    heads,
    alg: input.signer.alg,
    keyId: input.signer.keyId,
  } as const;
  return { ...unsigned, signature: input.signer.sign(signedBytes(unsigned)) };
}

/** Checks a checkpoint's signature: `unknown_key` when no configured key has its key ID. */
export function checkSignature(checkpoint: Checkpoint, verifier: CheckpointVerifier): 'ok' | 'bad' | 'unknown_key' {
  const verdict = verifier.verify(checkpoint.keyId, checkpoint.alg, signedBytes(checkpoint), checkpoint.signature);
  return verdict === null ? 'unknown_key' : verdict ? 'ok' : 'bad';
}

/** A checkpoint read from a file or the register, or why it could not be read. */
export type ParsedCheckpoint =
  | { readonly ok: true; readonly checkpoint: Checkpoint; readonly where: string }
  | { readonly ok: false; readonly where: string; readonly problem: string };

/** Parses one document. `where` names it for reports (`FILE line 3`, `register row 5`). */
export function parseCheckpoint(text: string, where: string): ParsedCheckpoint {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, where, problem: 'not JSON' };
  }
  const parsed = checkpointSchema.safeParse(value);
  if (!parsed.success)
    return {
      ok: false,
      where,
      problem: issueText(parsed.error.issues, '(root)'),
    };
  return { ok: true, checkpoint: parsed.data, where };
}

/** Parses a checkpoint file: one JSON document, or JSON lines (what `audit checkpoint --out` appends). */
export function parseCheckpointFile(text: string, name: string): ParsedCheckpoint[] {
  let oneDocument = true;
  try {
    JSON.parse(text);
  } catch {
    oneDocument = !text.trim().includes('\n');
  }
  if (oneDocument) return [parseCheckpoint(text, name)];
  return text
    .split('\n')
    .map((line, i) => ({ line, where: `${name} line ${i + 1}` }))
    .filter(({ line }) => line.trim().length > 0)
    .map(({ line, where }) => parseCheckpoint(line, where));
}

/** One JSON line for a checkpoint (what is written to stdout or appended to a file). */
export function checkpointLine(checkpoint: Checkpoint): string {
  return `${canonicalJson(checkpoint)}\n`;
}
