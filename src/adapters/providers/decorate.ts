/**
 * Request decoration: what a contract adds to EVERY request it sends (create, status, cancel, result,
 * reconcile, and any URL read from an answer), applied after the request is built and before it is sent. Pure.
 *
 * - `headers`: each header with its value, fixed or from a fact of the operation (operation ID, trace ID, client
 *   reference, idempotency token, now, first-sent time). Precedence: a header the request builder already set
 *   wins (the create's idempotency-token and client-reference headers and `create.headers` are the action's own,
 *   more specific than a contract-wide default), except the builder's generic defaults
 *   ({@link BUILDER_DEFAULT_HEADERS}: `accept`), which a contract may replace
 *   (`Accept: application/vnd.github+json`).
 * - `query`: each parameter appended to the URL unless the URL already has one of that name, which is kept as it
 *   is (a poll URL that already says `api-version=2024-01-01` is not given a second one). Existing parameters are
 *   never re-encoded or reordered.
 *
 * A value that is not a valid single-line header value refuses the request (`invalid_input`, naming the header,
 * never the value): nothing is sent, and the observation says why.
 */
import { isHeaderValue } from '../http/options';
import { RESERVED_HEADERS, type HeaderValueSource, type ProviderContract } from './contract';
import { type BuildResult, type ProviderRequest } from './build';
import { factValue } from './build/request';

/** Headers the builders set as generic defaults; a contract-wide header of the same name replaces them. */
const BUILDER_DEFAULT_HEADERS: ReadonlySet<string> = new Set(['accept']);

/** The facts of an operation a contract-wide header may carry. */
export interface OperationFacts {
  /** Our operation ID. */
  readonly operationId: string;
  /** The operation's trace ID (T1). */
  readonly traceId: string;
  /** The client reference sent to the provider (the caller's, else the operation ID). */
  readonly clientReference: string;
  /** The idempotency token (I1). */
  readonly token: string;
  /** Now, epoch ms. */
  readonly nowMs: number;
  /** When the operation's create was first sent, epoch ms. */
  readonly firstSentAtMs: number;
}

/** What decoration reads of a contract. */
export type Decoration = Pick<ProviderContract, 'headers' | 'query'>;

function valueOf(source: HeaderValueSource, facts: OperationFacts): string {
  // OperationFacts holds every fact a source can name, so there is always a value.
  return 'value' in source ? source.value : factValue(source.from, facts)!;
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * The URL with `query` appended, each parameter only when the URL has none of that name. The URL's own query
 * and fragment are kept byte for byte. Pure.
 */
export function withQuery(url: string, query: Readonly<Record<string, string>> | undefined): string {
  const entries = Object.entries(query ?? {});
  if (entries.length === 0) return url;
  const hashAt = url.indexOf('#');
  const beforeHash = hashAt === -1 ? url : url.slice(0, hashAt);
  const fragment = hashAt === -1 ? '' : url.slice(hashAt);
  const queryAt = beforeHash.indexOf('?');
  const existing = queryAt === -1 ? '' : beforeHash.slice(queryAt + 1);
  const present = new Set(
    existing
      .split('&')
      .filter((pair) => pair !== '')
      .map((pair) => decodeName(pair.split('=', 1)[0]!)),
  );
  const added = entries
    .filter(([name]) => !present.has(name))
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  if (added.length === 0) return url;
  const separator = queryAt === -1 ? '?' : existing === '' || existing.endsWith('&') ? '' : '&';
  return `${beforeHash}${separator}${added.join('&')}${fragment}`;
}

/** Adds the contract's `headers` and `query` to a built request (see the module comment). Pure. */
export function decorateRequest(contract: Decoration, request: ProviderRequest, facts: OperationFacts): BuildResult {
  const headers: Record<string, string> = { ...request.headers };
  for (const [rawName, source] of Object.entries(contract.headers ?? {})) {
    const name = rawName.toLowerCase();
    if (RESERVED_HEADERS.has(name)) {
      return {
        kind: 'refused',
        errorCategory: 'invalid_input',
        problem: `the header ${name} is set by the HTTP layer, never by a contract`,
      };
    }
    const value = valueOf(source, facts);
    if (!isHeaderValue(value)) {
      return {
        kind: 'refused',
        errorCategory: 'invalid_input',
        problem: `the contract header ${name} would contain a line break or a control character; nothing was sent`,
      };
    }
    if (headers[name] !== undefined && !BUILDER_DEFAULT_HEADERS.has(name)) continue;
    headers[name] = value;
  }
  return { kind: 'request', request: { ...request, url: withQuery(request.url, contract.query), headers } };
}

/** {@link decorateRequest} over a build result: a refusal, or a provider without a contract, passes unchanged. */
export function decorateBuilt(
  contract: Decoration | undefined,
  built: BuildResult,
  facts: OperationFacts,
): BuildResult {
  if (built.kind !== 'request' || contract === undefined) return built;
  if (contract.headers === undefined && contract.query === undefined) return built;
  return decorateRequest(contract, built.request, facts);
}
