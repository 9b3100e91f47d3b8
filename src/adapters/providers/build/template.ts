/**
 * Filling a call's request template (`contract/request.ts`): the path under `baseUrl` (RFC 6570 level 3, values
 * percent-encoded, `{+name}` keeping only safe slashes), the query parameters, the headers and the body (a JSON
 * template or a raw string, with its content type). Every value comes from the same variables: the job ID, the
 * poll URL, the token, the client reference, our operation ID, the paging token and the operation's variables.
 * Pure; the same input gives the same request.
 */
import { isHeaderValue } from '../../http/options';
import { MAX_URL_CHARS } from '../../../core/observation';
import { type ProviderContract } from '../contract';
import { type HeaderValueSource } from '../contract/common';
import {
  exactPlaceholder,
  TEXT_PLACEHOLDER,
  textPlaceholders,
  type CallHeaderSource,
  type RequestTemplate,
} from '../contract/request';
import { appendQuery, expandTemplate, type TemplateValues } from '../urls';
import { factValue, refused, type BuildResult, type RequestFacts, type ProviderRequest } from './request';

/** What expansion needs of a declared operation variable: its type (an integer is a number in JSON) and default. */
export interface VariableRules {
  readonly type: 'string' | 'integer';
  readonly default?: string;
}

/** The operation variables a contract declares, as expansion needs them (type, default). */
export function declaredOf(contract: ProviderContract): Readonly<Record<string, VariableRules>> {
  return contract.variables ?? {};
}

/** The values of one call: the operation's facts and variables, and what this call knows of the job. */
export interface CallValues {
  readonly values: TemplateValues;
  readonly declared: Readonly<Record<string, VariableRules>>;
}

/**
 * The values a call's templates are filled from: declared defaults, then the operation's variables, then the
 * built-in names (a declared variable never takes a built-in name). An empty value counts as unset.
 */
export function callValues(
  declared: Readonly<Record<string, VariableRules>>,
  facts: RequestFacts,
  job: { jobId?: string; pollUrl?: string; nextToken?: string },
): CallValues {
  const defaults = Object.fromEntries(
    Object.entries(declared).flatMap(([name, rules]) => (rules.default === undefined ? [] : [[name, rules.default]])),
  );
  return {
    declared,
    values: {
      ...defaults,
      ...facts.variables,
      jobId: job.jobId,
      pollUrl: job.pollUrl,
      nextToken: job.nextToken,
      token: facts.token,
      clientReference: facts.clientReference,
      operationId: facts.operationId,
    },
  };
}

const given = (values: TemplateValues, name: string): string | undefined => {
  const value = values[name];
  return value === undefined || value === '' ? undefined : value;
};

/** A text template with every `{name}` replaced by its value as it is; the first unset name, when one is. */
function interpolate(text: string, values: TemplateValues): { ok: true; text: string } | { ok: false; name: string } {
  const missing = textPlaceholders(text).find((name) => given(values, name) === undefined);
  if (missing !== undefined) return { ok: false, name: missing };
  return { ok: true, text: text.replace(TEXT_PLACEHOLDER, (_m, name: string) => given(values, name)!) };
}

/** The value of a header source, or why there is none. */
function headerValue(
  source: CallHeaderSource | HeaderValueSource,
  facts: RequestFacts,
  values: TemplateValues,
): { ok: true; value: string } | { ok: false; problem: string } {
  if ('value' in source) return { ok: true, value: source.value };
  if ('template' in source) {
    const text = interpolate(source.template, values);
    return text.ok ? { ok: true, value: text.text } : { ok: false, problem: `needs {${text.name}}` };
  }
  const value = factValue(source.from, facts);
  return value === undefined ? { ok: false, problem: `needs a value from ${source.from}` } : { ok: true, value };
}

/** Sets a call's own headers over `headers` (lower-case names); a refusal when a value is missing or unsafe. */
export function setHeaders(
  headers: Record<string, string>,
  sources: Readonly<Record<string, CallHeaderSource>> | undefined,
  facts: RequestFacts,
  values: TemplateValues,
): BuildResult | undefined {
  for (const [name, source] of Object.entries(sources ?? {})) {
    const value = headerValue(source, facts, values);
    if (!value.ok) return refused('missing_input', `header ${name} ${value.problem}`);
    if (!isHeaderValue(value.value))
      return refused('invalid_input', `header ${name} would contain a line break or a control character`);
    headers[name.toLowerCase()] = value.value;
  }
  return undefined;
}

