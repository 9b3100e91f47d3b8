/**
 * An extension request (G2): a caller without approval authority (an AI agent) asks for more time or more status
 * checks with its reason. It never grants anything: it raises an escalation, `extension_requested`, that a human
 * answers (extend within the policy's bounds, decline with `keep_bounds`, or stop the job), or joins the one already
 * open. The requester is named on the escalation and may not approve it.
 */
import { z } from 'zod';
import { actorSchema } from './journal';
import { lazySchema } from './lazy-schema';
import { type OperationRecord, providerJobKnown } from './operation';
import { Builder, type StepContext, type StepRefusal, type StepResult } from './step-draft';
import { FINAL_STATES } from './transitions';

/** What a caller asks for: who, why, and (informative: the human sets the bounds) how much more. */
export const extensionRequestSchema = lazySchema(() =>
  z
    .object({
      requestedBy: actorSchema,
      reason: z.string().min(1).max(2000),
      extendMs: z
        .number()
        .int()
        .positive()
        .max(31 * 24 * 3_600_000)
        .optional(),
      extraStatusRequests: z.number().int().positive().max(1_000_000).optional(),
    })
    .strict(),
);
/** An extension request. */
export type ExtensionRequest = z.infer<typeof extensionRequestSchema>;

/** States in which a provider job runs and more time or checks can mean something. */
const EXTENDABLE = ['accepted', 'observing', 'cancelling'] as const;

function refusal(code: StepRefusal['code'], message: string): StepRefusal {
  return { kind: 'refused', code, message };
}

function askedFor(request: ExtensionRequest): string {
  const parts = [
    ...(request.extendMs !== undefined ? [`${Math.round(request.extendMs / 1000)} s more`] : []),
    ...(request.extraStatusRequests !== undefined ? [`${request.extraStatusRequests} more status checks`] : []),
  ];
  return parts.length > 0 ? parts.join(' and ') : 'more time';
}

/**
 * Applies an extension request: an escalation for a human, or nothing when one is already open (the request joins
 * it). Refused for a final operation and before a provider job is known.
 */
export function requestExtension(
  record: OperationRecord,
  request: ExtensionRequest,
  ctx: StepContext,
): StepResult | StepRefusal {
  if (FINAL_STATES.includes(record.localState))
    return refusal('ASYNCJOB_ERR_OPERATION_FINAL', `the operation already ended ${record.localState}`);
  if (record.localState === 'escalated') return { kind: 'step', record, entries: [] };
  const state = record.localState;
  if (!providerJobKnown(record) || !EXTENDABLE.some((extendable) => extendable === state))
    return refusal(
      'ASYNCJOB_ERR_EXTENSION_NOT_APPLICABLE',
      `the operation is ${state}: only a running provider job can be given more time`,
    );
  const draft = new Builder(record, record);
  const detail = `${request.requestedBy} asks for ${askedFor(request)}: ${request.reason}`;
  draft.escalate(
    'extension_requested',
    detail,
    { ...ctx, actor: request.requestedBy },
    'extension_request',
    request.requestedBy,
  );
  return draft.result();
}
