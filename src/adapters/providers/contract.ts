/**
 * A provider's HTTP contract as data (JSON or YAML written by a user, never code they fork): where it lives,
 * how a job is created, read, cancelled, reconciled and collected, and what its words mean. Every object is
 * strict (an unknown key is an error, so a typo never silently disables a rule) and every problem is reported
 * at once with its field path. Credentials are named by reference only (T4): the document never holds a secret.
 */
import { z } from 'zod';
import { providerStateTableSchema } from '../../core/provider-states';
import { pollPolicySchema, type PollPolicyInput } from '../../core/policy';
import { parseFieldPath } from './field-path';

/** A JSON field path (`metadata.state`, `jobs[0].job_id`), checked for syntax and forbidden keys. */
export const fieldPathSchema = z
  .string()
  .superRefine((path, ctx) => {
    const parsed = parseFieldPath(path);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message });
  });

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** An HTTP header name (RFC 9110 token); stored lower-cased because answers arrive with lower-cased headers. */
export const headerNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(HEADER_NAME, 'not a valid HTTP header name')
  .transform((name) => name.toLowerCase());

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** A path template on the provider's origin, starting with `/`, with `{placeholders}` from `allowed`. */
function pathTemplateSchema(allowed: readonly string[]) {
  return z
    .string()
    .min(1)
    .max(2000)
    .superRefine((path, ctx) => {
      if (!path.startsWith('/') || path.startsWith('//')) {
        ctx.addIssue({ code: 'custom', message: 'a path template starts with a single "/" (it is relative to baseUrl, never another host)' });
      }
      if (/\s/.test(path)) ctx.addIssue({ code: 'custom', message: 'a path template contains no whitespace' });
      for (const match of path.matchAll(PLACEHOLDER)) {
        if (!allowed.includes(match[1] ?? '')) {
          ctx.addIssue({ code: 'custom', message: `unknown placeholder {${match[1]}} (allowed here: ${allowed.map((a) => `{${a}}`).join(', ')})` });
        }
      }
    });
}

const httpStatusList = z.array(z.number().int().min(100).max(599)).min(1).max(20);

/** A secret named by reference: an environment variable or a file read by the worker, never the value. */
const secretReference = {
  secretEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name such as REPORTS_TOKEN').optional(),
  secretFile: z.string().min(1).max(1000).optional(),
};

function exactlyOneSecret(value: { secretEnv?: string; secretFile?: string }, ctx: z.RefinementCtx): void {
  if ((value.secretEnv === undefined) === (value.secretFile === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['secretEnv'], message: 'give exactly one of secretEnv or secretFile' });
  }
}

/** How the worker authenticates to the provider; resolved inside the worker, sent only to `baseUrl`'s origin. */
export const credentialSchema = z.discriminatedUnion('scheme', [
  z.strictObject({ scheme: z.literal('bearer'), ...secretReference }).superRefine(exactlyOneSecret),
  z.strictObject({ scheme: z.literal('header'), headerName: headerNameSchema, ...secretReference }).superRefine(exactlyOneSecret),
  z.strictObject({ scheme: z.literal('none') }),
]);
/** A credential reference. */
export type CredentialReference = z.infer<typeof credentialSchema>;

/** Where a header value comes from when a request is built. */
export const headerValueSourceSchema = z.union([
  z.strictObject({ value: z.string().max(1000) }),
  z.strictObject({
    from: z.enum(['now_http_date', 'first_sent_http_date', 'token', 'client_reference']),
  }),
]);
/** A header value source. */
export type HeaderValueSource = z.infer<typeof headerValueSourceSchema>;

/**
 * Where a value is read from an answer: a JSON body field or a response header, optionally cut down to the
 * last path segment of a URL (`.../operations/abc` -> `abc`) and stripped of a prefix (`operations/`).
 */
