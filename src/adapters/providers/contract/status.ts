/**
 * How a job's state is read (P1, V1): a state field and its table, an AIP-151 derivation, or the HTTP answer
 * itself (a 202 means "still running", a 200 or 204 without a state means "done"). The status section is the
 * default reading; `readings` names others, chosen by where the poll URL came from (an Azure status monitor
 * at `Azure-AsyncOperation` is read differently from the resource at `Location`).
 */
import { z } from 'zod';
import { providerStateTableSchema } from '../../../core/provider-states';
import { answerFormatSchema, checkBodilessReading, type AnswerFormat } from './answer-format';
import { fieldPathSchema, fieldPathsSchema, httpStatusListSchema, readingNameSchema } from './common';
import { pathTemplateSchema, requestTemplateFields } from './request';
import { resultSourceSchema } from './result';

/** AIP-151: `done`, then `error` or `response`. */
const deriveSchema = z.strictObject({
  doneField: fieldPathSchema,
  errorField: fieldPathSchema,
  responseField: fieldPathSchema,
  cancelledWhen: z
    .strictObject({
      field: fieldPathSchema,
      values: z
        .array(z.union([z.string(), z.number()]))
        .min(1)
        .max(20),
    })
    .optional(),
});

/** HTTP statuses that decide the state when the answer states none (an empty body, no state field). */
const whenNoStateSchema = z.strictObject({
  pending: httpStatusListSchema.optional(),
  success: httpStatusListSchema.optional(),
  failure: httpStatusListSchema.optional(),
});

/** The rules that turn one answer into a state (P1, V1). */
const readingShape = {
  /** V6: how the answer's body is read (`json`, `text`, `binary`); absent: JSON when its content type says so. */
  format: answerFormatSchema.optional(),
  /** The field(s) holding the provider's word for the state, first present wins (`status`, `properties.provisioningState`). */
  stateField: fieldPathsSchema.optional(),
  /**
   * An LRO-style derivation (AIP-151): when `doneField` is true, `errorField` present means failure (or
   * cancelled when `cancelledWhen` matches), `responseField` present means success; when it is false the job
   * is pending unless `stateField` says otherwise.
   */
  derive: deriveSchema.optional(),
  /** The provider's words per category; absent means no words (only the HTTP answer decides). */
  stateTable: providerStateTableSchema.optional(),
  /** HTTP statuses that mean "still running" whatever the body says (Azure: 202 Accepted). */
  pendingStatuses: httpStatusListSchema.optional(),
  /** How the HTTP status decides when the answer states no state (V1): `{ pending: [202], success: [200, 204] }`. */
  whenNoState: whenNoStateSchema.optional(),
  /** Where the result lives when this reading reports success; overrides `result.url` (V2); `[]` means none here. */
  result: z.array(resultSourceSchema).max(5).optional(),
};

function needsAWayToRead(
  reading: {
    format?: AnswerFormat;
    stateField?: unknown;
    derive?: unknown;
    whenNoState?: unknown;
    stateTable?: unknown;
  },
  ctx: z.RefinementCtx,
): void {
  checkBodilessReading(reading, ctx);
  if (reading.stateField === undefined && reading.derive === undefined && reading.whenNoState === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['stateField'],
      message: 'give stateField, derive or whenNoState (how the state is read)',
    });
  }
  if (reading.stateField !== undefined && reading.stateTable === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['stateTable'],
      message: 'a stateField needs a stateTable (which words mean pending, success, failure...)',
    });
  }
}

/** A named reading (`status.readings.<name>`). */
const readingSchema = z.strictObject(readingShape).superRefine(needsAWayToRead);
/** A reading, as validated. */
export type Reading = z.infer<typeof readingSchema>;

/** The state rules, the informative fields of a status answer, and the named readings. */
export const statusSchema = z
  .strictObject({
    method: z.enum(['GET', 'POST']).default('GET'),
    /** The documented convention for the status resource (`/v1/jobs/{jobId}`). */
    path: pathTemplateSchema.optional(),
    /** The query, headers and body of every status request (the body needs method POST). */
    ...requestTemplateFields,
    /** Prefer the poll URL read from the create answer (C4, V1); it must be on the provider's origin. */
    useStatusUrl: z.boolean().default(false),
    /** A pending answer naming a new poll URL (where the current one came from) moves polling there, same origin (V1). */
    followPollUrl: z.boolean().default(true),
    ...readingShape,
    readings: z.record(readingNameSchema, readingSchema).optional(),
    progress: z.strictObject({ field: fieldPathSchema, scale: z.enum(['percent', 'fraction']) }).optional(),
    providerTimestampField: fieldPathSchema.optional(),
    expiresAtField: fieldPathSchema.optional(),
    hints: z
      .strictObject({
        pollAfterSecondsField: fieldPathSchema.optional(),
        pollAfterMillisecondsField: fieldPathSchema.optional(),
        nextCheckAtField: fieldPathSchema.optional(),
      })
      .optional(),
  })
  .superRefine((status, ctx) => {
    if (status.path === undefined && !status.useStatusUrl) {
      ctx.addIssue({
        code: 'custom',
        path: ['path'],
        message: 'give a status path template, or set useStatusUrl: true',
      });
    }
    if (status.body !== undefined && status.method === 'GET')
      ctx.addIssue({ code: 'custom', path: ['body'], message: 'a GET sends no body: set method: POST' });
    needsAWayToRead(status, ctx);
  });
