/**
 * How an answer's body is read (V6): as JSON when its content type says so (none, `application/json`, `*+json`,
 * `text/json`, or a media type the contract lists in `jsonContentTypes`), or as a reading declares with `format`.
 * Never guessed from the body.
 */
import { z } from 'zod';

/**
 * How one reading takes the answer's body: `json` parses it whatever its content type; `text` and `binary` never
 * parse it (the HTTP status and headers decide). Absent: JSON when its content type says so.
 */
export const answerFormatSchema = z.enum(['json', 'text', 'binary']);
/** An answer format. */
export type AnswerFormat = z.infer<typeof answerFormatSchema>;

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;

/** Media types read as JSON besides the standard ones (`application/x-amz-json-1.1`); stored lower-cased. */
export const jsonContentTypesSchema = z
  .array(
    z
      .string()
      .transform((value) => value.trim().toLowerCase())
      .refine(
        (value) => MEDIA_TYPE.test(value),
        'a media type such as application/x-amz-json-1.1 (type/subtype, no parameters)',
      ),
  )
  .min(1)
  .max(20);

/** Whether a reading with this format reads the body at all (`text` and `binary` leave it to status and headers). */
export function readsBody(format: AnswerFormat | undefined): boolean {
  return format === undefined || format === 'json';
}

/**
 * Refines a reading (`status`, `status.readings.<name>`): a `text` or `binary` body is never parsed, so nothing
 * may be read from it: no `stateField`, no `derive`.
 */
export function checkBodilessReading(
  reading: { format?: AnswerFormat; stateField?: unknown; derive?: unknown },
  ctx: z.RefinementCtx,
): void {
  if (readsBody(reading.format)) return;
  for (const field of ['stateField', 'derive'] as const) {
    if (reading[field] !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: [field],
        message: `format ${reading.format} never parses the body: read the state with whenNoState (the HTTP status) instead`,
      });
  }
}

/**
 * Refines the create section: with a `text` or `binary` create answer, the job ID and the poll URL come from headers
 * (or the request URL), and no result is read from the body.
 */
export function checkBodilessCreate(
  create: {
    format?: AnswerFormat;
    jobId?: readonly { from: string }[];
    statusUrl?: readonly { from: string }[];
    synchronousSuccess?: unknown;
  },
  ctx: z.RefinementCtx,
): void {
  if (readsBody(create.format)) return;
  const message = `format ${create.format} never parses the create answer's body: read it from a header`;
  for (const key of ['jobId', 'statusUrl'] as const)
    (create[key] ?? []).forEach((source, index) => {
      if (source.from === 'body') ctx.addIssue({ code: 'custom', path: [key, index, 'from'], message });
    });
  if (create.synchronousSuccess !== undefined) ctx.addIssue({ code: 'custom', path: ['synchronousSuccess'], message });
}
