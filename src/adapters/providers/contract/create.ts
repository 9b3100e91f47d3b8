/**
 * How a job is created (C1-C3, I1, V4): the method and path, the body, where the idempotency token and the
 * client reference go, which answers mean "accepted", and where the job ID and the poll URL are read.
 */
import { z } from 'zod';
import { answerFormatSchema, checkBodilessCreate } from './answer-format';
import {
  fieldPathSchema,
  headerNameSchema,
  httpStatusListSchema,
  pollUrlSourceSchema,
  readingNameSchema,
  RESERVED_HEADERS,
  valueSourceSchema,
} from './common';
import {
  callHeadersSchema,
  jsonTemplateSchema,
  mediaTypeSchema,
  pathTemplateSchema,
  queryTemplateSchema,
} from './request';

const placement = z.discriminatedUnion('in', [
  z.strictObject({ in: z.literal('header'), name: headerNameSchema }),
  z.strictObject({ in: z.literal('body'), field: z.string().min(1).max(100) }),
]);

/** The media type of the create body; JSON unless the provider wants its own label (`application/x-amz-json-1.1`). */
const createContentType = mediaTypeSchema.default('application/json');

/** Methods that are idempotent by HTTP semantics (RFC 9110 9.2.2): repeating one has the effect of one. */
export const IDEMPOTENT_METHODS: readonly string[] = ['PUT', 'DELETE'];

/** How a job is created. */
export const createSchema = z
  .strictObject({
    method: z.enum(['POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
    path: pathTemplateSchema,
    /** Query parameters of the create, value templates. */
    query: queryTemplateSchema.optional(),
    /**
     * How the payload is sent: as the whole JSON body, wrapped in a field of it, placed by a JSON template
     * (`'{payload}'` is the payload), or not at all; the body's content type is declared here.
     */
    body: z
      .union([
        z.strictObject({ mode: z.literal('payload'), contentType: createContentType }),
        z.strictObject({
          mode: z.literal('wrapped'),
          field: z.string().min(1).max(100),
          contentType: createContentType,
        }),
        z.strictObject({ mode: z.literal('template'), json: jsonTemplateSchema, contentType: createContentType }),
        z.strictObject({ mode: z.literal('none') }),
      ])
      .default({ mode: 'payload', contentType: 'application/json' }),
    /** Where the idempotency token goes (I1), when the provider takes one. */
    idempotencyToken: placement.optional(),
    /**
     * V4: repeating this exact request is harmless (a PUT or DELETE on a resource URL), so an ambiguous answer
     * is reconciled by sending it again. Only for PUT and DELETE.
     */
    idempotent: z.boolean().default(false),
    /** Where our operation ID goes, when the provider stores a client reference (used by reconciliation). */
    clientReference: placement.optional(),
    /** Extra headers of the create request, e.g. `Repeatability-First-Sent: { from: first_sent_http_date }`. */
    headers: callHeadersSchema.optional(),
    /** Status codes that mean "accepted" (C2, H2, V1); anything else is a refusal or an error. */
    acceptedStatuses: httpStatusListSchema.default([202, 201]),
    /** V6: how the create answer's body is read (`json`, `text`, `binary`); absent: JSON when its content type says so. */
    format: answerFormatSchema.optional(),
    /** Where the job ID is read, first found wins; absent when the provider names jobs only by their poll URL. */
    jobId: z.array(valueSourceSchema).min(1).max(5).optional(),
    /** Where the poll URL is read, first found wins (V1): `Operation-Location`, `Azure-AsyncOperation`, `Location`, the request URL. */
    statusUrl: z.array(pollUrlSourceSchema).min(1).max(6).optional(),
    /**
     * Read the job's state from the create answer: `true` with the status rules, or the name of a reading
     * (Azure's PUT answers with the resource and its `provisioningState`). A final state there ends the wait at
     * once (a synchronous success, C3); a pending one starts polling.
     */
    readState: z.union([z.boolean(), readingNameSchema]).default(false),
    /** C3: a synchronous success carries its result inline in this field of the create answer. */
    synchronousSuccess: z.strictObject({ statuses: httpStatusListSchema, resultField: fieldPathSchema }).optional(),
  })
  .superRefine((create, ctx) => {
    checkBodilessCreate(create, ctx);
    const headerPlacements: [PropertyKey[], string | undefined][] = [
      [
        ['idempotencyToken', 'name'],
        create.idempotencyToken?.in === 'header' ? create.idempotencyToken.name : undefined,
      ],
      [['clientReference', 'name'], create.clientReference?.in === 'header' ? create.clientReference.name : undefined],
    ];
    for (const [path, name] of headerPlacements) {
      if (name !== undefined && RESERVED_HEADERS.has(name))
        ctx.addIssue({
          code: 'custom',
          path,
          message: `the header ${name} is set by the HTTP layer, never by a contract`,
        });
    }
    if (create.idempotent && !IDEMPOTENT_METHODS.includes(create.method)) {
      ctx.addIssue({
        code: 'custom',
        path: ['idempotent'],
        message: `${create.method} is not idempotent by HTTP semantics; only PUT and DELETE may declare it (give an idempotencyToken instead)`,
      });
    }
    if (create.jobId === undefined && create.statusUrl === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['jobId'],
        message: 'give jobId, statusUrl or both: something in the create answer must identify the job',
      });
    }
    checkBodyPlacements(create, ctx);
  });

/**
 * The token and the client reference go into the body only when there is one whose top level is an object: a
 * template that is an object, or the payload (checked when it is sent).
 */
function checkBodyPlacements(
  create: {
    body: { mode: string; json?: unknown };
    idempotencyToken?: { in: string };
    clientReference?: { in: string };
  },
  ctx: z.RefinementCtx,
): void {
  const json = create.body.json;
  const objectTemplate = json !== null && typeof json === 'object' && !Array.isArray(json);
  for (const [key, placement] of [
    ['idempotencyToken', create.idempotencyToken],
    ['clientReference', create.clientReference],
  ] as const) {
    if (placement?.in !== 'body') continue;
    if (create.body.mode === 'none')
      ctx.addIssue({
        code: 'custom',
        path: [key, 'in'],
        message: `a request without a body cannot carry the ${key === 'idempotencyToken' ? 'token' : 'client reference'} in its body`,
      });
    else if (create.body.mode === 'template' && !objectTemplate && json !== '{payload}')
      ctx.addIssue({
        code: 'custom',
        path: [key, 'in'],
        message: 'a body field is added to the top level of the body: body.json must be an object (or "{payload}")',
      });
  }
}
