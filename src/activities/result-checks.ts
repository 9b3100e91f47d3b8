/**
 * The checks a collected result goes through (R2, R3), wherever its bytes came from (a download, or an inline
 * result staged from the answer that carried it): every integrity fact the provider gave (sha256, size, record
 * count, content type), JSON/NDJSON/CSV records and batch items counted, failed item references listed; and the
 * bounded summary and journal entry built from them.
 */
import { readField, type ProviderAdapter } from '../adapters/providers';
import { type StoredArtifact } from '../adapters/artifacts/artifact-store';
import { type OperationRecord, type ResultSummary } from '../core/operation';
import { type CollectOutcome } from '../core/step';
import { type ActivityContext } from './provider-call';

const MAX_SUMMARY_PROBLEMS = 20;
const MAX_SUMMARY_FAILED = 100;

/** What the checks found. */
export interface Checked {
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
  return (
    media === 'application/x-ndjson' ||
    media === 'application/ndjson' ||
    media === 'application/jsonl' ||
    media === 'application/x-jsonlines'
  );
}

function isJson(media: string): boolean {
  return media === 'application/json' || media.endsWith('+json') || media === 'text/json';
}

function isCsv(media: string): boolean {
  return media === 'text/csv' || media === 'application/csv';
}

/**
 * The records of a CSV text (RFC 4180): line ends outside double quotes end a record; blank lines and a final
 * line end do not count. Hand-written on purpose: counting needs only the quoting rule, not a parser's fields.
 */
export function countCsvRecords(text: string, hasHeader: boolean): number {
  let records = 0;
  let inQuotes = false;
  let recordHasContent = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') inQuotes = !inQuotes;
    if (!inQuotes && (char === '\n' || char === '\r')) {
      if (recordHasContent) records += 1;
      recordHasContent = false;
      if (char === '\r' && text[i + 1] === '\n') i += 1;
      continue;
    }
    recordHasContent = true;
  }
  if (recordHasContent) records += 1;
  return Math.max(0, records - (hasHeader && records > 0 ? 1 : 0));
}

/** Reads a committed artifact back (only called for results up to `maxParseBytes`). */
export async function readArtifact(ctx: ActivityContext, location: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await ctx.artifacts.open(location)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** R3: records and batch items of a JSON or NDJSON result small enough to parse. */
async function countItems(
  ctx: ActivityContext,
  adapter: ProviderAdapter,
  stored: StoredArtifact,
  media: string,
  out: Checked,
): Promise<void> {
  const csv = adapter.contract?.result.csv;
  const json = isJson(media);
  const ndjson = isNdjson(media);
  // A CSV result is counted only when the contract says whether its first line is a header (R2: never guessed).
  if (!json && !ndjson && csv === undefined) {
    if (isCsv(media)) out.notes.push('not_checked: CSV records (declare result.csv.header to count them)');
    return;
  }
  if (stored.sizeBytes > ctx.maxParseBytes) {
    out.notes.push(
      `not_checked: record count and batch items (the result is ${stored.sizeBytes} bytes, above the ${ctx.maxParseBytes}-byte parse limit)`,
    );
    return;
  }
  const text = (await readArtifact(ctx, stored.location)).toString('utf8');
  if (!json && !ndjson) {
    out.recordCount = countCsvRecords(text, csv!.header);
    return;
  }
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
    if (batch.failedIdsTruncated)
      out.notes.push(`only the first ${batch.failedItemIds.length} failed item IDs are listed`);
  }
}

/** How the stored bytes arrived: the answer's headers, and whether the whole body came. */
export interface ArrivalFacts {
  headers: Readonly<Record<string, string>>;
  complete: boolean;
  expectedSizeBytes?: number;
}

/** R2: the result against the provider's integrity data (status answer and result headers). */
export async function checkResult(
  ctx: ActivityContext,
  adapter: ProviderAdapter,
  record: OperationRecord,
  arrival: ArrivalFacts,
  stored: StoredArtifact,
): Promise<Checked> {
  const out: Checked = { problems: [], notes: [] };
  if (!arrival.complete) {
    out.problems.push(
      `truncated: ${stored.sizeBytes} bytes arrived${arrival.expectedSizeBytes !== undefined ? ` of the ${arrival.expectedSizeBytes} announced` : ''}`,
    );
  }
  const integrity = adapter.readResultIntegrity(arrival.headers);
  out.problems.push(...integrity.problems);
  const reference = record.remote.resultReference ?? {};
  const expectedSha = reference.sha256 ?? integrity.sha256;
  if (expectedSha !== undefined && expectedSha.toLowerCase() !== stored.sha256)
    out.problems.push(`checksum mismatch: the provider gave sha256 ${expectedSha}, the bytes have ${stored.sha256}`);
  if (expectedSha === undefined) out.notes.push('not_checked: the provider gives no checksum');
  const expectedSize = reference.sizeBytes ?? integrity.sizeBytes;
  if (expectedSize !== undefined && expectedSize !== stored.sizeBytes)
    out.problems.push(`size mismatch: the provider gave ${expectedSize} bytes, ${stored.sizeBytes} arrived`);
  const media = mediaTypeOf(integrity.contentType);
  if (reference.contentType !== undefined && mediaTypeOf(reference.contentType) !== media) {
    out.problems.push(
      `content type mismatch: the provider announced ${mediaTypeOf(reference.contentType)}, the result is ${media || '(none)'}`,
    );
  }
  if (arrival.complete) await countItems(ctx, adapter, stored, media, out);
  const expectedCount = reference.recordCount ?? integrity.recordCount;
  if (expectedCount !== undefined) {
    if (out.recordCount === undefined)
      out.notes.push(`not_checked: the provider announced ${expectedCount} records; they were not counted`);
    else if (expectedCount !== out.recordCount)
      out.problems.push(`record count mismatch: the provider gave ${expectedCount}, the result has ${out.recordCount}`);
  }
  return out;
}

/** Builds the summary (bounded, for the record) and the artifact entry (full failed-item list, for the journal). */
export function outcomeOf(stored: StoredArtifact, contentType: string | undefined, checked: Checked): CollectOutcome {
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
    ...(checked.failedItems !== undefined && checked.failedItems.length > 0
      ? { failedItems: checked.failedItems.slice(0, MAX_SUMMARY_FAILED) }
      : {}),
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
      ...(checked.failedItems !== undefined && checked.failedItems.length > 0
        ? { failedItems: checked.failedItems.slice(0, 10_000) }
        : {}),
      validation,
      ...(all.length > 0 ? { validationProblems: all.slice(0, 100) } : {}),
    },
  };
}
