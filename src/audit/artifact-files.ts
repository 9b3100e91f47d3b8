/**
 * Artifact files against the digest and size the journal recorded (issue 15, item 1), where the file is
 * reachable from where `audit verify` runs: a `file:` location naming a regular file. Anything else (another
 * scheme, a missing file, a device or FIFO named by an edited row) is counted as unreachable, never read.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type JournalEntry } from '../core/journal';
import { opFinding, type AuditFinding } from './findings';

/** What checking an operation's artifact files found. */
export interface ArtifactFileResult {
  readonly findings: AuditFinding[];
  readonly checked: number;
  readonly unreachable: number;
}

async function regularFile(location: string): Promise<string | undefined> {
  let path: string;
  try {
    const url = new URL(location);
    if (url.protocol !== 'file:') return undefined;
    path = fileURLToPath(url);
  } catch {
    return undefined;
  }
  try {
    return (await stat(path)).isFile() ? path : undefined;
  } catch {
    return undefined;
  }
}

async function digestOf(path: string): Promise<{ sha256: string; sizeBytes: number }> {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    sizeBytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), sizeBytes };
}

/** Hashes every reachable artifact file of an operation and compares it with its (hashed) journal entry. */
export async function checkArtifactFiles(
  operationId: string,
  entries: readonly JournalEntry[],
): Promise<ArtifactFileResult> {
  const findings: AuditFinding[] = [];
  let checked = 0;
  let unreachable = 0;
  for (const e of entries) {
    if (e.body.kind !== 'artifact') continue;
    const path = await regularFile(e.body.location);
    if (path === undefined) {
      unreachable += 1;
      continue;
    }
    checked += 1;
    const found = await digestOf(path);
    if (found.sha256 !== e.body.sha256 || found.sizeBytes !== e.body.sizeBytes) {
      findings.push(
        opFinding(
          operationId,
          e.sequence,
          'artifact_file_mismatch',
          `sha256 ${e.body.sha256}, ${e.body.sizeBytes} bytes`,
          `sha256 ${found.sha256}, ${found.sizeBytes} bytes in ${path}`,
        ),
      );
    }
  }
  return { findings, checked, unreachable };
}
