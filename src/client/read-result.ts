/**
 * Reading a collected result back, from any machine that reaches the artifact store: the bytes as the store gives
 * them, checked on the way against the sha256 and size the workflow recorded when it validated them (R2). The
 * stream passes bytes on as they arrive and fails at its end (or as soon as more bytes arrive than were recorded)
 * when they do not match, so a reader keeps nothing before the stream has ended without an error.
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import type { ArtifactStore } from '../adapters/artifacts/artifact-store';
import type { OperationRecord } from '../core/operation';
import { ResultUnavailableError } from './errors';

/** What the workflow recorded of a stored result. */
export interface RecordedResult {
  /** `file://...` or `s3://bucket/key`. */
  location: string;
  /** Hex sha256 of the bytes. */
  sha256: string;
  /** Absent in a record that did not keep it: then only the hash is checked. */
  sizeBytes?: number;
}

/** The stored result an operation's record names; throws {@link ResultUnavailableError} (`no_result`). */
export function recordedResultOf(record: OperationRecord): RecordedResult {
  const result = record.result;
  if (result?.artifactLocation === undefined || result.sha256 === undefined)
    throw new ResultUnavailableError(
      record.operationId,
      'no_result',
      result === null ? 'has not been collected' : 'has no stored body',
    );
  return {
    location: result.artifactLocation,
    sha256: result.sha256,
    ...(result.sizeBytes !== undefined ? { sizeBytes: result.sizeBytes } : {}),
  };
}

/**
 * The bytes of a result, verified: a `Readable` of them that fails with {@link ResultUnavailableError}
 * (`mismatch`) unless they hash to `recorded.sha256` and count `recorded.sizeBytes`.
 */
export class VerifiedResultStream extends Transform {
  private readonly hash: Hash = createHash('sha256');
  /** Bytes passed on so far. */
  bytesRead = 0;

  constructor(
    readonly operationId: string,
    readonly recorded: RecordedResult,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytesRead += chunk.length;
    if (this.recorded.sizeBytes !== undefined && this.bytesRead > this.recorded.sizeBytes) {
      done(this.mismatch(`more than the ${this.recorded.sizeBytes} bytes recorded`));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    const sha256 = this.hash.digest('hex');
    if (sha256 === this.recorded.sha256 && (this.recorded.sizeBytes ?? this.bytesRead) === this.bytesRead) done();
    else done(this.mismatch(`sha256 ${sha256}, ${this.bytesRead} bytes`));
  }

  private mismatch(found: string): ResultUnavailableError {
    const expected = `sha256 ${this.recorded.sha256}${this.recorded.sizeBytes !== undefined ? `, ${this.recorded.sizeBytes} bytes` : ''}`;
    return new ResultUnavailableError(
      this.operationId,
      'mismatch',
      `at ${this.recorded.location} does not match the recorded ${expected}: found ${found}`,
    );
  }
}

/**
 * Opens the recorded result in `store` as a {@link VerifiedResultStream}. Throws {@link ResultUnavailableError}
 * (`unreadable`) when the store cannot open it; read errors later fail the stream the same way. Read-only.
 */
export async function openVerifiedResult(
  store: ArtifactStore,
  operationId: string,
  recorded: RecordedResult,
): Promise<VerifiedResultStream> {
  const unreadable = (cause: unknown) =>
    new ResultUnavailableError(operationId, 'unreadable', `cannot be read from ${recorded.location}`, { cause });
  if (!store.holds(recorded.location)) throw unreadable(new Error('not a location of the configured artifact store'));
  let source;
  try {
    source = await store.open(recorded.location);
  } catch (error) {
    throw unreadable(error);
  }
  const verified = new VerifiedResultStream(operationId, recorded);
  source.once('error', (error) => verified.destroy(unreadable(error)));
  verified.once('close', () => source.destroy());
  source.pipe(verified);
  return verified;
}
