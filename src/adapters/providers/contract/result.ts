/**
 * Where a finished job's result lives and how it is checked (R1-R3, V2): the sources tried in order, the
 * integrity data the provider offers, record counting and paging.
 */
import { z } from 'zod';
import { fieldPathSchema, headerNameSchema } from './common';
import { pathTemplateSchema, requestTemplateFields } from './request';

/**
 * Where the final result lives (V2, Azure's `final-state-via`), tried in order when a job reports success:
 * - `status_field`: a URL in a field of the success answer (`resourceLocation`, `result_url`);
 * - `template`: the result request (the documented result path with the job ID; with a method, query, headers
 *   and body for an API that answers the result to a POST; under token paging, the request every page repeats);
 * - `create_header`: a URL the create answer gave in a header (`Location`: final-state-via `location`);
 * - `request_url`: the URL the create request wrote (PUT/PATCH: final-state-via `original-uri`);
 * - `inline`: the answer that reported success is the result (a whole body, or one field of it, such as
 *   AIP-151's `response`); it is staged and validated like a downloaded one, never kept in workflow history.
 */
export const resultSourceSchema = z.union([
  z.strictObject({ from: z.literal('status_field'), field: fieldPathSchema }),
  z.strictObject({
    from: z.literal('template'),
    method: z.enum(['GET', 'POST']).default('GET'),
    path: pathTemplateSchema,
    ...requestTemplateFields,
  }),
  z.strictObject({ from: z.literal('create_header'), name: headerNameSchema }),
  z.strictObject({ from: z.literal('request_url') }),
  z.strictObject({ from: z.literal('inline'), field: fieldPathSchema.optional() }),
]);
/** A result source. */
export type ResultSource = z.infer<typeof resultSourceSchema>;

/** A list of result sources, first found wins. */
const resultSourcesSchema = z.array(resultSourceSchema).min(1).max(5);

/** A source of an integrity value: a field of the status answer or a header of the result answer. */
const integritySourceSchema = z.union([
  z.strictObject({ from: z.literal('status_field'), field: fieldPathSchema }),
  z.strictObject({ from: z.literal('result_header'), name: headerNameSchema }),
]);

/** Where the result is and how it is checked (R1-R3). */
export const resultSchema = z.strictObject({
  /** Where the result is, first found wins (see {@link resultSourceSchema}). */
  url: resultSourcesSchema,
  /**
   * A successful job without a result is not ready (P7). `false` for operations that have none (a DELETE, a
   * POST that only acts): success then ends `succeeded` with nothing to collect.
   */
  required: z.boolean().default(true),
  sha256: z
    .union([
      z.strictObject({ from: z.literal('status_field'), field: fieldPathSchema, encoding: z.enum(['hex', 'base64']) }),
      z.strictObject({ from: z.literal('result_header'), name: headerNameSchema, encoding: z.enum(['hex', 'base64']) }),
    ])
    .optional(),
  sizeBytes: integritySourceSchema.optional(),
  recordCount: integritySourceSchema.optional(),
  contentType: z.strictObject({ expected: z.array(z.string().min(1).max(200)).min(1).max(10) }).optional(),
  /** R3: a batch result's items, their ID and status fields, and the status values that mean "failed". */
  batch: z
    .strictObject({
      itemsField: fieldPathSchema,
      idField: fieldPathSchema,
      statusField: fieldPathSchema,
      failedValues: z.array(z.string().min(1)).min(1).max(20),
    })
    .optional(),
  /** How records are counted in a CSV result (R2): whether its first line is a header, not a record. */
  csv: z.strictObject({ header: z.boolean() }).optional(),
  /**
   * A paged JSON result: every page is fetched and the items of all pages are stored as one JSON array. The
   * next page is a URL in the answer (`nextLinkField`, `{ "value": [...], "nextLink": "..." }`, same origin), or a
   * token in the answer (`nextTokenField`, AWS's `NextToken`) sent back by the result request as `{nextToken}`.
   */
  paging: z
    .strictObject({
      itemsField: fieldPathSchema,
      nextLinkField: fieldPathSchema.optional(),
      nextTokenField: fieldPathSchema.optional(),
      maxPages: z.number().int().min(1).max(10_000).default(1000),
    })
    .superRefine((paging, ctx) => {
      if ((paging.nextLinkField === undefined) === (paging.nextTokenField === undefined))
        ctx.addIssue({
          code: 'custom',
          path: ['nextLinkField'],
          message: 'give exactly one of nextLinkField (a next-page URL) or nextTokenField (a next-page token)',
        });
    })
    .optional(),
  /** An inline result larger than this is refused (it is staged from the answer that carried it). */
  maxInlineBytes: z.number().int().min(0).max(8_388_608).default(1_048_576),
});
