/**
 * A provider's HTTP contract as data (JSON or YAML written by a user, never code they fork): where it lives,
 * how a job is created, read, cancelled, reconciled and collected, and what its words mean. Every object is
 * strict (an unknown key is an error, so a typo never silently disables a rule) and every problem is reported
 * at once with its field path. Credentials are named by reference only (T4): the document never holds a secret.
 * The parts live in `contract/`; this module assembles them and checks what spans several parts.
 */
import { z } from 'zod';
import { variableDeclarationsSchema } from '../../core/operation-variables';
import { pollPolicySchema, type PollPolicyInput } from '../../core/policy';
import {
  absoluteUrlSchema,
  exactlyOneSecret,
  fieldPathSchema,
  fieldPathsSchema,
  headerNameSchema,
  requestHeadersSchema,
  secretReference,
} from './contract/common';
import { cancelSchema } from './contract/cancel';
import { createSchema, IDEMPOTENT_METHODS } from './contract/create';
import { credentialSchema } from './contract/credential';
import { jsonContentTypesSchema } from './contract/answer-format';
import { checkLookup, reconciliationSchema } from './contract/reconciliation';
import { checkTemplates } from './contract/placeholders';
import { resultSchema } from './contract/result';
import { statusSchema } from './contract/status';

export * from './contract/answer-format';
export * from './contract/cancel';
export * from './contract/common';
export * from './contract/credential';
export * from './contract/create';
export * from './contract/reconciliation';
export * from './contract/request';
export * from './contract/result';
export * from './contract/status';

/** Webhook verification (W1). */
const webhookSchema = z.strictObject({
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
    if (!parsed.success)
      for (const issue of parsed.error.issues)
        ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  })
  .transform((overrides) => overrides as PollPolicyInput);

const QUERY_NAME = /^[A-Za-z0-9._~-]{1,100}$/;

const baseUrlSchema = absoluteUrlSchema((url, ctx) => {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    ctx.addIssue({ code: 'custom', message: 'must be http: or https:' });
  if (url.username !== '' || url.password !== '')
    ctx.addIssue({ code: 'custom', message: 'must not carry credentials' });
  if (url.search !== '' || url.hash !== '')
    ctx.addIssue({
      code: 'custom',
      message: 'must not carry a query or fragment (declare query parameters under query:)',
    });
});

/** The whole provider contract. */
export const providerContractSchema = z
  .strictObject({
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'lower-case letters, digits, ".", "_" and "-", at most 64'),
    description: z.string().max(2000).optional(),
    /** The only origin requests (and credentials) go to. */
    baseUrl: baseUrlSchema,
    credential: credentialSchema,
    /** The response header carrying the provider's request ID (H5). */
    requestIdHeader: headerNameSchema.default('x-request-id'),
    /** Headers sent on every request to the provider (create, status, cancel, collect, reconcile). */
    headers: requestHeadersSchema.optional(),
    /** Query parameters added to every provider URL, including URLs read from answers, unless already there (`api-version`). */
    query: z.record(z.string().regex(QUERY_NAME, 'a query parameter name'), z.string().max(1000)).optional(),
    /**
     * Operation variables: values a caller gives at start (`--var name=value`), declared here with their type,
     * pattern, whether a `{+name}` expansion may keep a `/`, and whether they are required or defaulted.
     */
    variables: variableDeclarationsSchema.optional(),
    /** V3: keep the provider's cookies per operation (in the store, sent only to this origin, never in history or logs). */
    cookies: z.boolean().default(false),
    /** V6: media types read as JSON besides none, `application/json`, `*+json` and `text/json`. */
    jsonContentTypes: jsonContentTypesSchema.optional(),
    create: createSchema,
    status: statusSchema,
    /** Where the provider's error code and message are in an error or failed-job answer, first present wins. */
    providerError: z
      .strictObject({
        codeField: fieldPathsSchema.optional(),
        messageField: fieldPathsSchema.optional(),
        /**
         * H1: error codes that mean "not now" whatever the HTTP status (AWS throttles with 400
         * `ThrottlingException`): such an answer is rate limited, as a 429 is. Matched as given or as the part
         * after the last `#` (`com.amazonaws.textract#ThrottlingException`).
         */
        rateLimitedCodes: z.array(z.string().min(1).max(200)).min(1).max(20).optional(),
      })
      .optional(),
    result: resultSchema,
    cancel: cancelSchema.optional(),
    reconciliation: reconciliationSchema,
    /**
     * H3: after acceptance, a 404 within this window means "not visible yet". The provider's default for
     * `policy.notFoundWindowMs` (a caller's policy may still set its own).
     */
    notFoundWindowMs: z.number().int().min(0).max(86_400_000).optional(),
    /** R5: whether fetching the result may be repeated without effect at the provider. */
    collectSafeToRepeat: z.boolean(),
    policy: policyOverridesSchema.optional(),
    webhook: webhookSchema.optional(),
  })
  .superRefine((contract, ctx) => {
    const { create, status, reconciliation } = contract;
    if (status.useStatusUrl && status.path === undefined && create.statusUrl === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['create', 'statusUrl'],
        message: 'status.useStatusUrl without a status path needs create.statusUrl',
      });
    }
    if (create.jobId === undefined && !status.useStatusUrl) {
      ctx.addIssue({
        code: 'custom',
        path: ['status', 'useStatusUrl'],
        message: 'without create.jobId the job is known by its poll URL: set status.useStatusUrl: true',
      });
    }
    if (reconciliation.method === 'list_by_client_reference' && create.clientReference === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['create', 'clientReference'],
        message: 'list_by_client_reference needs create.clientReference',
      });
    }
    if (reconciliation.method === 'lookup_by_token' && create.idempotencyToken === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['create', 'idempotencyToken'],
        message: 'lookup_by_token needs create.idempotencyToken',
      });
    }
    if (reconciliation.method === 'same_token_resend' && create.idempotencyToken === undefined && !create.idempotent) {
      ctx.addIssue({
        code: 'custom',
        path: ['reconciliation', 'method'],
        message: `same_token_resend needs create.idempotencyToken, or create.idempotent: true for ${IDEMPOTENT_METHODS.join(' or ')} (V4); otherwise use none`,
      });
    }
    checkLookup(contract, ctx);
    const readings = new Set(Object.keys(status.readings ?? {}));
    const named: [PropertyKey[], string | undefined][] = [
      ...(create.statusUrl ?? []).map((source, index): [PropertyKey[], string | undefined] => [
        ['create', 'statusUrl', index, 'reading'],
        source.reading,
      ]),
      [['create', 'readState'], typeof create.readState === 'string' ? create.readState : undefined],
    ];
    for (const [path, name] of named) {
      if (name !== undefined && !readings.has(name))
        ctx.addIssue({ code: 'custom', path, message: `no reading "${name}" under status.readings` });
    }
  })
  // The template checks read the document defensively: they also run when another field is malformed, so a
  // misplaced placeholder is reported with the other problems, not on the next run.
  .superRefine(checkTemplates, { when: () => true });

/** A validated provider contract (defaults applied, header names lower-cased). */
export type ProviderContract = z.infer<typeof providerContractSchema>;
