/**
 * Paged results collected whole (R1, V2): a result whose first page (downloaded, or staged inline) names a next
 * page (a `nextLink` URL, fetched on the provider's origin only; or a `NextToken`, sent back by the result request
 * as `{nextToken}`) has every following page fetched, and the items of all pages are stored as one JSON array
 * that is then validated like any result. Every page is a request of the collect
 * step (B2: `requestsSent` counts them); a page that fails ends the step with that page's observation.
 */
import { answerSignal, httpErrorCategory } from '../adapters/providers/answer-signal';
import { type HttpClient } from '../adapters/http';
import { readField, type ProviderAdapter } from '../adapters/providers';
import { type StoredArtifact } from '../adapters/artifacts/artifact-store';
import { type Observation } from '../core/observation';
import { type OperationRecord } from '../core/operation';
import { AsyncJobError } from '../core/errors';
import { requestFactsOf, sendOnce, type ActivityContext } from './provider-call';
import { readArtifact } from './result-checks';

/** The outcome of following the pages. */
export type PagesOutcome =
  | { kind: 'whole'; stored: StoredArtifact; pagesFetched: number; problems: string[] }
  | { kind: 'failed'; observation: Observation; pagesFetched: number };

/** Where a page names the next one: its URL, or its token. */
type Paging = { itemsField: string; nextLinkField?: string; nextTokenField?: string };

function pageOf(document: unknown, paging: Paging): { items?: unknown[]; next?: string } {
  const items = readField(document, paging.itemsField);
  const next = readField(document, paging.nextTokenField ?? paging.nextLinkField ?? '');
  return {
    ...(items.found && Array.isArray(items.value) ? { items: items.value } : {}),
    ...(next.found && typeof next.value === 'string' && next.value !== '' ? { next: next.value } : {}),
  };
}

/**
 * Follows the pages after the stored first page when the contract declares `result.paging`, and stores the items
 * of every page as one JSON array, one page or many, so the result has one shape however the provider pages it.
 * Returns the stored artifact unchanged when there is no paging, or the first page is not JSON or has neither
 * items nor a next page (the result checks then say what it is).
 */
export async function followPages(
  ctx: ActivityContext,
  adapter: ProviderAdapter,
  http: HttpClient,
  record: OperationRecord,
  first: StoredArtifact,
): Promise<PagesOutcome> {
  const paging = adapter.contract?.result.paging;
  const unchanged: PagesOutcome = { kind: 'whole', stored: first, pagesFetched: 0, problems: [] };
  if (paging === undefined || first.sizeBytes > ctx.maxParseBytes) return unchanged;
  let document: unknown;
  try {
    document = JSON.parse((await readArtifact(ctx, first.location)).toString('utf8')) as unknown;
  } catch {
    return unchanged; // not JSON: the checks say so
  }
  let page = pageOf(document, paging);
  if (page.next === undefined && page.items === undefined) return unchanged;
  const items: unknown[] = [...(page.items ?? [])];
  const problems = page.items === undefined ? [`the first page has no ${paging.itemsField} list`] : [];
  let pagesFetched = 0;
  const seen = new Set<string>();
  while (page.next !== undefined) {
    if (pagesFetched + 1 >= paging.maxPages || seen.has(page.next)) {
      problems.push(
        `paging stopped after ${pagesFetched + 1} pages (${seen.has(page.next) ? 'a next page repeated' : `maxPages ${paging.maxPages}`}); later pages are missing`,
      );
      break;
    }
    seen.add(page.next);
    const built =
      paging.nextTokenField === undefined
        ? adapter.buildResultRequest({ resultUrl: page.next })
        : adapter.buildResultRequest({
            ...requestFactsOf(record, ctx.clock()),
            ...(record.jobId !== undefined ? { jobId: record.jobId } : {}),
            nextToken: page.next,
          });
    const { observation } = await sendOnce(ctx, http, adapter, 'collect', built, record, (answer) => {
      const json = answer.bodyJson !== undefined && answer.bodyParseError === undefined;
      const facts = {
        transport: 'response' as const,
        httpStatus: answer.status,
        ...(json ? {} : { parseProblem: 'the page is not JSON' }),
      };
      const signal = answerSignal(facts);
      page = signal === 'ok' ? pageOf(answer.bodyJson, paging) : {};
      const errorCategory = signal === 'unreadable' ? 'unreadable_page' : httpErrorCategory(answer.status);
      return {
        action: 'collect',
        ...facts,
        signal,
        receivedAtMs: answer.receivedAtMs,
        ...(signal === 'ok' ? {} : { errorCategory }),
      };
    });
    pagesFetched += observation.transport === 'refused' ? 0 : 1;
    if (observation.signal !== 'ok') {
      return { kind: 'failed', observation: { ...observation, requestsSent: pagesFetched }, pagesFetched };
    }
    if (page.items === undefined) problems.push(`page ${pagesFetched + 1} has no ${paging.itemsField} list`);
    items.push(...(page.items ?? []));
  }
  try {
    const writer = await ctx.artifacts.begin(record.operationId, `${record.journal.nextSequence}-result-pages.json`);
    await writer.write(Buffer.from(JSON.stringify(items), 'utf8'));
    return { kind: 'whole', stored: await writer.commit(), pagesFetched, problems };
  } catch (error) {
    throw new AsyncJobError(
      'ASYNCJOB_ERR_ARTIFACT_FAILED',
      `cannot store the pages of ${record.operationId}: ${(error as Error).message}`,
    );
  }
}
