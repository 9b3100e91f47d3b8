/**
 * The request template every provider call shares (create, status, cancel, the result request, reconciliation,
 * token paging): a path (RFC 6570 level 3 under `baseUrl`), query parameters, headers and a body (a JSON template
 * or a raw string with its content type), all filled from the same variables. Which variables a call may name is
 * checked for the whole contract in `contract/placeholders.ts`; this module gives the shapes and the placeholder
 * grammar of the text templates.
 */
import { z } from 'zod';
import { parseUrlTemplate } from '../urls';
import { HEADER_NAME, headerValueSourceSchema, refuseOwnedHeaders, type HeaderValueSource } from './common';

/** A placeholder in a header, query value, raw body or JSON string template: `{name}`; other braces are text. */
export const TEXT_PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The variable names a text template names, in order of appearance. Pure. */
export function textPlaceholders(text: string): string[] {
  return [...text.matchAll(TEXT_PLACEHOLDER)].map((match) => match[1]!);
}

/** The variable a JSON template string stands for when it is exactly one placeholder (`'{jobId}'`). Pure. */
export function exactPlaceholder(text: string): string | undefined {
  const match = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(text);
  return match === null ? undefined : match[1];
}

const hasControl = (value: string): boolean =>
  [...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f);

/**
 * A path template on the provider's origin: starts with a single `/`, no whitespace, RFC 6570 level 3
 * (`{jobId}` one segment, `{+jobId}` keeps `/`, `{?a,b}` a query). Which names it may use is checked per call.
 */
export const pathTemplateSchema = z
  .string()
  .min(1)
  .max(2000)
  .superRefine((path, ctx) => {
    if (!path.startsWith('/') || path.startsWith('//')) {
      ctx.addIssue({
        code: 'custom',
        message: 'a path template starts with a single "/" (it is relative to baseUrl, never another host)',
      });
    }
    if (/\s/.test(path)) ctx.addIssue({ code: 'custom', message: 'a path template contains no whitespace' });
    const parsed = parseUrlTemplate(path);
    if (!parsed.ok) {
      ctx.addIssue({ code: 'custom', message: `not an RFC 6570 level 3 template: ${parsed.problem}` });
      return;
    }
    const literalPath = parsed.parts.map((p) => (p.kind === 'literal' ? p.text : 'x')).join('');
    const segments = (literalPath.split(/[?#]/, 1)[0] ?? '').split('/');
    if (segments.some((s) => /^(\.|%2e){1,2}$/i.test(s)))
      ctx.addIssue({ code: 'custom', message: 'a path template has no "." or ".." segment' });
  });

/** A media type (`application/json`, `application/x-amz-json-1.1`, `text/plain; charset=utf-8`). */
export const mediaTypeSchema = z
  .string()
  .max(200)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\s*;\s*[A-Za-z0-9!#$&^_.+-]+=("[^"\\\r\n]*"|[A-Za-z0-9!#$&^_.+-]+))*$/,
    'a media type such as application/json',
  );

const QUERY_NAME = /^[A-Za-z0-9._~-]{1,100}$/;

/**
 * A call's query parameters: name to a value template with `{name}` placeholders. The expanded value is
 * percent-encoded as one query component; a parameter whose template names an unset variable, or that expands to
 * nothing, is left out.
 */
export const queryTemplateSchema = z.record(
  z.string().regex(QUERY_NAME, 'a query parameter name'),
  z
    .string()
    .max(1000)
    .superRefine((value, ctx) => {
      if (hasControl(value)) ctx.addIssue({ code: 'custom', message: 'a query value has no control character' });
      const stripped = value.replace(TEXT_PLACEHOLDER, '');
      if (stripped.includes('{') || stripped.includes('}'))
        ctx.addIssue({
          code: 'custom',
          message: 'a query value takes {name} placeholders only (RFC 6570 forms such as {?name} go in the path)',
        });
    }),
);

/** A header value from a template: literal text with `{name}` placeholders, the values inserted as they are. */
const headerTemplateSchema = z.strictObject({
  template: z
    .string()
    .min(1)
    .max(1000)
    .refine((value) => !hasControl(value), 'a header template has no line break or control character'),
});

/** Where a call's header takes its value: a fixed value, a fact of the operation, or a template. */
export type CallHeaderSource = HeaderValueSource | z.infer<typeof headerTemplateSchema>;

/** A call's own headers: valid names, none the HTTP layer owns, no content type; values fixed, facts or templates. */
export const callHeadersSchema = z
  .record(
    z.string().regex(HEADER_NAME, 'not a valid HTTP header name'),
    z.union([headerValueSourceSchema, headerTemplateSchema]),
  )
  .superRefine(refuseOwnedHeaders);

const MAX_BODY_TEMPLATE_CHARS = 65_536;

function jsonTemplateProblem(value: unknown, depth: number): string | undefined {
  if (depth > 32) return 'a JSON template nests at most 32 levels';
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'a JSON number is finite';
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = jsonTemplateProblem(item, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (typeof value === 'object') {
    for (const item of Object.values(value as Record<string, unknown>)) {
      const problem = jsonTemplateProblem(item, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  return 'not a JSON value';
}

/**
 * A JSON template: any JSON value. A string that is exactly one placeholder (`'{jobId}'`) becomes the variable's
 * value (a number for an integer variable), and its member or item is left out when the variable is unset; other
 * strings have their `{name}` placeholders replaced.
 */
export const jsonTemplateSchema = z.unknown().superRefine((value, ctx) => {
  if (value === undefined) {
    ctx.addIssue({ code: 'custom', message: 'Required' });
    return;
  }
  const problem = jsonTemplateProblem(value, 0);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  else if (JSON.stringify(value).length > MAX_BODY_TEMPLATE_CHARS)
    ctx.addIssue({ code: 'custom', message: `a JSON template is at most ${MAX_BODY_TEMPLATE_CHARS} characters` });
});

/**
 * A call's body: `{ json, contentType? }` (a JSON template, `application/json` by default) or
 * `{ raw, contentType }` (a string template sent as it is). The content type is declared here, never as a header.
 */
const bodyTemplateSchema = z.union([
  z.strictObject({ json: jsonTemplateSchema, contentType: mediaTypeSchema.default('application/json') }),
  z.strictObject({ raw: z.string().max(MAX_BODY_TEMPLATE_CHARS), contentType: mediaTypeSchema }),
]);
/** A body template. */
type BodyTemplate = z.infer<typeof bodyTemplateSchema>;

/** The template fields every call takes besides its method and path. */
export const requestTemplateFields = {
  /** Query parameters of this call, value templates (see {@link queryTemplateSchema}). */
  query: queryTemplateSchema.optional(),
  /** Headers of this call only: `{ value }`, `{ from }` or `{ template }`. */
  headers: callHeadersSchema.optional(),
  /** The body of this call (see {@link bodyTemplateSchema}). */
  body: bodyTemplateSchema.optional(),
};

/** A call's request template as the builders read it. */
export interface RequestTemplate {
  method?: string;
  path?: string;
  query?: Readonly<Record<string, string>>;
  headers?: Readonly<Record<string, CallHeaderSource>>;
  body?: BodyTemplate;
}
