/**
 * The input and output schemas of the agent-facing tools (zod; the SDK publishes them as JSON Schema and the
 * client checks every output against them). No input takes a credential: providers hold theirs in the worker (G3).
 */
import { z } from 'zod';
import { MAX_VARIABLE_VALUE_CHARS, MAX_VARIABLES } from '../core/operation-variables';
import { idPattern, ID_RULE } from '../core/start-request';
import { agentOperationSchema, resultSummaryViewSchema } from './views';

const operationId = z
  .string()
  .regex(idPattern(), `must match ${ID_RULE}`)
  .describe('the operation ID (yours: chosen when you started it)');

/** `start_operation` input. */
export const startInputShape = {
  operationId: operationId.describe(
    `an ID you choose, ${ID_RULE}; starting again with the same ID and request joins the same operation`,
  ),
  provider: z.string().regex(idPattern(), `must match ${ID_RULE}`).describe('a provider from list_providers'),
  payload: z.record(z.string(), z.unknown()).describe('the JSON object the provider receives as the job request'),
  clientReference: z
    .string()
    .regex(idPattern(), `must match ${ID_RULE}`)
    .optional()
    .describe('your own reference, kept with the operation'),
  variables: z
    .record(z.string(), z.string().max(MAX_VARIABLE_VALUE_CHARS))
    .optional()
    .describe(
      `operation variables the provider's adapter declares (a scope, a bucket, a region: its documentation names them): name to value, at most ${MAX_VARIABLES}, a name is a lower-case letter then letters, digits or _, a value one line; part of the request (another value is another request); recorded and shown, so never a secret`,
    ),
  createDeadlineMs: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('ms from now for the provider to accept the job; default and maximum: your policy bound'),
  resultDeadlineMs: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('ms from now for a verified result; default and maximum: your policy bound'),
  maxStatusRequests: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('status checks allowed; default and maximum: your policy bound'),
};

/** `start_operation` output. */
export const startOutputShape = {
  operationId: z.string(),
  joined: z.boolean().describe('true when the operation already existed with this request (nothing new started)'),
  operation: agentOperationSchema,
};

/** Input of the tools that take only an operation ID. */
export const operationInputShape = { operationId };

/** `wait_for_change` input. */
export const waitInputShape = {
  operationId,
  sinceChangeToken: z
    .string()
    .max(64)
    .optional()
    .describe('the changeToken you last saw; omit to wait for the next change from now'),
  waitMs: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('the longest to wait, ms; capped by your policy (list_providers: maxWaitMs)'),
};

/** `wait_for_change` output. */
export const waitOutputShape = {
  changed: z.boolean(),
  timedOut: z.boolean().describe('true when the wait ended by time; call again to keep waiting'),
  operation: agentOperationSchema,
};

/** `request_cancel` input. */
export const cancelInputShape = {
  operationId,
  reason: z.string().trim().min(1).max(2000).describe('why the job should stop (recorded in the audit story)'),
  expectedEffect: z.string().trim().min(1).max(2000).optional().describe('what you expect the cancel to do'),
};

/** `request_extension` input. */
export const extensionInputShape = {
  operationId,
  reason: z.string().trim().min(1).max(2000).describe('why more time or checks are needed (a person reads it)'),
  extendMs: z.number().int().positive().optional().describe('more time asked for, ms'),
  extraStatusRequests: z.number().int().positive().optional().describe('more status checks asked for'),
};

/** Output of the two request tools. */
export const requestOutputShape = {
  accepted: z.literal(true).describe('the request is recorded; it is not yet done or granted'),
  operation: agentOperationSchema,
};

/** `get_result` input. */
export const resultInputShape = {
  operationId,
  maxBytes: z.number().int().positive().optional().describe('the most body bytes to return; capped by your policy'),
};

/** `get_result` output. */
export const resultOutputShape = {
  operationId: z.string(),
  localState: z.string(),
  final: z.boolean(),
  summary: resultSummaryViewSchema.nullable(),
  body: z
    .object({
      text: z.string().describe('the first returnedBytes bytes of the validated result, as UTF-8'),
      returnedBytes: z.number().int(),
      sizeBytes: z.number().int(),
      truncated: z.boolean(),
    })
    .nullable(),
  bodyWithheld: z.string().nullable().describe('why no body is given, when none is'),
};

/** `get_audit_story` output. */
export const storyOutputShape = {
  operationId: z.string(),
  chainIntact: z.boolean().describe("false when the journal's hash chain is broken (a person must look)"),
  text: z.string().describe('one line per recorded step, times in UTC, as `asyncjob audit show` prints it'),
};

/** `list_providers` output. */
export const providersOutputShape = {
  identity: z.string().describe('who you are in the audit story'),
  mayCancel: z.boolean(),
  results: z.object({ read: z.enum(['summary', 'body']), maxBodyBytes: z.number().int() }),
  maxWaitMs: z.number().int(),
  providers: z.array(
    z.object({
      name: z.string(),
      maxCreateDeadlineMs: z.number().int(),
      maxResultDeadlineMs: z.number().int(),
      maxStatusRequests: z.number().int(),
      variables: z
        .array(
          z.object({
            name: z.string(),
            description: z.string().optional(),
            type: z.enum(['string', 'integer']),
            required: z.boolean(),
            default: z.string().optional(),
            pattern: z.string().optional(),
            maxLength: z.number().int(),
            mayHoldSlash: z.boolean(),
          }),
        )
        .optional()
        .describe(
          "the operation variables the provider's adapter declares (start_operation's variables); absent when this server cannot read its document",
        ),
    }),
  ),
};
