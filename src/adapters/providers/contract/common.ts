/**
 * The building blocks every part of a provider contract shares: field paths, header names and values,
 * status-code lists, secret references, absolute URLs, and where a value is read from an answer.
 */
import { z } from 'zod';
import { parseFieldPath } from '../field-path';

/**
 * An absolute URL of at most 2000 characters: a value `new URL` cannot parse is refused as not an absolute URL; a
 * parsed one is handed to `check`, which adds an issue for each rule of its field the URL breaks.
 */
export function absoluteUrlSchema(check: (url: URL, ctx: z.RefinementCtx) => void) {
  return z
    .string()
    .max(2000)
    .superRefine((value, ctx) => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'not an absolute URL' });
        return;
      }
      check(url, ctx);
    });
}

/** A JSON field path (`metadata.state`, `jobs[0].job_id`), checked for syntax and forbidden keys. */
export const fieldPathSchema = z.string().superRefine((path, ctx) => {
  const parsed = parseFieldPath(path);
  if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message });
});

/** One field path, or several tried in order (the first present wins). Always an array once parsed. */
export const fieldPathsSchema = z
  .union([fieldPathSchema, z.array(fieldPathSchema).min(1).max(5)])
  .transform((value) => (Array.isArray(value) ? value : [value]));

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** An HTTP header name (RFC 9110 token); stored lower-cased because answers arrive with lower-cased headers. */
export const headerNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(HEADER_NAME, 'not a valid HTTP header name')
  .transform((name) => name.toLowerCase());

/** Headers the HTTP layer owns (credentials, session, framing, tracing): a contract never sets them. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'traceparent',
  'x-trace-id',
]);

/** A list of HTTP status codes. */
export const httpStatusListSchema = z.array(z.number().int().min(100).max(599)).min(1).max(20);

/** A secret named by reference: an environment variable or a file read by the worker, never the value. */
export const secretReference = {
  secretEnv: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name such as REPORTS_TOKEN')
    .optional(),
  secretFile: z.string().min(1).max(1000).optional(),
};

/** Refines a secret reference: exactly one of `secretEnv` or `secretFile`. */
export function exactlyOneSecret(value: { secretEnv?: string; secretFile?: string }, ctx: z.RefinementCtx): void {
  if ((value.secretEnv === undefined) === (value.secretFile === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['secretEnv'], message: 'give exactly one of secretEnv or secretFile' });
  }
}

/**
 * Where a request header's value comes from when a request is built: a fixed value, or a fact of the
 * operation (never a secret: credentials are the HTTP layer's, by reference).
 */
export const headerValueSourceSchema = z.union([
  z.strictObject({
    value: z
      .string()
      .max(1000)
      .refine(
        (value) => ![...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f),
        'a header value has no line break or control character',
      ),
  }),
  z.strictObject({
    from: z.enum(['now_http_date', 'first_sent_http_date', 'token', 'client_reference', 'operation_id', 'trace_id']),
  }),
]);
/** A header value source. */
export type HeaderValueSource = z.infer<typeof headerValueSourceSchema>;

/** Refuses the headers no contract sets: the HTTP layer's, and the content type (declared with the body). */
export function refuseOwnedHeaders(headers: Record<string, unknown>, ctx: z.RefinementCtx): void {
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower)) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `the header ${lower} is set by the HTTP layer, never by a contract`,
      });
    } else if (lower === 'content-type') {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message:
          "declare the body's content type as body.contentType (create.body.contentType for the create): the builder sets content-type from it, and a header would silently lose",
      });
    }
  }
}

/** Contract-wide request headers: valid names, none the HTTP layer owns, no content type. */
export const requestHeadersSchema = z
  .record(z.string().regex(HEADER_NAME, 'not a valid HTTP header name'), headerValueSourceSchema)
  .superRefine(refuseOwnedHeaders);

const extractShape = {
  stripPrefix: z.string().min(1).max(200).optional(),
  extract: z.enum(['whole', 'last_path_segment']).default('whole'),
};

/**
 * Where a value is read from an answer: a JSON body field or a response header, optionally cut down to the
 * last path segment of a URL (`.../operations/abc` -> `abc`) and stripped of a prefix (`operations/`).
 */
export const valueSourceSchema = z.union([
  z.strictObject({ from: z.literal('body'), field: fieldPathSchema, ...extractShape }),
  z.strictObject({ from: z.literal('header'), name: headerNameSchema, ...extractShape }),
]);
/** A value source. */
export type ValueSource = z.infer<typeof valueSourceSchema>;

const READING_NAME = /^[a-z][a-z0-9_-]{0,39}$/;
/** The name of a status reading (`status.readings`). */
export const readingNameSchema = z
  .string()
  .regex(READING_NAME, 'a reading name is lower-case letters, digits, "_" and "-", at most 40');

/**
 * Where the poll URL is read from the create answer (V1), tried in order: a response header
 * (`Operation-Location`, `Azure-AsyncOperation`, `Location`), a body field, or the create request's own URL
 * (Azure's PUT/PATCH convention: poll the resource you wrote). `reading` names how answers at that URL are read
 * (a key of `status.readings`); without it, the status section's own rules apply.
 */
export const pollUrlSourceSchema = z.union([
  z.strictObject({ from: z.literal('header'), name: headerNameSchema, reading: readingNameSchema.optional() }),
  z.strictObject({ from: z.literal('body'), field: fieldPathSchema, reading: readingNameSchema.optional() }),
  z.strictObject({ from: z.literal('request_url'), reading: readingNameSchema.optional() }),
]);
/** A poll URL source. */
export type PollUrlSource = z.infer<typeof pollUrlSourceSchema>;
