/**
 * The `collectResult` activity (R1-R5): streams the result into artifact storage (never buffered whole, with a
 * heartbeat while it flows), then checks it against every integrity fact the provider gave (sha256, size,
 * record count, content type), counts JSON/NDJSON records and batch items and lists failed item references
 * (R3), and applies `afterCollect`. Only the summary enters the record; the bytes stay in the artifact store.
 */
import { type HttpClient, type HttpDownload } from '../adapters/http';
import { type ProviderAdapter, type ProviderRequest } from '../adapters/providers';
import { answerSignal, httpErrorCategory } from '../adapters/providers/answer-signal';
import { type ArtifactWriter, type StoredArtifact } from '../adapters/artifacts/artifact-store';
import { type Observation } from '../core/observation';
import { type OperationRecord } from '../core/operation';
import { type StepOutcome } from '../core/step-outcome';
import { afterCollect, type CollectOutcome } from '../core/step';
import { type ProviderCallInput } from './types';
import { AsyncJobError } from '../core/errors';
import { inCallFrame } from './call-frame';
import { checkResult, outcomeOf, type ArrivalFacts } from './result-checks';
import { collectWithoutRequest } from './collect-staged';
import { followPages } from './collect-pages';
import { whileHeartbeating } from './heartbeat';
import { withRequestSlot } from './request-pacer';
import {
  decorateForOperation,
  httpRequestOf,
  renewalOf,
  requestFactsOf,
  transportObservation,
  withProviderSession,
  type ActivityContext,
} from './provider-call';

const HEARTBEAT_EVERY_BYTES = 1024 * 1024;

/** The arrival facts of a download. */
function arrivalOf(exchange: HttpDownload): ArrivalFacts {
  const download = exchange.download;
  return {
    headers: exchange.headers,
    complete: download?.complete === true,
    ...(download?.expectedSizeBytes !== undefined ? { expectedSizeBytes: download.expectedSizeBytes } : {}),
  };
}

/** The observation of a result download that got a response (2xx streamed, or an error status read bounded). */
function collectObservation(adapter: ProviderAdapter, exchange: HttpDownload, truncated: boolean): Observation {
  const status = exchange.status ?? 0;
  const errorCategory = truncated ? 'truncated' : answeredOk(exchange) ? undefined : httpErrorCategory(status);
  const o: Observation = {
    action: 'collect',
    transport: 'response',
    signal: answerSignal({ transport: 'response', httpStatus: status }),
    receivedAtMs: exchange.receivedAtMs,
    durationMs: exchange.durationMs,
    requestsSent: 1,
    ...renewalOf(exchange),
    httpStatus: status,
    ...(errorCategory !== undefined ? { errorCategory } : {}),
  };
  const requestId = exchange.providerRequestId ?? exchange.headers[adapter.requestIdHeader.toLowerCase()];
  if (requestId !== undefined) o.providerRequestId = requestId.slice(0, 500);
  const retryAfter = exchange.headers['retry-after'];
  if (retryAfter !== undefined) o.retryAfter = retryAfter.slice(0, 200);
  return o;
}

/** Whether the download's status is one whose body is the result (a 2xx, by the one classification). */
function answeredOk(exchange: HttpDownload): boolean {
  return answerSignal({ transport: 'response', httpStatus: exchange.status ?? 0 }) === 'ok';
}

/**
 * Streams the result into `writer` in its request slot (paced by the instant it is written), heartbeating on time
 * as well as on progress: a slow download is alive, a dead worker is noticed (F2).
 */
function downloadInto(
  ctx: ActivityContext,
  { adapter, http }: { adapter: ProviderAdapter; http: HttpClient },
  record: OperationRecord,
  request: ProviderRequest,
  writer: ArtifactWriter,
): Promise<HttpDownload> {
  let nextBeatBytes = HEARTBEAT_EVERY_BYTES;
  return withRequestSlot((slot) =>
    whileHeartbeating(
      (beat) =>
        withProviderSession(ctx, adapter, record, (session) =>
          http.download(
            // A result download is a read: after a 401 it may be resent once with a renewed credential (T4).
            { ...httpRequestOf(request, record.traceId, session), onWritten: slot.written, safeToResend: true },
            async (chunk) => {
              await writer.write(chunk);
              if (writer.bytesWritten >= nextBeatBytes) {
                nextBeatBytes = writer.bytesWritten + HEARTBEAT_EVERY_BYTES;
                beat();
              }
            },
          ),
        ),
      { details: () => ({ bytes: writer.bytesWritten }) },
    ),
  );
}