export const valueSourceSchema = z.union([
  z.strictObject({
    from: z.literal('body'),
    field: fieldPathSchema,
    stripPrefix: z.string().min(1).max(200).optional(),
    extract: z.enum(['whole', 'last_path_segment']).default('whole'),
  }),
  z.strictObject({
    from: z.literal('header'),
    name: headerNameSchema,
    stripPrefix: z.string().min(1).max(200).optional(),
    extract: z.enum(['whole', 'last_path_segment']).default('whole'),
  }),
]);
/** A value source. */
export type ValueSource = z.infer<typeof valueSourceSchema>;

const sources = z.array(valueSourceSchema).min(1).max(5);

/** How the job's state is read: a state field, and for LRO-style answers a derivation from done/error/response. */
export const stateReadingSchema = z.strictObject({
  /** The field holding the provider's word for the state (`state`, `metadata.state`, `status`). */
  stateField: fieldPathSchema.optional(),
  /**
   * An LRO-style derivation (AIP-151): when `doneField` is true, `errorField` present means failure (or
   * cancelled when `cancelledWhen` matches), `responseField` present means success; when it is false the job
   * is pending unless `stateField` says otherwise.
   */
  derive: z
    .strictObject({
      doneField: fieldPathSchema,
      errorField: fieldPathSchema,
      responseField: fieldPathSchema,
      cancelledWhen: z.strictObject({ field: fieldPathSchema, values: z.array(z.union([z.string(), z.number()])).min(1).max(20) }).optional(),
    })
    .optional(),
});

/** The state table and the informative fields of a status answer. */
export const statusSchema = z
  .strictObject({
    method: z.enum(['GET', 'POST']).default('GET'),
    /** The documented convention for the status resource (`/v1/jobs/{jobId}`). */
    path: pathTemplateSchema(['jobId']).optional(),
    /** Prefer the status URL read from the create answer (C4); it must be on the provider's origin. */
    useStatusUrl: z.boolean().default(false),
    ...stateReadingSchema.shape,
    stateTable: providerStateTableSchema,
    progress: z.strictObject({ field: fieldPathSchema, scale: z.enum(['percent', 'fraction']) }).optional(),
    providerTimestampField: fieldPathSchema.optional(),
    expiresAtField: fieldPathSchema.optional(),
    hints: z
      .strictObject({ pollAfterSecondsField: fieldPathSchema.optional(), nextCheckAtField: fieldPathSchema.optional() })
      .optional(),
  })
  .superRefine((status, ctx) => {
    if (status.path === undefined && !status.useStatusUrl) {
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'give a status path template, or set useStatusUrl: true' });
    }
    if (status.stateField === undefined && status.derive === undefined) {
      ctx.addIssue({ code: 'custom', path: ['stateField'], message: 'give stateField, derive, or both' });
    }
  });

/** Headers the HTTP layer owns (credentials, framing): a contract never sets them. */
const RESERVED_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'host', 'content-length', 'transfer-encoding', 'connection', 'traceparent', 'x-trace-id']);

