/**
 * Result facts (R1-R3, V2): where a finished job's result lives (a URL, the create answer's Location, the
 * original resource URL, or the answer itself), the integrity data the provider gives, and the per-item count of
 * a batch result. Pure; safe to repeat.
 */
import { type ResultReference } from '../../../core/observation';
import { type ProviderContract, type ResultSource } from '../contract';
import { readField } from '../field-path';
import { expandTemplate, resolveOnOrigin } from '../urls';
import { MAX_URL_CHARS, cut, type InterpretFlags, type Problems } from './answer';

/** What result sources need besides the success answer: the job and what the create exchange named. */
export interface ResultContext {
  jobId?: string;
  /** The operation's variables, for a result request template that names them (defaults applied). */
  variables?: Readonly<Record<string, string>>;
  /** The create request's URL (for `request_url`). */
  requestUrl?: string;
  /** URLs the create answer gave in the headers named by `create_header` sources, lower-case names. */
  createHeaders?: Readonly<Record<string, string>>;
}

/** Integrity data read from a result answer's headers (R2), with the problems found. */
export interface ResultIntegrity {
  /** Lower-case hex. */
  sha256?: string;
  sizeBytes?: number;
  recordCount?: number;
  contentType?: string;
  /** False when the contract lists expected content types and the answer's is not one of them. */
  contentTypeAccepted: boolean;
  problems: string[];
}

/** R3: the per-item count of a batch result. */
export interface BatchCount {
  total: number;
  succeeded: number;
  failed: number;
  /** The failed items' IDs (at most 10,000; `failedIdsTruncated` says when more failed). */
  failedItemIds: string[];
  failedIdsTruncated: boolean;
  problems: string[];
}

const MAX_FAILED_IDS = 10_000;

/** A non-negative integer from a number or a decimal string. */
function toNonNegativeInteger(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
  return undefined;
}

/** Normalises a SHA-256 given as hex or base64 to lower-case hex, or undefined when it is not 32 bytes. */
function normaliseSha256(value: string, encoding: 'hex' | 'base64'): string | undefined {
  if (encoding === 'hex') return /^[0-9a-fA-F]{64}$/.test(value) ? value.toLowerCase() : undefined;
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return undefined;
  const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === 32 ? bytes.toString('hex') : undefined;
}

/** The header names whose create-answer URLs a contract's result sources may need later (V2). */
export function createHeaderNames(contract: ProviderContract): string[] {
  const lists = [
    contract.result.url,
    ...Object.values(contract.status.readings ?? {}).map((r) => r.result ?? []),
    contract.status.result ?? [],
  ];
  const names = new Set<string>();
  for (const list of lists) for (const source of list) if (source.from === 'create_header') names.add(source.name);
  return [...names];
}

/** Checks an inline result against `maxInlineBytes`; returns it, or undefined with a problem. */
function inlineResult(contract: ProviderContract, value: unknown, what: string, problems: Problems): unknown {
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  if (bytes > contract.result.maxInlineBytes) {
    problems.add(
      `the inline result in ${what} is ${bytes} bytes, more than maxInlineBytes ${contract.result.maxInlineBytes}`,
    );
    return undefined;
  }
  return value;
}

type Located =
  { kind: 'url'; url: string } | { kind: 'inline'; value: unknown } | { kind: 'absent' } | { kind: 'problem' };

function locateUrl(
  contract: ProviderContract,
  raw: string,
  what: string,
  problems: Problems,
  flags: InterpretFlags,
): Located {
  const resolved = resolveOnOrigin(contract.baseUrl, raw, what);
  if (!resolved.ok) {
    problems.add(resolved.problem);
    if (resolved.errorCategory === 'foreign_origin') flags.foreign = true;
    return { kind: 'problem' };
  }
  if (resolved.url.length > MAX_URL_CHARS) {
    problems.add(
      `${what} is ${resolved.url.length} characters, more than ${MAX_URL_CHARS}: refused whole, never shortened`,
    );
    return { kind: 'problem' };
  }
  return { kind: 'url', url: resolved.url };
}

