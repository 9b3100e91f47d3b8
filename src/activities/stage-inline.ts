/**
 * Staging an inline result (V2, R2): a create or status answer that is itself the result (a synchronous
 * success, a resource read at its Location, AIP-151's `response`) carries it into the activity, which writes it
 * to artifact storage at once, so the result never travels through workflow history or the journal and the
 * collect step validates it like a download. Named by the step's sequence: a retried activity writes the same
 * artifact again, never a second one.
 */
import { type Observation } from '../core/observation';
import { type OperationRecord } from '../core/operation';
import { AsyncJobError } from '../core/errors';
import { type ActivityContext } from './provider-call';

/** Returns `observation` with its inline result staged (`stagedArtifact` instead of `inline`); unchanged without one. */
export async function stageInlineResult(
  ctx: ActivityContext,
  record: OperationRecord,
  observation: Observation,
): Promise<Observation> {
  const reference = observation.resultReference;
  if (reference === undefined || !('inline' in reference) || reference.inline === undefined) return observation;
  const { inline, ...rest } = reference;
  const bytes = Buffer.from(JSON.stringify(inline), 'utf8');
  try {
    const writer = await ctx.artifacts.begin(record.operationId, `${record.journal.nextSequence}-inline-result.json`);
    await writer.write(bytes);
    const stored = await writer.commit();
    return { ...observation, resultReference: { ...rest, stagedArtifact: stored.location } };
  } catch (error) {
    throw new AsyncJobError(
      'ASYNCJOB_ERR_ARTIFACT_FAILED',
      `cannot stage the inline result of ${record.operationId}: ${(error as Error).message}`,
    );
  }
}