/** How a job is created. */
export const createSchema = z.strictObject({
  method: z.enum(['POST', 'PUT']).default('POST'),
  path: pathTemplateSchema(['clientReference']),
  /** How the payload is sent: as the whole JSON body, or wrapped in a field of it. */
  body: z
    .union([z.strictObject({ mode: z.literal('payload') }), z.strictObject({ mode: z.literal('wrapped'), field: z.string().min(1).max(100) })])
    .default({ mode: 'payload' }),
  /** Where the idempotency token goes (I1). */
  idempotencyToken: z.discriminatedUnion('in', [
    z.strictObject({ in: z.literal('header'), name: headerNameSchema }),
    z.strictObject({ in: z.literal('body'), field: z.string().min(1).max(100) }),
  ]),
  /** Where our operation ID goes, when the provider stores a client reference (used by reconciliation). */
  clientReference: z
    .discriminatedUnion('in', [
      z.strictObject({ in: z.literal('header'), name: headerNameSchema }),
      z.strictObject({ in: z.literal('body'), field: z.string().min(1).max(100) }),
    ])
    .optional(),
  /** Extra headers, e.g. `Repeatability-First-Sent: { from: first_sent_http_date }`. */
  headers: z.record(z.string().regex(HEADER_NAME, 'not a valid HTTP header name'), headerValueSourceSchema).optional(),
  /** Status codes that mean "accepted" (C2, H2); anything else is a refusal or an error. */
  acceptedStatuses: httpStatusList.default([202, 201]),
  /** Where the job ID is read, first found wins. */
  jobId: sources,
  /** Where the status URL is read (Location, Operation-Location, a body field), first found wins. */
  statusUrl: sources.optional(),
  /** Read the job's state from the create answer with the status rules (a `state` field, or LRO `done`). */
  readState: z.boolean().default(false),
  /** C3: a synchronous success carries its result inline in this field of the create answer. */
  synchronousSuccess: z.strictObject({ statuses: httpStatusList, resultField: fieldPathSchema }).optional(),
}).superRefine((create, ctx) => {
  const named: [PropertyKey[], string][] = Object.keys(create.headers ?? {}).map((name) => [['headers', name], name.toLowerCase()]);
  if (create.idempotencyToken.in === 'header') named.push([['idempotencyToken', 'name'], create.idempotencyToken.name]);
  if (create.clientReference?.in === 'header') named.push([['clientReference', 'name'], create.clientReference.name]);
  for (const [path, name] of named) {
    if (RESERVED_HEADERS.has(name)) ctx.addIssue({ code: 'custom', path, message: `the header ${name} is set by the HTTP layer, never by a contract` });
  }
});

/** A source of an integrity value: a field of the status answer or a header of the result answer. */
const integritySourceSchema = z.union([
  z.strictObject({ from: z.literal('status_field'), field: fieldPathSchema }),
  z.strictObject({ from: z.literal('result_header'), name: headerNameSchema }),
]);

/** Where the result is and how it is checked (R1-R3). */
export const resultSchema = z.strictObject({
  /** Where the result URL comes from, first found wins: a status-answer field or the documented template. */
  url: z
    .array(
      z.union([
        z.strictObject({ from: z.literal('status_field'), field: fieldPathSchema }),
        z.strictObject({ from: z.literal('template'), path: pathTemplateSchema(['jobId']) }),
      ]),
    )
    .min(1)
    .max(5),
  /** A successful job without a result URL is not ready (P7). */
  required: z.boolean().default(true),
  sha256: z
    .union([
      z.strictObject({ from: z.literal('status_field'), field: fieldPathSchema, encoding: z.enum(['hex', 'base64']) }),
      z.strictObject({ from: z.literal('result_header'), name: headerNameSchema, encoding: z.enum(['hex', 'base64']) }),
    ])
    .optional(),
  sizeBytes: integritySourceSchema.optional(),
  recordCount: integritySourceSchema.optional(),
  contentType: z
    .strictObject({ expected: z.array(z.string().min(1).max(200)).min(1).max(10) })
    .optional(),
  /** R3: a batch result's items, their ID and status fields, and the status values that mean "failed". */
  batch: z
    .strictObject({ itemsField: fieldPathSchema, idField: fieldPathSchema, statusField: fieldPathSchema, failedValues: z.array(z.string().min(1)).min(1).max(20) })
    .optional(),
  /** An inline result (C3, LRO response) larger than this is not carried in the observation. */
  maxInlineBytes: z.number().int().min(0).max(1_048_576).default(65_536),
});

/** How to cancel a job (X1); absent when the provider offers no cancel. */
export const cancelSchema = z.strictObject({
  method: z.enum(['POST', 'DELETE', 'PUT', 'PATCH']),
  path: pathTemplateSchema(['jobId']),
  /** Whether repeating the cancel call is harmless (X3 still sends it once). */
  idempotent: z.boolean(),
  acceptedStatuses: httpStatusList.default([200, 202, 204]),
});

const listReconcile = {
  listField: fieldPathSchema,
  jobId: z.array(
    z.strictObject({ field: fieldPathSchema, stripPrefix: z.string().min(1).max(200).optional(), extract: z.enum(['whole', 'last_path_segment']).default('whole') }),
  ).min(1).max(3),
  /** Only items whose field equals the client reference / token match (when the list may hold others). */
  matchField: fieldPathSchema.optional(),
  createdAtField: fieldPathSchema.optional(),
};

