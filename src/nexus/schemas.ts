/**
 * The zod schemas of the `asyncjob` Nexus service's inputs and outputs: the handler validates inputs with them,
 * `npm run schema` writes them as JSON Schema to `schema/nexus/` (for callers in Go, Java or Python), and a test
 * holds them to the TypeScript types of `service.ts`. Built from the record's own field schemas, so an output
 * schema cannot drift from what the workflow returns.
 */
import { z } from 'zod';
import { actorInputSchema } from '../core/actor';
import { ERROR_CODES, type ErrorCode } from '../core/codes';
import { escalationReasonSchema, localStateSchema } from '../core/journal';
import { operationRecordSchema, startRequestSchema } from '../core/operation';
import { idSchema } from '../core/start-request';
import { cancelRequestSchema } from '../workflows/messages';

/** `runJob`'s input: a start request whose `startedBy` is optional (the calling workflow is the starter). */
export const runJobInputSchema = z
  .object({ ...startRequestSchema.shape, startedBy: actorInputSchema.optional() })
  .strict()
  .describe(
    "asyncjob runJob input: a start request (docs/nexus.md). startedBy is the calling workflow, read from the Nexus request's links; give it only when calling from outside a workflow.",
  );

/** `getOperation`'s input. */
export const getOperationInputSchema = z
  .object({ operationId: idSchema })
  .strict()
  .describe('asyncjob getOperation input: the operation ID.');

/** `requestCancel`'s input: the cancel intent (X1); `requestedBy` is the calling workflow when there is one. */
export const requestCancelInputSchema = z
  .object({
    operationId: idSchema,
    ...cancelRequestSchema.shape,
    requestedBy: actorInputSchema.optional(),
  })
  .strict()
  .describe(
    "asyncjob requestCancel input: who asks (the calling workflow, read from the Nexus request's links, when there is one), why, and the expected effect.",
  );

const record = operationRecordSchema.shape;
const remote = record.remote.shape;

/** The operation's summary: what `runJob` completes with and `getOperation` answers; never the result body. */
export const operationSummarySchema = z
  .object({
    operationId: record.operationId,
    provider: record.provider,
    localState: localStateSchema,
    jobId: record.jobId,
    pollUrl: remote.statusUrl,
    remoteState: remote.state,
    providerError: remote.lastError,
    refusal: record.refusal,
    result: record.result,
    escalation: z.object({ reason: escalationReasonSchema, text: z.string() }).nullable(),
    statusRequestsUsed: z.number().int().nonnegative(),
    statusRequestsAllowed: z.number().int().nonnegative(),
  })
  .strict()
  .describe(
    "asyncjob operation summary: the operation's local state (a final one when runJob completes: succeeded, failed, cancelled, ...), the provider job, the result's summary and the open escalation with the text that says how to decide.",
  );

/** `requestCancel`'s output: accepted (the intent is recorded) with the state, or refused with our code. */
export const messageAnswerSchema = z
  .union([
    z.object({ accepted: z.literal(true), localState: z.string() }).strict(),
    z
      .object({
        accepted: z.literal(false),
        code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]),
        message: z.string(),
      })
      .strict(),
  ])
  .describe('asyncjob requestCancel output: accepted with the local state, or refused with its stable code.');

/** Every operation's input and output schema, by operation name. */
export const NEXUS_SCHEMAS = {
  runJob: { input: runJobInputSchema, output: operationSummarySchema },
  getOperation: { input: getOperationInputSchema, output: operationSummarySchema },
  requestCancel: { input: requestCancelInputSchema, output: messageAnswerSchema },
} as const;