/** Marks a JSON template member whose exact placeholder is unset: it is left out. */
const LEFT_OUT = Symbol('left out');

type JsonExpanded = { ok: true; value: unknown } | { ok: false; name: string };

/**
 * Fills a JSON template: a string that is exactly `{name}` becomes the value (a number for an integer variable;
 * `{payload}` the payload, when given) or is left out when unset; other strings have their placeholders replaced.
 */
export function expandJson(template: unknown, call: CallValues, payload?: { value: unknown }): JsonExpanded {
  if (typeof template === 'string') {
    const exact = exactPlaceholder(template);
    if (exact === 'payload' && payload !== undefined) return { ok: true, value: payload.value };
    if (exact !== undefined) {
      const value = given(call.values, exact);
      if (value === undefined) return { ok: true, value: LEFT_OUT };
      return { ok: true, value: call.declared[exact]?.type === 'integer' ? Number(value) : value };
    }
    const text = interpolate(template, call.values);
    return text.ok ? { ok: true, value: text.text } : { ok: false, name: text.name };
  }
  if (Array.isArray(template)) {
    const items: unknown[] = [];
    for (const item of template) {
      const expanded = expandJson(item, call, payload);
      if (!expanded.ok) return expanded;
      if (expanded.value !== LEFT_OUT) items.push(expanded.value);
    }
    return { ok: true, value: items };
  }
  if (template !== null && typeof template === 'object') {
    const members: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(template)) {
      const expanded = expandJson(item, call, payload);
      if (!expanded.ok) return expanded;
      if (expanded.value !== LEFT_OUT) members[key] = expanded.value;
    }
    return { ok: true, value: members };
  }
  return { ok: true, value: template };
}

/** The URL of a call: its path template under `baseUrl`, then its query parameters. */
export function templateUrl(
  baseUrl: string,
  template: Pick<RequestTemplate, 'path' | 'query'> & { path: string },
  values: TemplateValues,
): { ok: true; url: string } | BuildResult {
  const expanded = expandTemplate(baseUrl, template.path, values);
  if (!expanded.ok) return refused('missing_input', expanded.problem);
  const parameters: [string, string][] = [];
  for (const [name, value] of Object.entries(template.query ?? {})) {
    const text = interpolate(value, values);
    if (text.ok && text.text !== '') parameters.push([name, text.text]);
  }
  const url = appendQuery(expanded.url, parameters);
  if (url.length > MAX_URL_CHARS)
    return refused('invalid_url', `the request URL is longer than ${MAX_URL_CHARS} characters: refused whole`);
  return { ok: true, url };
}

/**
 * A whole request from a call's template, to `url` when given (a poll URL), else to the template's path: the
 * builder's default `accept` (a call's own `accept` header replaces it), the body with its content type, the
 * call's headers. Pure.
 */
export function templateRequest(
  baseUrl: string,
  template: RequestTemplate & { method: string },
  call: CallValues,
  facts: RequestFacts,
  options: { accept: string; url?: string },
): BuildResult {
  let url = options.url;
  if (url === undefined) {
    if (template.path === undefined) return refused('missing_input', 'the call has no path');
    const built = templateUrl(baseUrl, { ...template, path: template.path }, call.values);
    if (!('ok' in built)) return built;
    url = built.url;
  }
  const headers: Record<string, string> = { accept: options.accept };
  const request: ProviderRequest = { method: template.method, url, headers };
  const body = template.body;
  if (body !== undefined && 'json' in body) {
    const json = expandJson(body.json, call);
    if (!json.ok) return refused('missing_input', `the body template needs {${json.name}}`);
    if (json.value !== LEFT_OUT) {
      request.json = json.value;
      headers['content-type'] = body.contentType;
    }
  } else if (body !== undefined) {
    const raw = interpolate(body.raw, call.values);
    if (!raw.ok) return refused('missing_input', `the body template needs {${raw.name}}`);
    request.body = raw.text;
    headers['content-type'] = body.contentType;
  }
  const problem = setHeaders(headers, template.headers, facts, call.values);
  return problem ?? { kind: 'request', request };
}

/** Whether a JSON template member was left out (its exact placeholder unset). */
export function isLeftOut(value: unknown): boolean {
  return value === LEFT_OUT;
}
