/**
 * The `collectResult` activity (R1-R5): streams the result into artifact storage (never buffered whole, with a
 * heartbeat while it flows), then checks it against every integrity fact the provider gave (sha256, size,
 * record count, content type), counts JSON/NDJSON records and batch items and lists failed item references
 * (R3), and applies `afterCollect`. Only the summary enters the record; the bytes stay in the artifact store.
 */
import { type HttpDownload } from '../adapters/http';
import { readField, type ProviderAdapter } from '../adapters/providers';
import { type ArtifactWriter, type StoredArtifact } from '../adapters/artifacts/artifact-store';
import { type Observation } from '../core/observation';
import { type OperationRecord, type ResultSummary } from '../core/operation';
import { afterCollect, type CollectOutcome } from '../core/step';
import { type ProviderCallInput } from './types';
import { ActivityError } from './errors';
import { inCallFrame } from './call-frame';
import { HEARTBEAT_INTERVAL_MS, heartbeater, httpRequestOf, transportObservation, type ActivityContext } from './provider-call';

const MAX_SUMMARY_PROBLEMS = 20;
const MAX_SUMMARY_FAILED = 100;
const HEARTBEAT_EVERY_BYTES = 1024 * 1024;

/** What the checks found. */
interface Checked {
  problems: string[];
  notes: string[];
  recordCount?: number;
  failedItems?: string[];
  failedItemCount?: number;
}

function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function isNdjson(media: string): boolean {
  return media === 'application/x-ndjson' || media === 'application/ndjson' || media === 'application/jsonl' || media === 'application/x-jsonlines';
}

function isJson(media: string): boolean {
  return media === 'application/json' || media.endsWith('+json') || media === 'text/json';
}

/** Reads a committed artifact back (only called for results up to `maxParseBytes`). */
async function readArtifact(ctx: ActivityContext, location: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.artifacts.open(location)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** R3: records and batch items of a JSON or NDJSON result small enough to parse. */
async function countItems(ctx: ActivityContext, adapter: ProviderAdapter, stored: StoredArtifact, media: string, out: Checked): Promise<void> {
  const json = isJson(media);
  const ndjson = isNdjson(media);
  if (!json && !ndjson) return;
  if (stored.sizeBytes > ctx.maxParseBytes) {
    out.notes.push(`not_checked: record count and batch items (the result is ${stored.sizeBytes} bytes, above the ${ctx.maxParseBytes}-byte parse limit)`);
    return;
  }
  const text = (await readArtifact(ctx, stored.location)).toString('utf8');
  let document: unknown;
  if (ndjson) {
    const items: unknown[] = [];
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.trim();
      if (line === '') continue;
      try {
        items.push(JSON.parse(line) as unknown);
      } catch {
        out.problems.push(`line ${i + 1} of the NDJSON result is not JSON`);
        return;
      }
    }
    out.recordCount = items.length;
    document = { items };
  } else {
    try {
      document = JSON.parse(text) as unknown;
    } catch (error) {
      out.problems.push(`the JSON result does not parse: ${(error as Error).message.slice(0, 200)}`);
      return;
    }
    // A JSON array holds one record per element; any other JSON document is one record.
    out.recordCount = Array.isArray(document) ? document.length : 1;
  }
  const itemsField = adapter.contract?.result.batch?.itemsField;
  if (!ndjson && itemsField !== undefined && !readField(document, itemsField).found) {
    out.notes.push(`not a batch result: no field ${itemsField}`);
    return;
  }
  const batch = ndjson ? undefined : adapter.countBatchItems(document);
  if (batch !== undefined) {
    out.problems.push(...batch.problems);
    out.recordCount = batch.total;
    out.failedItemCount = batch.failed;
    out.failedItems = batch.failedItemIds;
    if (batch.failedIdsTruncated) out.notes.push(`only the first ${batch.failedItemIds.length} failed item IDs are listed`);
  }
}

