/**
 * Artifact files against the digest and size the journal recorded, where the file is on this host. What counts:
 *
 * - hashed: a `file:` location naming a regular file; it must have the recorded digest and size;
 * - missing: a `file:` location on this host whose file is absent while the place it belongs is here: inside the
 *   configured artifact root (`ASYNCJOB_ARTIFACTS_DIR`) when that directory exists, or elsewhere when the file's
 *   own directory exists. A finding (`artifact_file_missing`), unless `--allow-missing-artifacts` (deliberate
 *   retention) turns it into a count the report states;
 * - an object store's location (`s3://bucket/key`) of the object store configured here (`ASYNCJOB_ARTIFACTS`):
 *   fetched and hashed the same way; an absent object is the same finding as an absent file. One that cannot be
 *   read (refused credentials, a 403 AccessDenied, an outage) is a finding of its own (`artifact_unreadable`,
 *   naming the error's name, code and HTTP status, never its message): an integrity check does not pass on what it
 *   is configured to check and could not read. `--allow-missing-artifacts` does not excuse it;
 * - unreachable from here: another scheme or another store's object, or a `file:` path whose directory is not on this host (another machine's store); counted, never a finding.
 *   Something that is not a regular file (a directory, a device or FIFO named by an edited row) is never read and
 *   counts as unreachable too.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, relative, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ArtifactStore } from '../adapters/artifacts/artifact-store';
import { type JournalEntry } from '../core/journal';
import { opFinding, type AuditFinding } from './findings';

/** What checking an operation's artifact files found. */
export interface ArtifactFileResult {
  readonly findings: AuditFinding[];
  readonly checked: number;
  readonly unreachable: number;
  /** Files missing from this host that were allowed (`allowMissing`), by location. */
  readonly allowedMissing: string[];
}

/** Where the artifact store lives on this host, and whether missing files are allowed (deliberate retention). */
export interface ArtifactFileOptions {
  /** The configured artifact root (`ASYNCJOB_ARTIFACTS_DIR`), absolute or relative to the working directory. */
  readonly root?: string;
  readonly allowMissing?: boolean;
  /** The object store configured here (`ASYNCJOB_ARTIFACTS`): its locations are fetched and hashed. */
  readonly objects?: ArtifactStore;
}

type Place =
  | { kind: 'file'; path: string }
  | { kind: 'missing'; path: string }
  | { kind: 'object'; found: { sha256: string; sizeBytes: number } }
  | { kind: 'unreadable'; error: string }
  | { kind: 'elsewhere' };

async function kindOf(path: string): Promise<'file' | 'other' | 'absent'> {
  try {
    return (await stat(path)).isFile() ? 'file' : 'other';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : 'other';
  }
}

const isDirectory = async (path: string): Promise<boolean> =>
  (await stat(path).catch(() => null))?.isDirectory() ?? false;

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel.length > 0 && !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * What a failed read was, for the report: the error's name, its code and the HTTP status it came with
 * (`AccessDenied (HTTP 403)`, `Error ECONNREFUSED`). Never its message, which a server or SDK may fill with anything.
 */
function errorOf(error: unknown): string {
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: unknown;
    code?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const code = typeof e.code === 'string' && e.code !== name ? ` ${e.code}` : '';
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? ` (HTTP ${e.$metadata.httpStatusCode})` : '';
  return `${name}${code}${status}`;
}

/** An object of the configured object store: hashed, absent (missing), or unreadable when the read fails. */
async function objectPlaceOf(location: string, objects: ArtifactStore): Promise<Place> {
  try {
    const found = await objects.describe(location);
    return found === undefined ? { kind: 'missing', path: location } : { kind: 'object', found };
  } catch (error) {
    return { kind: 'unreadable', error: errorOf(error) };
  }
}

async function placeOf(location: string, options: ArtifactFileOptions): Promise<Place> {
  if (!location.startsWith('file:') && options.objects?.holds(location) === true)
    return objectPlaceOf(location, options.objects);
  const root = options.root;
  let path: string;
  try {
    const url = new URL(location);
    if (url.protocol !== 'file:' || (url.hostname !== '' && url.hostname !== 'localhost')) return { kind: 'elsewhere' };
    path = fileURLToPath(url);
  } catch {
    return { kind: 'elsewhere' };
  }
  const kind = await kindOf(path);
  if (kind === 'file') return { kind: 'file', path };
  if (kind === 'other') return { kind: 'elsewhere' };
  const home = root !== undefined && inside(resolve(root), path) && (await isDirectory(resolve(root)));
  return home || (await isDirectory(dirname(path))) ? { kind: 'missing', path } : { kind: 'elsewhere' };
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

/** Hashes every artifact file of an operation found on this host and compares it with its (hashed) journal entry. */
export async function checkArtifactFiles(
  operationId: string,
  entries: readonly JournalEntry[],
  options: ArtifactFileOptions = {},
): Promise<ArtifactFileResult> {
  const result: ArtifactFileResult = { findings: [], checked: 0, unreachable: 0, allowedMissing: [] };
  let checked = 0;
  let unreachable = 0;
  for (const e of entries) {
    if (e.body.kind !== 'artifact') continue;
    const place = await placeOf(e.body.location, options);
    if (place.kind === 'elsewhere') {
      unreachable += 1;
      continue;
    }
    if (place.kind === 'missing') {
      if (options.allowMissing === true) result.allowedMissing.push(e.body.location);
      else
        result.findings.push(
          opFinding(
            operationId,
            e.sequence,
            'artifact_file_missing',
            `${e.body.sizeBytes} bytes at ${place.path}`,
            place.path.startsWith('s3:') ? 'no object' : 'no file',
          ),
        );
      continue;
    }
    if (place.kind === 'unreadable') {
      result.findings.push(
        opFinding(
          operationId,
          e.sequence,
          'artifact_unreadable',
          `${e.body.sizeBytes} bytes at ${e.body.location}`,
          `not read: ${place.error}`,
        ),
      );
      continue;
    }
    checked += 1;
    const found = place.kind === 'object' ? place.found : await digestOf(place.path);
    const where = place.kind === 'object' ? e.body.location : place.path;
    if (found.sha256 !== e.body.sha256 || found.sizeBytes !== e.body.sizeBytes) {
      result.findings.push(
        opFinding(
          operationId,
          e.sequence,
          'artifact_file_mismatch',
          `sha256 ${e.body.sha256}, ${e.body.sizeBytes} bytes`,
          `sha256 ${found.sha256}, ${found.sizeBytes} bytes in ${where}`,
        ),
      );
    }
  }
  return { ...result, checked, unreachable };
}