function locate(
  contract: ProviderContract,
  source: ResultSource,
  json: unknown,
  context: ResultContext,
  problems: Problems,
  flags: InterpretFlags,
): Located {
  switch (source.from) {
    case 'template': {
      const defaults = Object.entries(contract.variables ?? {}).flatMap(([name, rules]) =>
        rules.default === undefined ? [] : [[name, rules.default] as const],
      );
      const expanded = expandTemplate(contract.baseUrl, source.path, {
        ...Object.fromEntries(defaults),
        ...context.variables,
        jobId: context.jobId,
      });
      return expanded.ok ? { kind: 'url', url: expanded.url } : { kind: 'absent' };
    }
    case 'status_field': {
      const read = readField(json, source.field);
      if (!read.found || read.value === null) return { kind: 'absent' };
      if (typeof read.value !== 'string' || read.value === '') {
        problems.add(`field ${source.field} is not a URL string`);
        return { kind: 'problem' };
      }
      return locateUrl(contract, read.value, `the result URL in ${source.field}`, problems, flags);
    }
    case 'create_header': {
      const value = context.createHeaders?.[source.name];
      return value === undefined
        ? { kind: 'absent' }
        : locateUrl(contract, value, `the result URL in the create answer's ${source.name}`, problems, flags);
    }
    case 'request_url':
      return context.requestUrl === undefined
        ? { kind: 'absent' }
        : locateUrl(contract, context.requestUrl, 'the create request URL', problems, flags);
    case 'inline': {
      if (source.field === undefined) return json === undefined ? { kind: 'absent' } : { kind: 'inline', value: json };
      const read = readField(json, source.field);
      return !read.found || read.value === null ? { kind: 'absent' } : { kind: 'inline', value: read.value };
    }
  }
}

function describeResultSource(source: ResultSource): string {
  switch (source.from) {
    case 'template':
      return `template ${source.path}`;
    case 'status_field':
      return `field ${source.field}`;
    case 'create_header':
      return `create answer header ${source.name}`;
    case 'request_url':
      return 'the create request URL';
    case 'inline':
      return source.field === undefined ? 'the answer body' : `inline field ${source.field}`;
  }
}

/**
 * Reads where the result of a successful job is (R1, R2, V2), with the integrity fields of the success answer.
 * `sources` are the reading's own (else `result.url`); the first found wins. A job without a result is not
 * ready (P7) unless `result.required` is false: then the reference says `none`.
 */
export function readResultReference(
  contract: ProviderContract,
  sources: readonly ResultSource[],
  json: unknown,
  context: ResultContext,
  problems: Problems,
  flags: InterpretFlags,
): ResultReference | undefined {
  const rules = contract.result;
  const reference: ResultReference = {};
  let problem = false;
  for (const source of sources) {
    const located = locate(contract, source, json, context, problems, flags);
    if (located.kind === 'absent') continue;
    if (located.kind === 'problem') problem = true;
    else if (located.kind === 'url') reference.url = located.url;
    else {
      const inline = inlineResult(contract, located.value, describeResultSource(source), problems);
      if (inline === undefined) problem = true;
      else reference.inline = inline;
    }
    break;
  }
  if (reference.url === undefined && reference.inline === undefined && !problem) {
    if (rules.required)
      problems.add(
        `a successful job without a result reference (${sources.map(describeResultSource).join(', ')}) is not ready (P7)`,
      );
    else reference.none = true;
  }
  readIntegrityFields(contract, json, reference, problems);
  return Object.keys(reference).length === 0 ? undefined : reference;
}

function readIntegrityFields(
  contract: ProviderContract,
  json: unknown,
  reference: ResultReference,
  problems: Problems,
): void {
  const rules = contract.result;
  if (rules.sha256?.from === 'status_field') {
    const read = readField(json, rules.sha256.field);
    if (read.found && read.value !== null) {
      const hex = typeof read.value === 'string' ? normaliseSha256(read.value, rules.sha256.encoding) : undefined;
      if (hex === undefined) problems.add(`field ${rules.sha256.field} is not a ${rules.sha256.encoding} SHA-256`);
      else reference.sha256 = hex;
    }
  }
  for (const [key, source] of [
    ['sizeBytes', rules.sizeBytes],
    ['recordCount', rules.recordCount],
  ] as const) {
    if (source?.from !== 'status_field') continue;
    const read = readField(json, source.field);
    if (!read.found || read.value === null) continue;
    const n = toNonNegativeInteger(read.value);
    if (n === undefined) problems.add(`field ${source.field} is not a non-negative integer`);
    else reference[key] = n;
  }
}

