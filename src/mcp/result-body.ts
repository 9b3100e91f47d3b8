/**
 * Reads a collected result's body for an agent whose policy allows it: the whole artifact is hashed while at most
 * `maxBytes` of it are kept, and the body is given only when the hash matches the one the workflow recorded (R3),
 * so an agent never reads bytes that are not the validated result.
 */
import { createHash } from 'node:crypto';
import type { ArtifactStore } from '../adapters/artifacts/artifact-store';
import { AgentToolError } from './errors';

/** A bounded part of a result body. */
export interface ResultBody {
  /** The first `returnedBytes` bytes, decoded as UTF-8. */
  text: string;
  returnedBytes: number;
  sizeBytes: number;
  truncated: boolean;
}

/**
 * Reads at most `maxBytes` of the artifact at `location`, checking the whole artifact against `sha256`. Throws
 * {@link AgentToolError} `ASYNCJOB_ERR_RESULT_UNAVAILABLE` when it cannot be read or does not match. Read-only.
 */
export async function readResultBody(
  artifacts: ArtifactStore,
  location: string,
  sha256: string,
  maxBytes: number,
): Promise<ResultBody> {
  const hash = createHash('sha256');
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let sizeBytes = 0;
  try {
    for await (const chunk of artifacts.open(location)) {
      const bytes = chunk as Buffer;
      hash.update(bytes);
      sizeBytes += bytes.length;
      if (keptBytes < maxBytes) {
        const part = bytes.subarray(0, maxBytes - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
    }
  } catch {
    throw new AgentToolError('ASYNCJOB_ERR_RESULT_UNAVAILABLE', 'the stored result cannot be read by this server');
  }
  if (hash.digest('hex') !== sha256)
    throw new AgentToolError(
      'ASYNCJOB_ERR_RESULT_UNAVAILABLE',
      'the stored result does not match the hash recorded when it was validated (asyncjob audit verify)',
    );
  return {
    text: Buffer.concat(kept).toString('utf8'),
    returnedBytes: keptBytes,
    sizeBytes,
    truncated: keptBytes < sizeBytes,
  };
}
