/**
 * Pure builders of the requests a provider contract describes: every call is a request template (method, URL
 * always on the contract's origin (C4), query, headers, a JSON or raw body with its content type) filled from the
 * same variables (`build/template.ts`). They never add credentials or trace headers: the HTTP layer adds those at
 * the last moment, for the contract's origin only. A request that cannot be built (a foreign status URL, a
 * missing job ID, an unsupported action) is a `refused` result, never a request.
 */
import { answerSignal } from './answer-signal';
import { type Observation } from '../../core/observation';
import { type Action } from '../../core/journal';
import { MAX_URL_CHARS } from '../../core/observation';
import { type ProviderContract, type RequestTemplate, type ResultSource } from './contract';
import { resolveOnOrigin } from './urls';
import { buildCreateRequest } from './build/create';
import {
  refused,
  type BuildResult,
  type CreateRequestInput,
  type JobRequestInput,
  type ResultRequestInput,
} from './build/request';
import { callValues, declaredOf, templateRequest } from './build/template';

export { buildCreateRequest } from './build/create';
export type {
  BuildResult,
  CreateRequestInput,
  JobRequestInput,
  RequestFacts,
  ProviderRequest,
  ResultRequestInput,
} from './build/request';

const JSON_ACCEPT = 'application/json';

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
 * Builds the status request (P9): the poll URL from the create answer when the contract prefers it and it is on
 * the contract's origin, else the status path template; the status headers and body go with either.
 */
export function buildStatusRequest(contract: ProviderContract, input: JobRequestInput): BuildResult {
  const rules = contract.status;
  const values = callValues(declaredOf(contract), input, { jobId: input.jobId, pollUrl: input.statusUrl });
  if (rules.useStatusUrl && input.statusUrl !== undefined) {
    const resolved = urlForRequest(contract, input.statusUrl, 'the poll URL');
    if (!('ok' in resolved)) return resolved;
    return templateRequest(contract.baseUrl, rules, values, input, { accept: JSON_ACCEPT, url: resolved.url });
  }
  if (rules.path === undefined)
    return refused(
      'missing_input',
      'the contract reads status only at the poll URL from the create answer; give statusUrl',
    );
  return templateRequest(contract.baseUrl, rules, values, input, { accept: JSON_ACCEPT });
}

/** Builds the cancel request (X1) with the stored job ID; refused as `unsupported` when the contract has no cancel. */
export function buildCancelRequest(contract: ProviderContract, input: JobRequestInput): BuildResult {
  if (contract.cancel === undefined) return refused('unsupported', `provider ${contract.name} offers no cancel`);
  const values = callValues(declaredOf(contract), input, { jobId: input.jobId, pollUrl: input.statusUrl });
  return templateRequest(contract.baseUrl, contract.cancel, values, input, { accept: JSON_ACCEPT });
}

type TemplateSource = Extract<ResultSource, { from: 'template' }>;

/** Every result request template of the contract: `result.url` first, then the status readings' own lists. */
function resultTemplates(contract: ProviderContract): TemplateSource[] {
  const lists = [
    contract.result.url,
    contract.status.result ?? [],
    ...Object.values(contract.status.readings ?? {}).map((reading) => reading.result ?? []),
  ];
  return lists.flat().filter((source): source is TemplateSource => source.from === 'template');
}

/**
 * Builds the result request (R1): under token paging, the result request template again with `{nextToken}`; for
 * the result URL of the observation's result reference, the template it was made from (its method, headers and
 * body), else a GET of that URL (origin-checked, whole); without one, the first template of `result.url`.
 */
export function buildResultRequest(contract: ProviderContract, input: ResultRequestInput): BuildResult {
  const values = callValues(declaredOf(contract), input, {
    jobId: input.jobId,
    pollUrl: input.statusUrl,
    nextToken: input.nextToken,
  });
  const first = contract.result.url.find((source): source is TemplateSource => source.from === 'template');
  const send = (template: TemplateSource): BuildResult =>
    templateRequest(contract.baseUrl, template, values, input, { accept: '*/*' });
  if (input.nextToken !== undefined)
    return first === undefined ? refused('missing_input', 'token paging needs a result request template') : send(first);
  if (input.resultUrl !== undefined) {
    const resolved = urlForRequest(contract, input.resultUrl, 'the result URL');
    if (!('ok' in resolved)) return resolved;
    for (const template of resultTemplates(contract)) {
      const built = send(template);
      if (built.kind === 'request' && built.request.url === resolved.url) return built;
    }
    return { kind: 'request', request: { method: 'GET', url: resolved.url, headers: { accept: '*/*' } } };
  }
  if (first !== undefined) return send(first);
  return refused('missing_input', 'no result URL: the contract reads it from the answers; give resultUrl');
}

/** The request template of a list or lookup reconciliation, or undefined for a method that sends none. */
function reconcileTemplate(
  method: ProviderContract['reconciliation'],
): (RequestTemplate & { method: string }) | undefined {
  if (!('path' in method)) return undefined;
  return {
    method: 'httpMethod' in method ? method.httpMethod : 'GET',
    path: method.path,
    ...('query' in method ? { query: method.query } : {}),
    ...('headers' in method ? { headers: method.headers } : {}),
    ...('body' in method ? { body: method.body } : {}),
  };
}

/**
 * Builds the reconciliation request (U2): the list or lookup request, or for `same_token_resend` the create
 * request again with the same token (I3; needs the same payload). Refused as `unsupported` for `none`
 * (at-most-once cannot be proven: the core escalates).
 */
export function buildReconcileRequest(
  contract: ProviderContract,
  input: Partial<CreateRequestInput> & { nowMs: number },
): BuildResult {
  const method = contract.reconciliation;
  if (method.method === 'none')
    return refused('unsupported', `provider ${contract.name} offers no way to find a job after a lost create answer`);
  if (method.method === 'same_token_resend') {
    if (input.token === undefined || !('payload' in input))
      return refused('missing_input', 'same_token_resend needs the original payload and token');
    return buildCreateRequest(contract, { ...input, token: input.token, payload: input.payload, nowMs: input.nowMs });
  }
  const template = reconcileTemplate(method);
  if (template === undefined) return refused('unsupported', `reconciliation ${method.method} sends no request`);
  const values = callValues(declaredOf(contract), input, {});
  return templateRequest(contract.baseUrl, template, values, input, { accept: JSON_ACCEPT });
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
