/** `asyncjob audit verify`: reads the keys, the checkpoints given and the witness, runs the audit, reports it. */
import { readFile } from 'node:fs/promises';
import type { ArtifactStore } from '../adapters/artifacts/artifact-store';
import { artifactSettingsOf, openArtifactStore } from '../adapters/artifacts/open-artifact-store';
import { type ChainKey } from '../adapters/store/chain';
import { type OperationStore } from '../adapters/store/operation-store';
import { configSchema } from '../config';
import { runAudit } from './auditor';
import { parseCheckpointFile, type ParsedCheckpoint } from './checkpoint';
import { resolveCheckpoints } from './checkpoint-chain';
import { AUDIT_EXIT, type AuditIo, type ParsedArgs } from './io';
import { readCheckpointVerifier } from './keys';
import { connectTemporalWitness, type TemporalWitness } from './temporal-witness';
import { formatVerifyText, verifyJson } from './verify';

/** Where the worker keeps artifact files unless ASYNCJOB_ARTIFACTS_DIR says otherwise: the schema's default. */
const DEFAULT_ARTIFACTS_DIR = configSchema.shape.ASYNCJOB_ARTIFACTS_DIR.parse(undefined);

async function readCheckpointFiles(files: readonly string[], io: AuditIo): Promise<ParsedCheckpoint[] | undefined> {
  const all: ParsedCheckpoint[] = [];
  for (const file of files) {
    try {
      all.push(...parseCheckpointFile(await readFile(file, 'utf8'), file));
    } catch (err) {
      io.stderr(
        `asyncjob audit: --against ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})\n`,
      );
      return undefined;
    }
  }
  return all;
}

/** The object store `ASYNCJOB_ARTIFACTS` names here, if any; a bad setting is reported and answers null. */
function objectStoreOf(io: AuditIo): ArtifactStore | undefined | null {
  try {
    const settings = artifactSettingsOf(io.env);
    return settings.ASYNCJOB_ARTIFACTS === undefined ? undefined : openArtifactStore(settings, io.env);
  } catch (err) {
    io.stderr(`asyncjob audit: ${err instanceof Error ? err.message : String(err)}\n`);
    return null;
  }
}

/** Runs `audit verify`; returns the exit code. */
export async function runVerify(
  store: OperationStore,
  args: ParsedArgs,
  key: ChainKey | undefined,
  io: AuditIo,
): Promise<number> {
  const given = await readCheckpointFiles(args.against, io);
  if (given === undefined) return AUDIT_EXIT.usage;
  const objects = objectStoreOf(io);
  if (objects === null) return AUDIT_EXIT.usage;
  const source = store.auditSource();
  const checkpoints = resolveCheckpoints(given, await source.checkpoints(), await readCheckpointVerifier(io.env, key));
  let witness: (TemporalWitness & { close(): Promise<void> }) | undefined;
  let witnessMissing: string | undefined;
  try {
    if (args.withTemporal) {
      // The witness degrades, never aborts: without a server the store is still checked, and the report says why
      // the histories were not read.
      witness = await connectTemporalWitness(io.env as NodeJS.ProcessEnv).catch((err: unknown) => {
        witnessMissing = `Temporal witness unavailable: ${err instanceof Error ? err.message : String(err)}`;
        return undefined;
      });
    }
    const report = await runAudit(source, {
      ...(args.operationId !== undefined ? { operationId: args.operationId } : {}),
      ...(key ? { key } : {}),
      checkpoints,
      ...(witness ? { witness } : {}),
      ...(io.settleMs !== undefined ? { settleMs: io.settleMs } : {}),
      artifactRoot: io.env.ASYNCJOB_ARTIFACTS_DIR ?? DEFAULT_ARTIFACTS_DIR,
      allowMissingArtifacts: args.allowMissingArtifacts === true,
      ...(objects !== undefined ? { artifactObjects: objects } : {}),
    });
    if (witnessMissing !== undefined) report.unverifiable.push(witnessMissing);
    if (args.operationId !== undefined && report.counts.operationsChecked === 0) {
      io.stderr(`asyncjob audit: nothing is recorded for operation ${args.operationId}\n`);
      return AUDIT_EXIT.usage;
    }
    const keyId = key?.id ?? null;
    io.stdout(args.json ? `${JSON.stringify(verifyJson(report, keyId), null, 2)}\n` : formatVerifyText(report, keyId));
    if (report.findings.length > 0) return AUDIT_EXIT.brokenChain;
    return report.unverifiable.length > 0 ? AUDIT_EXIT.usage : AUDIT_EXIT.ok;
  } finally {
    await witness?.close();
  }
}