/** R2: the result against the provider's integrity data (status answer and result headers). */
async function checkResult(ctx: ActivityContext, adapter: ProviderAdapter, record: OperationRecord, exchange: HttpDownload, stored: StoredArtifact): Promise<Checked> {
  const out: Checked = { problems: [], notes: [] };
  const download = exchange.download;
  if (download === undefined || !download.complete) {
    out.problems.push(`truncated: ${stored.sizeBytes} bytes arrived${download?.expectedSizeBytes !== undefined ? ` of the ${download.expectedSizeBytes} announced` : ''}`);
  }
  const integrity = adapter.readResultIntegrity(exchange.headers);
  out.problems.push(...integrity.problems);
  const reference = record.remote.resultReference ?? {};
  const expectedSha = reference.sha256 ?? integrity.sha256;
  if (expectedSha !== undefined && expectedSha.toLowerCase() !== stored.sha256) out.problems.push(`checksum mismatch: the provider gave sha256 ${expectedSha}, the bytes have ${stored.sha256}`);
  if (expectedSha === undefined) out.notes.push('not_checked: the provider gives no checksum');
  const expectedSize = reference.sizeBytes ?? integrity.sizeBytes;
  if (expectedSize !== undefined && expectedSize !== stored.sizeBytes) out.problems.push(`size mismatch: the provider gave ${expectedSize} bytes, ${stored.sizeBytes} arrived`);
  const media = mediaTypeOf(integrity.contentType);
  if (reference.contentType !== undefined && mediaTypeOf(reference.contentType) !== media) {
    out.problems.push(`content type mismatch: the provider announced ${mediaTypeOf(reference.contentType)}, the result is ${media || '(none)'}`);
  }
  if (download?.complete === true) await countItems(ctx, adapter, stored, media, out);
  const expectedCount = reference.recordCount ?? integrity.recordCount;
  if (expectedCount !== undefined) {
    if (out.recordCount === undefined) out.notes.push(`not_checked: the provider announced ${expectedCount} records; they were not counted`);
    else if (expectedCount !== out.recordCount) out.problems.push(`record count mismatch: the provider gave ${expectedCount}, the result has ${out.recordCount}`);
  }
  return out;
}

/** Builds the summary (bounded, for the record) and the artifact entry (full failed-item list, for the journal). */
function outcomeOf(stored: StoredArtifact, contentType: string | undefined, checked: Checked): CollectOutcome {
  const validation = checked.problems.length > 0 ? 'invalid' : 'valid';
  const all = [...checked.problems, ...checked.notes].map((p) => p.slice(0, 2000));
  const result: ResultSummary = {
    artifactLocation: stored.location,
    sha256: stored.sha256,
    sizeBytes: stored.sizeBytes,
    validation,
    ...(all.length > 0 ? { problems: all.slice(0, MAX_SUMMARY_PROBLEMS) } : {}),
    ...(checked.recordCount !== undefined ? { recordCount: checked.recordCount } : {}),
    ...(checked.failedItemCount !== undefined ? { failedItemCount: checked.failedItemCount } : {}),
    ...(checked.failedItems !== undefined && checked.failedItems.length > 0 ? { failedItems: checked.failedItems.slice(0, MAX_SUMMARY_FAILED) } : {}),
  };
  return {
    result,
    artifact: {
      kind: 'artifact',
      location: stored.location,
      sha256: stored.sha256,
      sizeBytes: stored.sizeBytes,
      ...(contentType !== undefined ? { contentType: contentType.slice(0, 200) } : {}),
      ...(checked.recordCount !== undefined ? { recordCount: checked.recordCount } : {}),
      ...(checked.failedItems !== undefined && checked.failedItems.length > 0 ? { failedItems: checked.failedItems.slice(0, 10_000) } : {}),
      validation,
      ...(all.length > 0 ? { validationProblems: all.slice(0, 100) } : {}),
    },
  };
}

