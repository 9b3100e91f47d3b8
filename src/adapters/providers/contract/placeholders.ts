/**
 * The checks that span a contract's request templates (`contract/request.ts`): every placeholder names a variable
 * its call can fill, `{+name}` only where a value may hold a `/`, no header is silently overridden, and token
 * paging has a result request to repeat. They read the document defensively, so they run (and report) even when
 * another field of the document is malformed.
 */
import { type z } from 'zod';
import { parseUrlTemplate } from '../urls';
import { exactPlaceholder, textPlaceholders } from './request';

/** The calls a contract describes, as the placeholder rules name them. */
type TemplateCall = 'create' | 'status' | 'cancel' | 'result' | 'reconciliation';

/**
 * The built-in variables each call can fill: the job ID and poll URL exist once a job does; the token, the client
 * reference and our operation ID always. `payload` (the create body template) and `nextToken` (the result request
 * under token paging) are checked on their own.
 */
const CALL_VARIABLES: Readonly<Record<TemplateCall, readonly string[]>> = {
  create: ['token', 'clientReference', 'operationId'],
  status: ['jobId', 'pollUrl', 'token', 'clientReference', 'operationId'],
  cancel: ['jobId', 'pollUrl', 'token', 'clientReference', 'operationId'],
  result: ['jobId', 'pollUrl', 'token', 'clientReference', 'operationId'],
  reconciliation: ['token', 'clientReference', 'operationId'],
};

/** Why a built-in variable can never keep a `/` in a `{+name}` expansion. */
const NO_SLASH: Readonly<Record<string, string>> = {
  clientReference: 'a client reference is letters, digits, ".", "_", ":" and "-"',
  token: 'an idempotency token has none',
  operationId: 'an operation ID has none',
  pollUrl: 'a poll URL is a whole URL, not a path',
};

type Json = Record<string, unknown>;

const asObject = (value: unknown): Json | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;

/** One placeholder found in a template: where, which variable, how it is expanded. */
interface Placeholder {
  at: PropertyKey[];
  name: string;
  /** The RFC 6570 operator in a path (`+`, `?`...), `''` elsewhere. */
  operator: string;
  /** A JSON template string that is exactly this placeholder. */
  exact: boolean;
  /** In the create's JSON body template. */
  createBody: boolean;
}

function jsonPlaceholders(value: unknown, at: PropertyKey[], createBody: boolean, out: Placeholder[]): void {
  if (typeof value === 'string') {
    const exact = exactPlaceholder(value);
    if (exact !== undefined) out.push({ at, name: exact, operator: '', exact: true, createBody });
    else for (const name of textPlaceholders(value)) out.push({ at, name, operator: '', exact: false, createBody });
  } else if (Array.isArray(value)) value.forEach((item, i) => jsonPlaceholders(item, [...at, i], createBody, out));
  else if (asObject(value) !== undefined)
    for (const [key, item] of Object.entries(value as Json)) jsonPlaceholders(item, [...at, key], createBody, out);
}

/** Every placeholder of one call's request template (`at` is where the call is in the contract). */
function placeholdersOf(call: Json, at: PropertyKey[]): Placeholder[] {
  const out: Placeholder[] = [];
  const text = (value: unknown, where: PropertyKey[]): void => {
    if (typeof value !== 'string') return;
    for (const name of textPlaceholders(value))
      out.push({ at: where, name, operator: '', exact: false, createBody: false });
  };
  if (typeof call.path === 'string') {
    const parsed = parseUrlTemplate(call.path);
    if (parsed.ok)
      for (const part of parsed.parts)
        if (part.kind === 'expression')
          for (const name of part.names)
            out.push({ at: [...at, 'path'], name, operator: part.operator, exact: false, createBody: false });
  }
  for (const [name, value] of Object.entries(asObject(call.query) ?? {})) text(value, [...at, 'query', name]);
  for (const [name, source] of Object.entries(asObject(call.headers) ?? {}))
    text(asObject(source)?.template, [...at, 'headers', name, 'template']);
  const body = asObject(call.body);
  if (body !== undefined) {
    text(body.raw, [...at, 'body', 'raw']);
    if ('json' in body)
      jsonPlaceholders(body.json, [...at, 'body', 'json'], at.length === 1 && at[0] === 'create', out);
  }
  return out;
}

/** What the checks need to know of a declared operation variable: whether it may hold a `/`. */
type Declared = Readonly<Record<string, { reserved: boolean }>>;

/** The problem with one placeholder in `call`, or undefined when a variable fills it there. */
function placeholderProblem(
  placeholder: Placeholder,
  call: TemplateCall,
  declared: Declared,
  tokenPaging: boolean,
): string | undefined {
  const { name, operator } = placeholder;
  const builtIns = [...CALL_VARIABLES[call], ...(call === 'result' && tokenPaging ? ['nextToken'] : [])];
  const allowed = [...builtIns, ...Object.keys(declared)].map((n) => `{${n}}`).join(', ');
  if (name === 'payload') {
    if (placeholder.createBody && placeholder.exact) return undefined;
    return '{payload} is the whole payload: only a member of create.body.json that is exactly "{payload}" takes it';
  }
  if (name === 'nextToken' && !builtIns.includes(name))
    return "{nextToken} is the next page's token: only the result request names it, with result.paging.nextTokenField";
  if (!builtIns.includes(name) && !Object.hasOwn(declared, name)) {
    const known = Object.values(CALL_VARIABLES).some((names) => names.includes(name));
    return known
      ? `{${name}} has no value in the ${call} request (allowed here: ${allowed})`
      : `unknown placeholder {${name}} (allowed here: ${allowed}; or declare it under variables)`;
  }
  if (operator === '+') {
    if (NO_SLASH[name] !== undefined) return `{+${name}} can never keep a slash: ${NO_SLASH[name]} (write {${name}})`;
    if (Object.hasOwn(declared, name) && !declared[name]!.reserved)
      return `{+${name}} keeps slashes, but variable ${name} is not declared reserved: true (its values hold no "/")`;
  }
  return undefined;
}