/** Streams the result into `writer` (aborted when the download throws) and logs the call. */
async function streamResult(
  ctx: ActivityContext,
  provider: { adapter: ProviderAdapter; http: HttpClient },
  record: OperationRecord,
  request: ProviderRequest,
  writer: ArtifactWriter,
): Promise<HttpDownload> {
  let exchange: HttpDownload;
  try {
    exchange = await downloadInto(ctx, provider, record, request, writer);
  } catch (error) {
    await writer.abort();
    throw error;
  }
  ctx.logger.info('provider call', {
    operationId: record.operationId,
    provider: record.provider,
    action: 'collect',
    method: exchange.request.method,
    url: exchange.request.url,
    transport: exchange.outcome,
    httpStatus: exchange.status,
    errorCategory: exchange.errorCategory,
    bytes: exchange.download?.sizeBytes,
    durationMs: exchange.durationMs,
  });
  return exchange;
}

/** Makes the activity. */
export function collectResult(ctx: ActivityContext) {
  return async (input: ProviderCallInput): Promise<StepOutcome> => {
    return inCallFrame(ctx, input, 'collect', async (record, { adapter, http }, step) => {
      // V2: a result that arrived inline (staged) or an operation without one needs no request.
      const local = await collectWithoutRequest(ctx, { adapter, http }, record, step);
      if (local !== undefined) return local;
      const built = decorateForOperation(
        ctx,
        adapter,
        record,
        adapter.buildResultRequest({
          ...requestFactsOf(record, ctx.clock()),
          ...(record.jobId !== undefined ? { jobId: record.jobId } : {}),
          ...(record.remote.statusUrl !== undefined ? { statusUrl: record.remote.statusUrl } : {}),
          ...(record.remote.resultReference?.url !== undefined ? { resultUrl: record.remote.resultReference.url } : {}),
        }),
      );
      const finish = (o: Observation, outcome: CollectOutcome) => afterCollect(record, o, outcome, step);
      if (built.kind === 'refused') return finish(adapter.refusedObservation('collect', built, ctx.clock()), {});

      let writer: ArtifactWriter;
      try {
        writer = await ctx.artifacts.begin(record.operationId, `${record.journal.nextSequence}-result`);
      } catch (error) {
        throw new AsyncJobError(
          'ASYNCJOB_ERR_ARTIFACT_FAILED',
          `cannot start the artifact of ${record.operationId}: ${(error as Error).message}`,
        );
      }
      const exchange = await streamResult(ctx, { adapter, http }, record, built.request, writer);
      const streamed = exchange.download !== undefined && answeredOk(exchange);
      // A 2xx whose body was cut off is still a result that arrived: it is stored and judged invalid (R4).
      const truncated = streamed && exchange.outcome === 'ambiguous' && exchange.download?.complete === false;
      if (!streamed || (exchange.outcome !== 'response' && !truncated)) {
        await writer.abort();
        const o =
          exchange.outcome === 'response'
            ? collectObservation(adapter, exchange, false)
            : transportObservation('collect', exchange);
        return finish(o, {});
      }
      let stored: StoredArtifact;
      try {
        stored = await writer.commit();
      } catch (error) {
        await writer.abort();
        throw new AsyncJobError(
          'ASYNCJOB_ERR_ARTIFACT_FAILED',
          `cannot commit the artifact of ${record.operationId}: ${(error as Error).message}`,
        );
      }
      const observation = collectObservation(adapter, exchange, truncated);
      const pages = truncated ? undefined : await followPages(ctx, adapter, http, record, stored);
      if (pages?.kind === 'failed')
        return finish({ ...pages.observation, requestsSent: (observation.requestsSent ?? 1) + pages.pagesFetched }, {});
      if (pages !== undefined && pages.stored !== stored) {
        // The pages' items, stored as one JSON array, are the result (R1); every page was a request (B2).
        const checked = await checkResult(
          ctx,
          adapter,
          record,
          { headers: { 'content-type': 'application/json' }, complete: true },
          pages.stored,
        );
        checked.problems.push(...pages.problems);
        return finish(
          { ...observation, requestsSent: (observation.requestsSent ?? 1) + pages.pagesFetched },
          outcomeOf(pages.stored, 'application/json', checked),
        );
      }
      const checked = await checkResult(ctx, adapter, record, arrivalOf(exchange), stored);
      return finish(observation, outcomeOf(stored, exchange.headers['content-type'], checked));
    });
  };
}
