/**
 * The options of `createHttpClient`, validated with zod at construction so a bad option fails fast with
 * every problem named. Units are in the names.
 */
import { z } from 'zod';
import { InvalidHttpOptionsError } from './errors';
import { type RequestAuthoriser } from './authoriser';
import { type RedactionConfig } from './redact';

/** The caller-facing options of `createHttpClient`. */
export interface HttpClientOptions {
  /** The provider's base URL (or just its origin). Its origin is the only one requests and credentials go to (C4). */
  readonly allowedOrigin: string;
  /** Base for relative request URLs (RFC 3986 resolution; a trailing `/` is added). Defaults to `allowedOrigin`. Must be on that origin. */
  readonly baseUrl?: string;
  /**
   * Authorises each request at the last moment, once it is known to be on `allowedOrigin` (T4, C4): it sees the
   * request as sent and adds headers or a query parameter. What it adds is never stored on any returned object.
   */
  readonly authoriser?: RequestAuthoriser;
  /** TCP + TLS connect timeout, ms. Default 10 000. */
  readonly connectTimeoutMs?: number;
  /** Time to wait for response headers after the request was written, ms. Default 30 000. */
  readonly headersTimeoutMs?: number;
  /** Maximum silence between body chunks, ms. Default 30 000. */
  readonly bodyTimeoutMs?: number;
  /** Maximum response body read by `send`, bytes; more is cut off (`body_too_large`). Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Maximum body streamed by `download`, bytes. Default 1 GiB. */
  readonly maxDownloadBytes?: number;
  /** Maximum pooled connections to the provider. Default 10. */
  readonly maxConnections?: number;
  /** How long an idle pooled connection is kept, ms. Default 4 000. */
  readonly keepAliveTimeoutMs?: number;
  /** Extra header, JSON field and query parameter names to redact, on top of the defaults. */
  readonly redact?: RedactionConfig;
  /** The `User-Agent` header. Default `asyncjob/0.1`. */
  readonly userAgent?: string;
  /** Response headers holding the provider's request ID, first present wins. Default `x-request-id`, `x-ms-request-id`, `request-id`. */
  readonly requestIdHeaders?: readonly string[];
  /** V6: media types read as JSON besides none, `application/json`, `*+json` and `text/json` (`application/x-amz-json-1.1`). */
  readonly jsonContentTypes?: readonly string[];
  /** Epoch-ms clock for `startedAtMs`/`receivedAtMs` (tests). Default `Date.now`. */
  readonly nowMs?: () => number;
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

function originOf(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

const httpUrl = z
  .string()
  .refine((v) => originOf(v) !== undefined, 'must be an absolute http(s) URL')
  .refine((v) => {
    const u = originOf(v);
    return u === undefined || (u.username === '' && u.password === '');
  }, 'must not contain user information');
const positiveMs = z.number().int().positive().max(2_147_483_647);
const positiveBytes = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const names = z.array(z.string().regex(HEADER_NAME, 'must be a header/field token')).max(200);

const optionsSchema = z
  .object({
    allowedOrigin: httpUrl,
    baseUrl: httpUrl.optional(),
    authoriser: z
      .custom<RequestAuthoriser>(
        (v) => typeof v === 'object' && v !== null && typeof (v as RequestAuthoriser).authorise === 'function',
        'must be an object with authorise(request)',
      )
      .optional(),
    connectTimeoutMs: positiveMs.default(10_000),
    headersTimeoutMs: positiveMs.default(30_000),
    bodyTimeoutMs: positiveMs.default(30_000),
    maxBodyBytes: positiveBytes.default(1024 * 1024),
    maxDownloadBytes: positiveBytes.default(1024 * 1024 * 1024),
    maxConnections: z.number().int().min(1).max(1000).default(10),
    keepAliveTimeoutMs: positiveMs.default(4_000),
    redact: z
      .object({
        headerNames: names.optional(),
        fieldNames: z.array(z.string().min(1).max(200)).max(200).optional(),
        queryParamNames: z.array(z.string().min(1).max(200)).max(200).optional(),
      })
      .strict()
      .default({}),
    userAgent: z.string().min(1).max(500).regex(HEADER_VALUE, 'must be a valid header value').default('asyncjob/0.1'),
    requestIdHeaders: names.min(1).default(['x-request-id', 'x-ms-request-id', 'request-id']),
    jsonContentTypes: z
      .array(z.string().regex(/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/, 'a lower-case media type'))
      .max(20)
      .default([]),
    nowMs: z.custom<() => number>((v) => typeof v === 'function', 'must be a function').default(() => () => Date.now()),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.baseUrl !== undefined && originOf(o.baseUrl)?.origin !== originOf(o.allowedOrigin)?.origin) {
      ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: 'must be on allowedOrigin' });
    }
  });

/** Options after validation and defaults. */
export type ResolvedHttpClientOptions = z.infer<typeof optionsSchema> & {
  readonly origin: string;
  readonly resolvedBaseUrl: string;
};

/** Validates options and applies defaults; throws `InvalidHttpOptionsError` naming every bad field. */
export function resolveHttpClientOptions(options: HttpClientOptions): ResolvedHttpClientOptions {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new InvalidHttpOptionsError(
      parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`),
    );
  }
  const origin = new URL(parsed.data.allowedOrigin).origin;
  const base = new URL(parsed.data.baseUrl ?? parsed.data.allowedOrigin);
  base.hash = '';
  base.search = '';
  if (!base.pathname.endsWith('/')) base.pathname = `${base.pathname}/`;
  return { ...parsed.data, origin, resolvedBaseUrl: base.toString() };
}

/** True when `name` is a valid HTTP header name. */
export function isHeaderName(name: string): boolean {
  return HEADER_NAME.test(name);
}

/** True when `value` is a valid HTTP header value (no CR, LF or NUL). */
export function isHeaderValue(value: string): boolean {
  return HEADER_VALUE.test(value);
}
