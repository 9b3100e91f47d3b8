/**
 * Pure builders of the requests a provider contract describes: method, URL (always on the contract's origin,
 * C4), headers and JSON body. They never add credentials or trace headers: the HTTP layer adds those at the
 * last moment, for the contract's origin only. A request that cannot be built (a foreign status URL, a missing
 * job ID, an unsupported action) is a `refused` result, never a request.
 */
import { answerSignal } from './answer-signal';
import { type Observation } from '../../core/observation';
import { type Action } from '../../core/journal';
import { type HeaderValueSource, type ProviderContract } from './contract';
import { MAX_URL_CHARS } from '../../core/observation';
import { expandTemplate, resolveOnOrigin } from './urls';

/** A request to send to the provider, without credentials. Header names are lower-case. */
export interface ProviderRequest {
  method: string;
  /** Absolute URL on the contract's origin. */
  url: string;
  headers: Record<string, string>;
  /** The JSON body, when there is one. */
  json?: unknown;
}

/** Why no request was built. */
type RefusalCategory = 'foreign_origin' | 'invalid_url' | 'missing_input' | 'invalid_input' | 'unsupported';

/** A built request, or a refusal with its category and a problem naming the cause. */
export type BuildResult =
  { kind: 'request'; request: ProviderRequest } | { kind: 'refused'; errorCategory: RefusalCategory; problem: string };

/** The facts of an operation a request may carry in a header (`headers: { name: { from: ... } }`); never a secret. */
interface RequestFacts {
  /** The idempotency token (I1); never the trace ID (I4). */
  token?: string;
  /** Our operation ID, sent where the contract says (used by reconciliation). */
  clientReference?: string;
  operationId?: string;
  traceId?: string;
  /** Now, epoch ms (for `now_http_date`). */
  nowMs: number;
  /** When this create was first sent, epoch ms (for `first_sent_http_date`; defaults to `nowMs`). */
  firstSentAtMs?: number;
}

/** Input of {@link buildCreateRequest}. */
export interface CreateRequestInput extends RequestFacts {
  /** The request payload (a JSON value; an object when a token or reference goes in the body). */
  payload: unknown;
  /** The idempotency token (I1), sent where the contract puts one. */
  token: string;
}

const JSON_HEADERS = { accept: 'application/json' } as const;

