/**
 * Reads a collected result's body for an agent whose policy allows it, through the client's verified reading
 * (`src/client/read-result.ts`): the whole artifact is hashed while at most `maxBytes` of it are kept, and the body
 * is given only when it matches the sha256 and size the workflow recorded (R2), so an agent never reads bytes that
 * are not the validated result.
 */
import type { ArtifactStore } from '../adapters/artifacts/artifact-store';
import { openVerifiedResult, type RecordedResult } from '../client/read-result';
import { ResultUnavailableError } from '../client/errors';
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
 * Reads at most `maxBytes` of the recorded result, checking the whole artifact against its sha256 and size. Throws
 * {@link AgentToolError} `ASYNCJOB_ERR_RESULT_UNAVAILABLE` when it cannot be read or does not match. Read-only.
 */
export async function readResultBody(
  artifacts: ArtifactStore,
  operationId: string,
  recorded: RecordedResult,
  maxBytes: number,
): Promise<ResultBody> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let sizeBytes = 0;
  try {
    for await (const chunk of await openVerifiedResult(artifacts, operationId, recorded)) {
      const bytes = chunk as Buffer;
      sizeBytes += bytes.length;
      if (keptBytes < maxBytes) {
        const part = bytes.subarray(0, maxBytes - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
    }
  } catch (error) {
    const mismatch = error instanceof ResultUnavailableError && error.reason === 'mismatch';
    throw new AgentToolError(
      'ASYNCJOB_ERR_RESULT_UNAVAILABLE',
      mismatch
        ? 'the stored result does not match the hash recorded when it was validated (asyncjob audit verify)'
        : 'the stored result cannot be read by this server',
    );
  }
  return {
    text: Buffer.concat(kept).toString('utf8'),
    returnedBytes: keptBytes,
    sizeBytes,
    truncated: keptBytes < sizeBytes,
  };
}