/** The observation of a result download that got a response (2xx streamed, or an error status read bounded). */
function collectObservation(adapter: ProviderAdapter, exchange: HttpDownload, truncated: boolean): Observation {
  const status = exchange.status ?? 0;
  const o: Observation = { action: 'collect', transport: 'response', receivedAtMs: exchange.receivedAtMs, durationMs: exchange.durationMs, requestsSent: 1, httpStatus: status };
  const requestId = exchange.providerRequestId ?? exchange.headers[adapter.requestIdHeader.toLowerCase()];
  if (requestId !== undefined) o.providerRequestId = requestId.slice(0, 500);
  const retryAfter = exchange.headers['retry-after'];
  if (retryAfter !== undefined) o.retryAfter = retryAfter.slice(0, 200);
  if (truncated) o.errorCategory = 'truncated';
  else if (status >= 500) o.errorCategory = 'http_5xx';
  else if (status === 401 || status === 403) o.errorCategory = 'auth_denied';
  else if (status === 404) o.errorCategory = 'not_found';
  else if (status === 429) o.errorCategory = 'rate_limited';
  else if (status >= 400) o.errorCategory = 'http_4xx';
  else if (status < 200 || status >= 300) o.errorCategory = 'http_unexpected';
  return o;
}

/** Makes the activity. */
export function collectResult(ctx: ActivityContext) {
  return async (input: ProviderCallInput): Promise<OperationRecord> => {
    return inCallFrame(ctx, input, 'collect', async (record, { adapter, http }, step) => {
      const heartbeat = heartbeater();
      const built = adapter.buildResultRequest({
        ...(record.jobId !== undefined ? { jobId: record.jobId } : {}),
        ...(record.remote.resultReference?.url !== undefined ? { resultUrl: record.remote.resultReference.url } : {}),
      });
      const finish = (o: Observation, outcome: CollectOutcome) => afterCollect(record, o, outcome, step);
      if (built.kind === 'refused') return finish(adapter.refusedObservation('collect', built, ctx.clock()), {});

      let writer: ArtifactWriter;
      try {
        writer = await ctx.artifacts.begin(record.operationId, `${record.journal.nextSequence}-result`);
      } catch (error) {
        throw new ActivityError('ASYNCJOB_ERR_ARTIFACT_FAILED', `cannot start the artifact of ${record.operationId}: ${(error as Error).message}`, false);
      }
      let exchange: HttpDownload;
      let nextBeat = HEARTBEAT_EVERY_BYTES;
      // Heartbeat on time as well as on progress: a slow download is alive, a dead worker is noticed (F2).
      heartbeat({ bytes: 0 });
      const beating = setInterval(() => heartbeat({ bytes: writer.bytesWritten }), HEARTBEAT_INTERVAL_MS);
      try {
        exchange = await http.download(httpRequestOf(built.request, record.traceId), async (chunk) => {
          await writer.write(chunk);
          if (writer.bytesWritten >= nextBeat) {
            nextBeat = writer.bytesWritten + HEARTBEAT_EVERY_BYTES;
            heartbeat({ bytes: writer.bytesWritten });
          }
        });
      } catch (error) {
        await writer.abort();
        throw error;
      } finally {
        clearInterval(beating);
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
      const status = exchange.status ?? 0;
      const streamed = exchange.download !== undefined && status >= 200 && status < 300;
      // A 2xx whose body was cut off is still a result that arrived: it is stored and judged invalid (R4).
      const truncated = streamed && exchange.outcome === 'ambiguous' && exchange.download?.complete === false;
      if (!streamed || (exchange.outcome !== 'response' && !truncated)) {
        await writer.abort();
        const o = exchange.outcome === 'response' ? collectObservation(adapter, exchange, false) : transportObservation('collect', exchange);
        return finish(o, {});
      }
      let stored: StoredArtifact;
      try {
        stored = await writer.commit();
      } catch (error) {
        await writer.abort();
        throw new ActivityError('ASYNCJOB_ERR_ARTIFACT_FAILED', `cannot commit the artifact of ${record.operationId}: ${(error as Error).message}`, false);
      }
      const checked = await checkResult(ctx, adapter, record, exchange, stored);
      return finish(collectObservation(adapter, exchange, truncated), outcomeOf(stored, exchange.headers['content-type'], checked));
    });
  };
}