function refused(errorCategory: RefusalCategory, problem: string): BuildResult {
  return { kind: 'refused', errorCategory, problem };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The value of a header source for these facts, `undefined` when the fact is not known. Pure. */
function headerValue(source: HeaderValueSource, facts: RequestFacts): string | undefined {
  if ('value' in source) return source.value;
  switch (source.from) {
    case 'now_http_date':
      return new Date(facts.nowMs).toUTCString();
    case 'first_sent_http_date':
      return new Date(facts.firstSentAtMs ?? facts.nowMs).toUTCString();
    case 'token':
      return facts.token;
    case 'client_reference':
      return facts.clientReference;
    case 'operation_id':
      return facts.operationId;
    case 'trace_id':
      return facts.traceId;
  }
}

/**
 * Builds the create request (C1-C3, I1): the payload as the body (or wrapped), the idempotency token and the
 * client reference where the contract says, and the extra headers. Refuses a payload that already holds the
 * token's or the reference's body field with another value. Pure; the same input gives the same request.
 */
export function buildCreateRequest(contract: ProviderContract, input: CreateRequestInput): BuildResult {
  const rules = contract.create;
  if (typeof input.token !== 'string' || input.token === '' || /[\r\n]/.test(input.token))
    return refused('invalid_input', 'the idempotency token must be a non-empty single-line string');
  if (input.clientReference !== undefined && /[\r\n]/.test(input.clientReference))
    return refused('invalid_input', 'the client reference must be a single line');
  if (rules.clientReference !== undefined && input.clientReference === undefined)
    return refused('missing_input', 'the contract sends a client reference; give clientReference');
  const url = expandTemplate(contract.baseUrl, rules.path, { clientReference: input.clientReference });
  if (!url.ok) return refused('missing_input', url.problem);

  const bodyFields: [string, string][] = [];
  if (rules.idempotencyToken?.in === 'body') bodyFields.push([rules.idempotencyToken.field, input.token]);
  if (rules.clientReference?.in === 'body' && input.clientReference !== undefined)
    bodyFields.push([rules.clientReference.field, input.clientReference]);
  let json: unknown;
  if (rules.body.mode === 'none') {
    json = undefined;
  } else if (rules.body.mode === 'wrapped') {
    json = { [rules.body.field]: input.payload };
  } else if (bodyFields.length > 0) {
    if (!isPlainObject(input.payload))
      return refused('invalid_input', 'the payload must be a JSON object: the contract puts fields into the body');
    json = { ...input.payload };
  } else {
    json = input.payload;
  }
  for (const [field, value] of bodyFields) {
    const target = json as Record<string, unknown>;
    if (Object.prototype.hasOwnProperty.call(target, field) && target[field] !== value) {
      return refused('invalid_input', `the payload already has a different "${field}", which the contract reserves`);
    }
    target[field] = value;
  }

  const headers: Record<string, string> = {
    ...JSON_HEADERS,
    ...(json === undefined ? {} : { 'content-type': 'application/json' }),
  };
  for (const [name, source] of Object.entries(rules.headers ?? {})) {
    const value = headerValue(source, input);
    if (value === undefined)
      return refused('missing_input', `header ${name} needs a value from ${'from' in source ? source.from : 'value'}`);
    if (/[\r\n]/.test(value)) return refused('invalid_input', `header ${name} would contain a line break`);
    headers[name.toLowerCase()] = value;
  }
  if (rules.idempotencyToken?.in === 'header') headers[rules.idempotencyToken.name] = input.token;
  if (rules.clientReference?.in === 'header' && input.clientReference !== undefined)
    headers[rules.clientReference.name] = input.clientReference;
  return {
    kind: 'request',
    request: { method: rules.method, url: url.url, headers, ...(json === undefined ? {} : { json }) },
  };
}

/** Resolves a URL read from an answer for a request: on the contract's origin (C4) and whole (V1), or refused. */
function urlForRequest(
  contract: ProviderContract,
  candidate: string,
  what: string,
): { ok: true; url: string } | BuildResult {
  const resolved = resolveOnOrigin(contract.baseUrl, candidate, what);
  if (!resolved.ok) return refused(resolved.errorCategory, resolved.problem);
  if (resolved.url.length > MAX_URL_CHARS)
    return refused('invalid_url', `${what} is longer than ${MAX_URL_CHARS} characters: refused whole, never shortened`);
  return { ok: true, url: resolved.url };
}

/**
 * Builds the status request (P9: a read): the poll URL from the create answer when the contract prefers it
 * and it is on the contract's origin, else the documented path template with the job ID.
 */
export function buildStatusRequest(
  contract: ProviderContract,
  input: { jobId?: string; statusUrl?: string },
): BuildResult {
  const rules = contract.status;
  if (rules.useStatusUrl && input.statusUrl !== undefined) {
    const resolved = urlForRequest(contract, input.statusUrl, 'the poll URL');
    if (!('ok' in resolved)) return resolved;
    return { kind: 'request', request: { method: rules.method, url: resolved.url, headers: { ...JSON_HEADERS } } };
  }
  if (rules.path === undefined)
    return refused(
      'missing_input',
      'the contract reads status only at the poll URL from the create answer; give statusUrl',
    );
  const url = expandTemplate(contract.baseUrl, rules.path, { jobId: input.jobId });
  if (!url.ok) return refused('missing_input', url.problem);
  return { kind: 'request', request: { method: rules.method, url: url.url, headers: { ...JSON_HEADERS } } };
}

/** Builds the cancel request (X1) with the stored job ID; refused as `unsupported` when the contract has no cancel. */
export function buildCancelRequest(contract: ProviderContract, input: { jobId?: string }): BuildResult {
  if (contract.cancel === undefined) return refused('unsupported', `provider ${contract.name} offers no cancel`);
  const url = expandTemplate(contract.baseUrl, contract.cancel.path, { jobId: input.jobId });
  if (!url.ok) return refused('missing_input', url.problem);
  return { kind: 'request', request: { method: contract.cancel.method, url: url.url, headers: { ...JSON_HEADERS } } };
}

/**
 * Builds the result request (R1): the result URL of the observation's result reference (origin-checked, whole),
 * else the contract's template with the job ID.
 */
export function buildResultRequest(
  contract: ProviderContract,
  input: { jobId?: string; resultUrl?: string },
): BuildResult {
  if (input.resultUrl !== undefined) {
    const resolved = urlForRequest(contract, input.resultUrl, 'the result URL');
    if (!('ok' in resolved)) return resolved;
    return { kind: 'request', request: { method: 'GET', url: resolved.url, headers: { accept: '*/*' } } };
  }
  for (const source of contract.result.url) {
    if (source.from !== 'template') continue;
    const url = expandTemplate(contract.baseUrl, source.path, { jobId: input.jobId });
    if (!url.ok) return refused('missing_input', url.problem);
    return { kind: 'request', request: { method: 'GET', url: url.url, headers: { accept: '*/*' } } };
  }
  return refused('missing_input', 'no result URL: the contract reads it from the answers; give resultUrl');
}

/**
 * Builds the reconciliation request (U2): the list/lookup URL, or for `same_token_resend` the create request
 * again with the same token (I3; needs the same payload). Refused as `unsupported` for `none` (at-most-once
 * cannot be proven: the core escalates).
 */
export function buildReconcileRequest(
  contract: ProviderContract,
  input: Partial<CreateRequestInput> & { nowMs: number },
): BuildResult {
  const method = contract.reconciliation;
  switch (method.method) {
    case 'none':
      return refused('unsupported', `provider ${contract.name} offers no way to find a job after a lost create answer`);
    case 'same_token_resend':
      if (input.token === undefined || !('payload' in input))
        return refused('missing_input', 'same_token_resend needs the original payload and token');
      return buildCreateRequest(contract, { ...input, token: input.token, payload: input.payload, nowMs: input.nowMs });
    case 'list_by_client_reference':
    case 'lookup_by_token':
    case 'lookup': {
      const url = expandTemplate(contract.baseUrl, method.path, {
        clientReference: input.clientReference,
        token: input.token,
      });
      if (!url.ok) return refused('missing_input', url.problem);
      return { kind: 'request', request: { method: 'GET', url: url.url, headers: { ...JSON_HEADERS } } };
    }
  }
}

/** The observation recording a refused build (`transport: 'refused'`): nothing was sent. */
export function refusedObservation(
  action: Action,
  result: Extract<BuildResult, { kind: 'refused' }>,
  atMs: number,
): Observation {
  return {
    action,
    transport: 'refused',
    signal: answerSignal({ transport: 'refused', errorCategory: result.errorCategory }),
    receivedAtMs: atMs,
    errorCategory: result.errorCategory,
    parseProblem: result.problem.slice(0, 2000),
  };
}
