/** The Result section: where the result lives, how it is checked, and whether fetching it may repeat. Pure. */
import { type ProviderContract, type ResultSource } from '../contract';
import { type ExplainOptions, type ExplainSection } from './explanation';
import { code, list, numbered, readingLabel, url } from './phrases';
import { requestDetailLines } from './request-lines';

/** One place the result may live, as a request or a field of the success answer. */
function resultSourceText(contract: ProviderContract, options: ExplainOptions, source: ResultSource): string {
  switch (source.from) {
    case 'status_field':
      return `GET the URL in field ${code(source.field)} of the answer that reported success`;
    case 'template':
      return [
        `${source.method} ${url(contract, options, source.path)}`,
        ...requestDetailLines(source, '*/*').map((line) => `     ${line.trimStart()}`),
      ].join('\n');
    case 'create_header':
      return `GET the URL the create answer gave in header ${source.name} (final-state-via location)`;
    case 'request_url':
      return 'GET the URL the create request wrote (final-state-via original-uri)';
    case 'inline':
      return source.field === undefined
        ? `the body of the answer that reported success is the result, stored as is (at most ${contract.result.maxInlineBytes} bytes)`
        : `field ${code(source.field)} of the answer that reported success is the result (at most ${contract.result.maxInlineBytes} bytes)`;
  }
}

/** The places the result may live, numbered in priority order, or that there is none. */
function resultLines(contract: ProviderContract, options: ExplainOptions, sources: readonly ResultSource[]): string[] {
  if (sources.length === 0) return ['  there is no result here: success ends the operation with nothing to collect'];
  return numbered(sources.map((s) => resultSourceText(contract, options, s))).flatMap((line) => line.split('\n'));
}

/** Where the result lives per reading, its integrity checks, records, batch, paging, and repeat safety (V2, R2, R3, R5, P7). */
export function resultSection(contract: ProviderContract, options: ExplainOptions): ExplainSection {
  const result = contract.result;
  const lines = ['where the result lives when a reading reports success, first found wins (V2):'];
  lines.push(...resultLines(contract, options, result.url));
  const overrides = [
    [readingLabel(undefined), contract.status.result] as const,
    ...Object.entries(contract.status.readings ?? {}).map(([n, r]) => [readingLabel(n), r.result] as const),
  ];
  for (const [who, sources] of overrides) {
    if (sources === undefined) continue;
    if (JSON.stringify(sources) === JSON.stringify(result.url)) {
      lines.push(`on a success ${who}: the same`);
      continue;
    }
    lines.push(`on a success ${who}, instead:`);
    lines.push(...resultLines(contract, options, sources));
  }
  lines.push(
    result.required
      ? 'a success without a result is not ready: never succeeded without one (P7)'
      : 'a result is not required: a success without one ends succeeded with nothing to collect',
  );
  const checks: string[] = [];
  if (result.sha256 !== undefined) {
    const where =
      result.sha256.from === 'status_field'
        ? `field ${code(result.sha256.field)} of the success answer`
        : `header ${result.sha256.name} of the result answer`;
    checks.push(`SHA-256 (${result.sha256.encoding}) from ${where}`);
  }
  for (const [label, source] of [
    ['size in bytes', result.sizeBytes],
    ['record count', result.recordCount],
  ] as const) {
    if (source === undefined) continue;
    checks.push(
      `${label} from ${source.from === 'status_field' ? `field ${code(source.field)} of the success answer` : `header ${source.name} of the result answer`}`,
    );
  }
  if (result.contentType !== undefined) checks.push(`content type one of ${list(result.contentType.expected)}`);
  lines.push(
    checks.length > 0
      ? `integrity checks (R2): ${checks.join('; ')}; a mismatch fails validation and the result is not accepted`
      : 'integrity checks: none declared (the stored result gets its own SHA-256 and size)',
  );
  if (result.csv !== undefined)
    lines.push(`records: CSV lines${result.csv.header ? ', the first line a header' : ', no header line'}`);
  if (result.batch !== undefined) {
    const batch = result.batch;
    lines.push(
      `batch (R3): items in ${code(batch.itemsField)}, ID ${code(batch.idField)}, failed when ${code(batch.statusField)} is ${list(batch.failedValues)}`,
    );
  }
  if (result.paging !== undefined) {
    const paging = result.paging;
    lines.push(
      paging.nextTokenField !== undefined
        ? `paged by token: items in ${code(paging.itemsField)}, the next page's token in ${code(paging.nextTokenField)}, sent back as {nextToken} by the result request until an answer has none, at most ${paging.maxPages} pages, stored as one JSON array`
        : `paged: items in ${code(paging.itemsField)}, next page URL in ${code(paging.nextLinkField ?? '')} (same origin), at most ${paging.maxPages} pages, stored as one JSON array`,
    );
  }
  lines.push(
    contract.collectSafeToRepeat
      ? 'fetching the result again is harmless at this provider (R5): a failed download is retried'
      : 'fetching the result is never repeated (R5): a failed download escalates to a human',
  );
  return { id: 'result', title: 'Result', lines };
}
