/** How an ambiguous create is resolved (U2, V4): the methods a provider offers to find a job again. */
import { z } from 'zod';
import { fieldPathSchema, valueSourceSchema } from './common';
import { pathTemplateSchema, requestTemplateFields } from './request';

const listReconcile = {
  /** The HTTP method of the list or lookup request (an RPC-style API lists with a POST and a body). */
  httpMethod: z.enum(['GET', 'POST']).default('GET'),
  ...requestTemplateFields,
  listField: fieldPathSchema,
  jobId: z
    .array(
      z.strictObject({
        field: fieldPathSchema,
        stripPrefix: z.string().min(1).max(200).optional(),
        extract: z.enum(['whole', 'last_path_segment']).default('whole'),
      }),
    )
    .min(1)
    .max(3),
  /** Only items whose field equals the client reference / token match (when the list may hold others). */
  matchField: fieldPathSchema.optional(),
  createdAtField: fieldPathSchema.optional(),
};

/** Statuses that never say "no such job": an authorisation refusal (H4) and "not now" (H1). */
const NEVER_ABSENT: readonly number[] = [401, 403, 429];

/** Whether a status may say "no such job" (a lookup's `absent`): a 4xx other than 401, 403 and 429. */
export function mayMeanAbsent(status: number): boolean {
  return status >= 400 && status < 500 && !NEVER_ABSENT.includes(status);
}

/**
 * Which lookup answers say "no such job" (U2): an HTTP status of `statuses` (default 404; `[]` leaves it to the
 * error codes), or a 4xx whose provider error code (read by `providerError.codeField`) is one of `errorCodes`
 * (AWS answers an unknown job with 400 and a `__type` such as `ResourceNotFoundException`).
 */
const absentSchema = z.strictObject({
  statuses: z
    .array(z.number().int().refine(mayMeanAbsent, 'only a 4xx other than 401, 403 and 429 can say "no such job"'))
    .max(20)
    .default([404]),
  errorCodes: z.array(z.string().min(1).max(200)).min(1).max(20).optional(),
});

/**
 * `lookup`: one request that names our operation (by client reference, token, or an operation variable the create
 * sends, such as a job name). A 2xx naming a job is the job (its ID read like `create.jobId`); an `absent` answer,
 * or a 2xx with an empty body, means none was created.
 */
const lookupSchema = z.strictObject({
  method: z.literal('lookup'),
  /** The HTTP method of the lookup (an RPC-style API reads with a POST and a body). */
  httpMethod: z.enum(['GET', 'POST']).default('GET'),
  path: pathTemplateSchema,
  ...requestTemplateFields,
  /** Where the job ID is read in a 2xx answer, first found wins (a body field or a header). */
  jobId: z.array(valueSourceSchema).min(1).max(5),
  absent: absentSchema.default({ statuses: [404] }),
});

/** How an ambiguous create is resolved (U2, V4). `same_token_resend` also covers repeating an idempotent PUT/DELETE. */
export const reconciliationSchema = z.discriminatedUnion('method', [
  z.strictObject({ method: z.literal('same_token_resend') }),
  z.strictObject({
    method: z.literal('list_by_client_reference'),
    path: pathTemplateSchema,
    ...listReconcile,
  }),
  z.strictObject({ method: z.literal('lookup_by_token'), path: pathTemplateSchema, ...listReconcile }),
  lookupSchema,
  z.strictObject({ method: z.literal('none') }),
]);
/** A reconciliation method. */
export type Reconciliation = z.infer<typeof reconciliationSchema>;
/** A `lookup` reconciliation. */
export type LookupReconciliation = Extract<Reconciliation, { method: 'lookup' }>;

/**
 * Refines the whole contract's reconciliation: a lookup by the client reference or the token needs a create that
 * sends it, and error codes are read with the contract's `providerError.codeField`.
 */
export function checkLookup(
  contract: {
    reconciliation: Reconciliation;
    create: { clientReference?: unknown; idempotencyToken?: unknown };
    providerError?: { codeField?: unknown };
  },
  ctx: z.RefinementCtx,
): void {
  const lookup = contract.reconciliation;
  if (lookup.method !== 'lookup') return;
  const { jobId: _jobId, absent: _absent, ...request } = lookup;
  const requestText = JSON.stringify(request);
  // `{name}`, or a name in an RFC 6570 expression of the path (`{+name}`, `{?a,name}`).
  const names = (name: string): boolean => new RegExp(`\\{[+#./;?&]?([^{}]*,)?${name}(,[^{}]*)?\\}`).test(requestText);
  const sent = [
    ['clientReference', contract.create.clientReference, 'create.clientReference'],
    ['token', contract.create.idempotencyToken, 'create.idempotencyToken'],
  ] as const;
  for (const [name, given, field] of sent) {
    if (names(name) && given === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['reconciliation'],
        message: `the lookup names the job by {${name}}, but the create does not send it: give ${field}`,
      });
  }
  if (lookup.absent.errorCodes !== undefined && contract.providerError?.codeField === undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['reconciliation', 'absent', 'errorCodes'],
      message: 'error codes are read with providerError.codeField: give it',
    });
}
