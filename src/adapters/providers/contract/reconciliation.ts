/** How an ambiguous create is resolved (U2, V4): the methods a provider offers to find a job again. */
import { z } from 'zod';
import { fieldPathSchema, pathTemplateSchema } from './common';
import { requestTemplateFields } from './request';

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

/** How an ambiguous create is resolved (U2, V4). `same_token_resend` also covers repeating an idempotent PUT/DELETE. */
export const reconciliationSchema = z.discriminatedUnion('method', [
  z.strictObject({ method: z.literal('same_token_resend') }),
  z.strictObject({
    method: z.literal('list_by_client_reference'),
    path: pathTemplateSchema(['clientReference']),
    ...listReconcile,
  }),
  z.strictObject({ method: z.literal('lookup_by_token'), path: pathTemplateSchema(['token']), ...listReconcile }),
  z.strictObject({ method: z.literal('none') }),
]);
/** A reconciliation method. */
export type Reconciliation = z.infer<typeof reconciliationSchema>;