/** A call of the contract and where it is. */
interface TemplateSite {
  call: TemplateCall;
  at: PropertyKey[];
  template: Json;
}

/** Every call's request template and where it is: create, status, cancel, each result request, reconciliation. */
function templateSites(contract: Json): TemplateSite[] {
  const sites: TemplateSite[] = [];
  for (const call of ['create', 'status', 'cancel', 'reconciliation'] as const) {
    const template = asObject(contract[call]);
    if (template !== undefined && (call !== 'reconciliation' || 'path' in template))
      sites.push({ call, at: [call], template });
  }
  const status = asObject(contract.status);
  const resultLists: [PropertyKey[], unknown][] = [
    [['result', 'url'], asObject(contract.result)?.url],
    [['status', 'result'], status?.result],
    ...Object.entries(asObject(status?.readings) ?? {}).map(([name, reading]): [PropertyKey[], unknown] => [
      ['status', 'readings', name, 'result'],
      asObject(reading)?.result,
    ]),
  ];
  for (const [at, sources] of resultLists) {
    if (!Array.isArray(sources)) continue;
    sources.forEach((source: unknown, index) => {
      const template = asObject(source);
      if (template?.from === 'template') sites.push({ call: 'result', at: [...at, index], template });
    });
  }
  return sites;
}

/** The names of the contract-wide headers and of a call's, as written. */
const headerNames = (headers: unknown): string[] => Object.keys(asObject(headers) ?? {});

/**
 * Refuses a header that would be overridden without a word: a contract-wide header a call also sets (the call's
 * own wins there), and a header the create sets itself for the idempotency token or the client reference.
 */
function checkHeaderOverrides(contract: Json, sites: readonly TemplateSite[], ctx: z.RefinementCtx): void {
  const wide = new Set(headerNames(contract.headers).map((name) => name.toLowerCase()));
  for (const site of sites)
    for (const name of headerNames(site.template.headers))
      if (wide.has(name.toLowerCase()))
        ctx.addIssue({
          code: 'custom',
          path: [...site.at, 'headers', name],
          message: `${name.toLowerCase()} is also a contract-wide header, which this call's value would replace: declare it in one place`,
        });
  const create = asObject(contract.create) ?? {};
  for (const field of ['idempotencyToken', 'clientReference'] as const) {
    const placement = asObject(create[field]);
    if (placement?.in !== 'header' || typeof placement.name !== 'string') continue;
    const header = placement.name.toLowerCase();
    const where: [PropertyKey[], unknown][] = [
      [['headers'], contract.headers],
      [['create', 'headers'], create.headers],
    ];
    for (const [at, headers] of where)
      for (const name of headerNames(headers))
        if (name.toLowerCase() === header)
          ctx.addIssue({
            code: 'custom',
            path: [...at, name],
            message: `the create sets ${header} itself (create.${field}): this value would be overridden`,
          });
  }
}

/** The declared operation variables as the checks need them, read leniently from the document. */
function declaredOf(contract: Json): Declared {
  return Object.fromEntries(
    Object.entries(asObject(contract.variables) ?? {}).map(([name, rules]) => [
      name,
      { reserved: asObject(rules)?.reserved === true },
    ]),
  );
}

/**
 * Refines the whole contract: every placeholder of every call names a variable that call can fill (a built-in
 * one or a declared operation variable), `{+name}` only where the value may hold a `/`, `{payload}` only as a
 * member of the create body template and `{nextToken}` only in the result request under token paging; no header
 * is overridden without a word; a cancel names no job ID the create never reads; token paging has a result
 * request naming `{nextToken}`.
 */
export function checkTemplates(document: unknown, ctx: z.RefinementCtx): void {
  const contract = asObject(document);
  if (contract === undefined) return;
  const sites = templateSites(contract);
  const paging = asObject(asObject(contract.result)?.paging);
  const tokenPaging = paging?.nextTokenField !== undefined;
  const declared = declaredOf(contract);
  for (const site of sites)
    for (const placeholder of placeholdersOf(site.template, site.at)) {
      const problem = placeholderProblem(placeholder, site.call, declared, tokenPaging);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', path: placeholder.at, message: problem });
    }
  checkHeaderOverrides(contract, sites, ctx);
  const cancel = sites.find((site) => site.call === 'cancel');
  const readsJobId = asObject(contract.create)?.jobId !== undefined;
  if (
    !readsJobId &&
    cancel !== undefined &&
    placeholdersOf(cancel.template, ['cancel']).some((p) => p.name === 'jobId')
  )
    ctx.addIssue({
      code: 'custom',
      path: ['cancel', 'path'],
      message: 'the cancel request uses {jobId}, but create.jobId reads none',
    });
  if (tokenPaging) {
    const request = sites.find((site) => site.call === 'result' && site.at[0] === 'result');
    if (request === undefined || !placeholdersOf(request.template, []).some((p) => p.name === 'nextToken'))
      ctx.addIssue({
        code: 'custom',
        path: ['result', 'paging', 'nextTokenField'],
        message:
          'token paging sends the result request again with the token: give result.url a { from: template } source naming {nextToken} (in its query or body)',
      });
  }
}
