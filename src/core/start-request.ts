/**
 * What a caller gives to start an operation, and the check the client and the workflow both run on it (C1, U4):
 * identifier grammar, payload size, variables' grammar, actors, policy bounds, and the deadlines' order. Pure.
 */
import { z } from 'zod';
import { canonicalJson } from './canonical-json';
import { actorInputSchema } from './actor';
import { lazySchema } from './lazy-schema';
import { startVariablesSchema } from './operation-variables';
import { pollPolicySchema } from './policy';

/**
 * Identifiers we accept from callers: 1-200 of `[A-Za-z0-9._:-]`, not starting with a dot, so no identifier
 * reads as `.`, `..` or a hidden file name. Stores never use an identifier as a path or key as written (they
 * derive one from its digest); refusing these here is the second line of defence, at the door.
 */
export function idPattern(): RegExp {
  // A new RegExp each time, never one exported: zod resets a pattern's `lastIndex` before each test, and a RegExp
  // exported from src/core is frozen where workflows share the module (workflow-bundle.ts).
  return /^(?!\.)[A-Za-z0-9._:-]{1,200}$/;
}
/** The identifier grammar in words, for error messages and tool descriptions. */
export const ID_RULE = "[A-Za-z0-9._:-]{1,200}, not starting with '.'";
/** An operation ID, provider name or client reference. */
export const idSchema = lazySchema(() => z.string().regex(idPattern(), `must match ${ID_RULE}`));

/** The largest payload accepted, as canonical JSON in UTF-16 code units (it is carried in workflow history). */
export const MAX_PAYLOAD_CHARS = 256 * 1024;

const MAX_DURATION_MS = 366 * 24 * 3600 * 1000;

/** A deadline given as a duration from the start (`afterMs`) or as an absolute instant (`atMs`, epoch ms). */
const deadlineInputSchema = lazySchema(() =>
  z.union([
    z.object({ afterMs: z.number().int().min(1).max(MAX_DURATION_MS) }).strict(),
    z.object({ atMs: z.number().int().min(0) }).strict(),
  ]),
);
/** A deadline as given. */
export type DeadlineInput = z.infer<typeof deadlineInputSchema>;

/** What a caller gives to start an operation. Validated strictly: unknown fields are refused. */
export const startRequestSchema = lazySchema(() =>
  z
    .object({
      operationId: idSchema,
      provider: idSchema,
      /** The provider request body, a JSON object (fingerprinted as canonical JSON). */
      payload: z.record(z.string(), z.unknown()).superRefine((payload, ctx) => {
        let text: string;
        try {
          text = canonicalJson(payload);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: error instanceof Error ? error.message : 'not canonical JSON' });
          return;
        }
        if (text.length > MAX_PAYLOAD_CHARS)
          ctx.addIssue({ code: 'custom', message: `larger than ${MAX_PAYLOAD_CHARS} characters as canonical JSON` });
      }),
      clientReference: idSchema.optional(),
      /**
       * Operation variables for the adapter's request templates: name to value, checked here for their grammar
       * and against the adapter's declarations once those are known. Recorded in history and the store: never a
       * secret.
       */
      variables: startVariablesSchema.optional(),
      startedBy: actorInputSchema,
      authorisedBy: actorInputSchema,
      createDeadline: deadlineInputSchema,
      resultDeadline: deadlineInputSchema,
      policy: z.record(z.string(), z.unknown()).optional(),
    })
    .strict()
    .superRefine((req, ctx) => {
      if (req.policy !== undefined) {
        const parsed = pollPolicySchema.safeParse(req.policy);
        if (!parsed.success)
          for (const issue of parsed.error.issues)
            ctx.addIssue({ code: 'custom', path: ['policy', ...issue.path.map(String)], message: issue.message });
      }
    }),
);
/** A start request as given. */
export type StartRequest = z.infer<typeof startRequestSchema>;

function resolveDeadline(input: DeadlineInput, startMs: number): number {
  return 'afterMs' in input ? startMs + input.afterMs : input.atMs;
}

/** One problem with one field of a start request: the dotted path (empty for the request itself) and why. */
export interface StartRequestIssue {
  path: string;
  message: string;
}

/** The result of {@link validateStartRequest}. */
export type StartRequestCheck =
  | { kind: 'ok'; request: StartRequest; deadlines: { createDeadlineMs: number; resultDeadlineMs: number } }
  | { kind: 'refused'; code: 'ASYNCJOB_ERR_INVALID_INPUT'; issues: StartRequestIssue[] };

/** The deadlines' own rules, checked whenever both deadlines are well formed (even if another field is not). */
function deadlineIssues(
  request: unknown,
  nowMs: number,
): { issues: StartRequestIssue[]; createDeadlineMs?: number; resultDeadlineMs?: number } {
  const r = (typeof request === 'object' && request !== null ? request : {}) as Record<string, unknown>;
  const create = deadlineInputSchema.safeParse(r.createDeadline);
  const result = deadlineInputSchema.safeParse(r.resultDeadline);
  if (!create.success || !result.success) return { issues: [] };
  const createDeadlineMs = resolveDeadline(create.data, nowMs);
  const resultDeadlineMs = resolveDeadline(result.data, nowMs);
  const issues: StartRequestIssue[] = [];
  if (createDeadlineMs <= nowMs) issues.push({ path: 'createDeadline', message: 'must be in the future' });
  if (resultDeadlineMs <= nowMs) issues.push({ path: 'resultDeadline', message: 'must be in the future' });
  if (resultDeadlineMs < createDeadlineMs)
    issues.push({ path: 'resultDeadline', message: 'must not be before the create deadline' });
  return { issues, createDeadlineMs, resultDeadlineMs };
}

/**
 * Checks a start request as the workflow will (C1, U4): the schema (operation ID and provider grammar, payload
 * size, the variables' grammar, actors, policy bounds, no unknown field), then the deadlines: both in the future (a duration counts from
 * `nowMs`) and the result deadline not before the create deadline. Names every bad field at once. The client
 * runs it before starting anything; {@link newOperationRecord} runs it again inside the workflow. Pure.
 */
export function validateStartRequest(request: unknown, nowMs: number): StartRequestCheck {
  const parsed = startRequestSchema.safeParse(request);
  const issues: StartRequestIssue[] = parsed.success
    ? []
    : parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  const deadlines = deadlineIssues(request, nowMs);
  issues.push(...deadlines.issues);
  if (
    !parsed.success ||
    issues.length > 0 ||
    deadlines.createDeadlineMs === undefined ||
    deadlines.resultDeadlineMs === undefined
  ) {
    return { kind: 'refused', code: 'ASYNCJOB_ERR_INVALID_INPUT', issues };
  }
  return {
    kind: 'ok',
    request: parsed.data,
    deadlines: { createDeadlineMs: deadlines.createDeadlineMs, resultDeadlineMs: deadlines.resultDeadlineMs },
  };
}
