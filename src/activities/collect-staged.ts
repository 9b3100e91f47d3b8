/**
 * Collection without a request (R1, V2): a result that arrived inline with the success answer was staged in
 * artifact storage by the activity that received it, and is validated from there like a downloaded one; an
 * operation whose provider convention has no result (`result.required: false`, a DELETE) ends with an empty,
 * valid summary. Either way collection stays its own recorded step, and no request is sent.
 */
import { answerSignal } from '../adapters/providers/answer-signal';
import { type HttpClient } from '../adapters/http';
import { type ProviderAdapter } from '../adapters/providers';
import { followPages } from './collect-pages';
import { type Observation } from '../core/observation';
import { type OperationRecord } from '../core/operation';
import { afterCollect, type StepContext, type StepResult } from '../core/step';
import { checkResult, outcomeOf } from './result-checks';
import { AsyncJobError } from '../core/errors';
import { type ActivityContext } from './provider-call';

/** The content type of a staged inline result: it was JSON in the answer that carried it. */
const STAGED_CONTENT_TYPE = 'application/json';

function localObservation(record: OperationRecord, nowMs: number, note: string): Observation {
  const status = record.remote.lastHttp?.httpStatus;
  const carried = status !== undefined && answerSignal({ transport: 'response', httpStatus: status }) === 'ok';
  return {
    action: 'collect',
    transport: 'response',
    signal: 'ok',
    receivedAtMs: nowMs,
    durationMs: 0,
    requestsSent: 0,
    // The answer that carried (or stood for) the result; no new exchange took place.
    httpStatus: carried ? status : 200,
    note,
  };
}

/** Collects a staged or absent result; `undefined` when the result must be downloaded. */
export async function collectWithoutRequest(
  ctx: ActivityContext,
  { adapter, http }: { adapter: ProviderAdapter; http: HttpClient },
  record: OperationRecord,
  step: StepContext,
): Promise<StepResult | undefined> {
  const reference = record.remote.resultReference;
  if (reference?.none === true) {
    const note = 'no result to collect: the provider convention has none for this operation (result.required: false)';
    return afterCollect(
      record,
      localObservation(record, ctx.clock(), note),
      { result: { validation: 'valid', problems: [note] } },
      step,
    );
  }
  if (reference?.stagedArtifact === undefined) return undefined;
  const stored = await ctx.artifacts.describe(reference.stagedArtifact);
  if (stored === undefined) {
    throw new AsyncJobError(
      'ASYNCJOB_ERR_ARTIFACT_FAILED',
      `the staged result of ${record.operationId} is missing at ${reference.stagedArtifact}`,
    );
  }
  // A staged first page of a paged result: the following pages are fetched here (the only requests of this path).
  const pages = await followPages(ctx, adapter, http, record, stored);
  if (pages.kind === 'failed') return afterCollect(record, pages.observation, {}, step);
  const checked = await checkResult(
    ctx,
    adapter,
    record,
    { headers: { 'content-type': STAGED_CONTENT_TYPE }, complete: true },
    pages.stored,
  );
  checked.problems.push(...pages.problems);
  const note =
    pages.pagesFetched === 0
      ? 'the result arrived inline with the success answer; validated from its staged copy, no request sent'
      : `the first page arrived inline with the success answer; ${pages.pagesFetched} more pages fetched`;
  const observation = { ...localObservation(record, ctx.clock(), note), requestsSent: pages.pagesFetched };
  return afterCollect(record, observation, outcomeOf(pages.stored, STAGED_CONTENT_TYPE, checked), step);
}
