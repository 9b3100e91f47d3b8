/**
 * The create request (C1-C3, I1): the payload as the body (whole, wrapped, or placed by a JSON template), the
 * idempotency token and the client reference where the contract says, the create's query and headers. Pure.
 */
import { type ProviderContract } from '../contract';
import { callValues, declaredOf, expandJson, isLeftOut, setHeaders, templateUrl, type VariableRules } from './template';
import { refused, type BuildResult, type CreateRequestInput } from './request';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Refuses a token or client reference that could not be sent as it is. */
function inputProblem(contract: ProviderContract, input: CreateRequestInput): BuildResult | undefined {
  if (typeof input.token !== 'string' || input.token === '' || /[\r\n]/.test(input.token))
    return refused('invalid_input', 'the idempotency token must be a non-empty single-line string');
  if (input.clientReference !== undefined && /[\r\n]/.test(input.clientReference))
    return refused('invalid_input', 'the client reference must be a single line');
  if (contract.create.clientReference !== undefined && input.clientReference === undefined)
    return refused('missing_input', 'the contract sends a client reference; give clientReference');
  return undefined;
}

/** The body before the token and the reference go in: the payload, wrapped, templated, or none. */
function createBody(
  contract: ProviderContract,
  input: CreateRequestInput,
  declared: Readonly<Record<string, VariableRules>>,
): { ok: true; json: unknown } | BuildResult {
  const body = contract.create.body;
  switch (body.mode) {
    case 'none':
      return { ok: true, json: undefined };
    case 'wrapped':
      return { ok: true, json: { [body.field]: input.payload } };
    case 'payload':
      return { ok: true, json: input.payload };
    case 'template': {
      const values = callValues(declared, input, {});
      const json = expandJson(body.json, values, { value: input.payload });
      if (!json.ok) return refused('missing_input', `the body template needs {${json.name}}`);
      return { ok: true, json: isLeftOut(json.value) ? undefined : json.value };
    }
  }
}

/** Puts the token and the client reference into the body's top level, refusing a payload that holds another. */
function withBodyFields(
  contract: ProviderContract,
  input: CreateRequestInput,
  json: unknown,
): { ok: true; json: unknown } | BuildResult {
  const rules = contract.create;
  const fields: [string, string][] = [];
  if (rules.idempotencyToken?.in === 'body') fields.push([rules.idempotencyToken.field, input.token]);
  if (rules.clientReference?.in === 'body' && input.clientReference !== undefined)
    fields.push([rules.clientReference.field, input.clientReference]);
  if (fields.length === 0 || json === undefined) return { ok: true, json };
  if (!isPlainObject(json))
    return refused('invalid_input', 'the payload must be a JSON object: the contract puts fields into the body');
  const target: Record<string, unknown> = { ...json };
  for (const [field, value] of fields) {
    if (Object.prototype.hasOwnProperty.call(target, field) && target[field] !== value)
      return refused('invalid_input', `the payload already has a different "${field}", which the contract reserves`);
    target[field] = value;
  }
  return { ok: true, json: target };
}

/**
 * Builds the create request (C1-C3, I1): the body, the idempotency token and the client reference where the
 * contract says, the create's query and headers. Refuses a payload that already holds the token's or the
 * reference's body field with another value. Pure; the same input gives the same request.
 */
export function buildCreateRequest(contract: ProviderContract, input: CreateRequestInput): BuildResult {
  const rules = contract.create;
  const declared = declaredOf(contract);
  const problem = inputProblem(contract, input);
  if (problem !== undefined) return problem;
  const values = callValues(declared, input, {});
  const url = templateUrl(contract.baseUrl, rules, values.values);
  if (!('ok' in url)) return url;
  const body = createBody(contract, input, declared);
  if (!('ok' in body)) return body;
  const placed = withBodyFields(contract, input, body.json);
  if (!('ok' in placed)) return placed;
  const json = placed.json;

  const headers: Record<string, string> = { accept: 'application/json' };
  if (json !== undefined && rules.body.mode !== 'none') headers['content-type'] = rules.body.contentType;
  const headerProblem = setHeaders(headers, rules.headers, input, values.values);
  if (headerProblem !== undefined) return headerProblem;
  if (rules.idempotencyToken?.in === 'header') headers[rules.idempotencyToken.name] = input.token;
  if (rules.clientReference?.in === 'header' && input.clientReference !== undefined)
    headers[rules.clientReference.name] = input.clientReference;
  return {
    kind: 'request',
    request: { method: rules.method, url: url.url, headers, ...(json === undefined ? {} : { json }) },
  };
}