/** How an ambiguous create is resolved (U2). */
export const reconciliationSchema = z.discriminatedUnion('method', [
  z.strictObject({ method: z.literal('same_token_resend') }),
  z.strictObject({ method: z.literal('list_by_client_reference'), path: pathTemplateSchema(['clientReference']), ...listReconcile }),
  z.strictObject({ method: z.literal('lookup_by_token'), path: pathTemplateSchema(['token']), ...listReconcile }),
  z.strictObject({ method: z.literal('none') }),
]);
/** A reconciliation method. */
export type Reconciliation = z.infer<typeof reconciliationSchema>;

/** Webhook verification (W1). */
export const webhookSchema = z.strictObject({
  signatureHeader: headerNameSchema,
  scheme: z.literal('hmac-sha256-timestamped'),
  secret: z.strictObject(secretReference).superRefine(exactlyOneSecret),
  toleranceMs: z.number().int().min(1).max(3_600_000),
  eventIdField: fieldPathSchema.default('event_id'),
  jobIdField: fieldPathSchema.default('job_id'),
  stateField: fieldPathSchema.default('state'),
});

/** P2 tuning, validated against the core poll policy. */
const policyOverridesSchema = z
  .record(z.string(), z.unknown())
  .superRefine((overrides, ctx) => {
    const parsed = pollPolicySchema.safeParse(overrides);
    if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  })
  .transform((overrides) => overrides as PollPolicyInput);

/** The whole provider contract. */
export const providerContractSchema = z
  .strictObject({
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'lower-case letters, digits, ".", "_" and "-", at most 64'),
    description: z.string().max(2000).optional(),
    /** The only origin requests (and credentials) go to. */
    baseUrl: z.string().max(2000).superRefine((value, ctx) => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'not an absolute URL' });
        return;
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'must be http: or https:' });
      if (url.username !== '' || url.password !== '') ctx.addIssue({ code: 'custom', message: 'must not carry credentials' });
      if (url.search !== '' || url.hash !== '') ctx.addIssue({ code: 'custom', message: 'must not carry a query or fragment' });
    }),
    credential: credentialSchema,
    /** The response header carrying the provider's request ID (H5). */
    requestIdHeader: headerNameSchema.default('x-request-id'),
    create: createSchema,
    status: statusSchema,
    /** Where the provider's error code and message are in an error or failed-job answer. */
    providerError: z.strictObject({ codeField: fieldPathSchema.optional(), messageField: fieldPathSchema.optional() }).optional(),
    result: resultSchema,
    cancel: cancelSchema.optional(),
    reconciliation: reconciliationSchema,
    /** H3: after acceptance, a 404 within this window means "not visible yet". */
    notFoundWindowMs: z.number().int().min(0).max(86_400_000).default(0),
    /** R5: whether fetching the result may be repeated without effect at the provider. */
    collectSafeToRepeat: z.boolean(),
    policy: policyOverridesSchema.optional(),
    webhook: webhookSchema.optional(),
  })
  .superRefine((contract, ctx) => {
    if (contract.status.useStatusUrl && contract.status.path === undefined && contract.create.statusUrl === undefined) {
      ctx.addIssue({ code: 'custom', path: ['create', 'statusUrl'], message: 'status.useStatusUrl without a status path needs create.statusUrl' });
    }
    if (contract.reconciliation.method === 'list_by_client_reference' && contract.create.clientReference === undefined) {
      ctx.addIssue({ code: 'custom', path: ['create', 'clientReference'], message: 'list_by_client_reference needs create.clientReference' });
    }
  });

/** A validated provider contract (defaults applied, header names lower-cased). */
export type ProviderContract = z.infer<typeof providerContractSchema>;
/** A provider contract as written in a document. */
export type ProviderContractInput = z.input<typeof providerContractSchema>;
