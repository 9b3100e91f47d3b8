/** `asyncjob audit checkpoint [--out FILE]`: takes the next signed checkpoint and writes it outside the database. */
import { appendFile } from 'node:fs/promises';
import { type ChainKey } from '../adapters/store/chain';
import { type OperationStore } from '../adapters/store/operation-store';
import { checkpointLine } from './checkpoint';
import { AUDIT_EXIT, type AuditIo, type ParsedArgs } from './io';
import { AUDIT_KEY_SETTINGS, readCheckpointSigner, readCheckpointVerifier } from './keys';
import { takeCheckpoint } from './take-checkpoint';
import { formatBreak } from './verify';

/** Runs `audit checkpoint`; returns the exit code. */
export async function runCheckpoint(
  store: OperationStore,
  args: ParsedArgs,
  key: ChainKey | undefined,
  io: AuditIo,
): Promise<number> {
  const signer = await readCheckpointSigner(io.env, key);
  if (signer === undefined) {
    io.stderr(
      `asyncjob audit: cannot sign a checkpoint: no key configured (set ${AUDIT_KEY_SETTINGS.signing.file} to an Ed25519 private key, or ${AUDIT_KEY_SETTINGS.hmac.file})\n`,
    );
    return AUDIT_EXIT.usage;
  }
  const outcome = await takeCheckpoint(store.auditSource(), {
    signer,
    verifier: await readCheckpointVerifier(io.env, key),
    ...(key ? { key } : {}),
    now: () => new Date(),
  });
  if (outcome.kind === 'busy') {
    io.stderr(`asyncjob audit: another checkpoint ${outcome.sequence} was recorded at the same time; run again\n`);
    return AUDIT_EXIT.usage;
  }
  if (outcome.kind === 'refused') {
    const lines = [...outcome.findings.map(formatBreak), ...outcome.unverifiable.map((u) => `UNCHECKED: ${u}`)];
    io.stdout(
      `${lines.join('\n')}\nREFUSED: no checkpoint signed: the store does not hold what the previous checkpoints covered, or they cannot be checked\n`,
    );
    return outcome.findings.length > 0 ? AUDIT_EXIT.brokenChain : AUDIT_EXIT.usage;
  }
  const c = outcome.checkpoint;
  const line = checkpointLine(c);
  const summary = `checkpoint ${c.sequence} (${c.takenAt}): ${c.operations} operations, ${c.entries} entries, ${c.heads.length} heads changed, root ${c.root}, signed ${c.alg} by ${c.keyId}`;
  if (args.out !== undefined) {
    await appendFile(args.out, line, { encoding: 'utf8', mode: 0o644 });
    io.stdout(`${summary}; appended to ${args.out}\n`);
  } else {
    io.stdout(line);
    io.stderr(`${summary}\n`);
  }
  return AUDIT_EXIT.ok;
}