/**
 * Reads the integrity data a result answer carries in its headers (R2) as the contract names them, normalising
 * the SHA-256 to lower-case hex. Pure; safe to repeat.
 */
export function readResultIntegrity(
  contract: ProviderContract,
  headers: Readonly<Record<string, string>>,
): ResultIntegrity {
  const rules = contract.result;
  const out: ResultIntegrity = { contentTypeAccepted: true, problems: [] };
  const get = (name: string): string | undefined => {
    const value = headers[name.toLowerCase()];
    return value === undefined || value === '' ? undefined : value;
  };
  if (rules.sha256?.from === 'result_header') {
    const value = get(rules.sha256.name);
    if (value !== undefined) {
      const hex = normaliseSha256(value.trim(), rules.sha256.encoding);
      if (hex === undefined) out.problems.push(`header ${rules.sha256.name} is not a ${rules.sha256.encoding} SHA-256`);
      else out.sha256 = hex;
    }
  }
  for (const [key, source] of [
    ['sizeBytes', rules.sizeBytes],
    ['recordCount', rules.recordCount],
  ] as const) {
    if (source?.from !== 'result_header') continue;
    const value = get(source.name);
    if (value === undefined) continue;
    const n = toNonNegativeInteger(value.trim());
    if (n === undefined) out.problems.push(`header ${source.name} is not a non-negative integer`);
    else out[key] = n;
  }
  const contentType = get('content-type');
  if (contentType !== undefined) out.contentType = cut(contentType, 200);
  if (rules.contentType !== undefined) {
    const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    out.contentTypeAccepted = rules.contentType.expected.some((expected) => expected.toLowerCase() === media);
    if (!out.contentTypeAccepted)
      out.problems.push(
        `content type ${media === '' ? '(none)' : cut(media, 100)} is not one of ${rules.contentType.expected.join(', ')}`,
      );
  }
  return out;
}

/**
 * R3: counts the items of a batch result by the contract's `result.batch` rules, listing the failed items' IDs.
 * Returns undefined when the contract defines no batch shape. Pure; safe to repeat.
 */
export function countBatchItems(contract: ProviderContract, json: unknown): BatchCount | undefined {
  const rules = contract.result.batch;
  if (rules === undefined) return undefined;
  const out: BatchCount = {
    total: 0,
    succeeded: 0,
    failed: 0,
    failedItemIds: [],
    failedIdsTruncated: false,
    problems: [],
  };
  const items = readField(json, rules.itemsField);
  if (!items.found || !Array.isArray(items.value)) {
    out.problems.push(`field ${rules.itemsField} is ${items.found ? 'not an array' : 'missing'}`);
    return out;
  }
  items.value.forEach((item, index) => {
    out.total += 1;
    const status = readField(item, rules.statusField);
    const id = readField(item, rules.idField);
    const idText =
      id.found && (typeof id.value === 'string' || typeof id.value === 'number')
        ? cut(String(id.value), 500)
        : `#${index}`;
    if (!status.found || typeof status.value !== 'string') {
      out.problems.push(`${rules.itemsField}[${index}].${rules.statusField} is missing or not a string`);
      out.failed += 1;
    } else if (rules.failedValues.includes(status.value)) {
      out.failed += 1;
    } else {
      out.succeeded += 1;
      return;
    }
    if (out.failedItemIds.length < MAX_FAILED_IDS) out.failedItemIds.push(idText);
    else out.failedIdsTruncated = true;
  });
  if (out.problems.length > 100)
    out.problems = [...out.problems.slice(0, 100), `and ${out.problems.length - 100} more`];
  return out;
}
