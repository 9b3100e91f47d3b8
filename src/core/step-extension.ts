/**
 * An extension request (G2, D4): a caller without approval authority (an AI agent) asks for more time or more
 * status checks with its reason. It never grants anything: it raises an escalation, `extension_requested`, that a
 * human answers (extend within the policy's bounds, decline with `keep_bounds`, or stop the job), or joins the one
 * already open. Every requester is named on the escalation and may not approve it. A request for more than any
 * decider could grant is refused naming the bound, and an operation takes only so many requests in a window.
 */
import { z } from 'zod';
import { actorInputSchema } from './actor';
import { DEFAULT_EXTENSION_REQUESTS, type DeciderPolicyInForce, grantableExtension } from './decider-policy';
import { wholeDuration } from './decide-command';
import { lazySchema } from './lazy-schema';
import { type OperationRecord, providerJobKnown } from './operation';
import { Builder, type StepContext, type StepRefusal, type StepResult } from './step-draft';
import { FINAL_STATES } from './transitions';

/** What a caller asks for: who, why, and (informative: the human sets the bounds) how much more. */
export const extensionRequestSchema = lazySchema(() =>
  z
    .object({
      requestedBy: actorInputSchema,
      reason: z.string().trim().min(1).max(2000),
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
 * D4: why the request asks more than any decider could grant: beyond the extension an escalation offers (the
 * operation's policy), or beyond every rule of the decider policy that lets someone extend here.
 */
function beyondGrant(record: OperationRecord, request: ExtensionRequest, deciders?: DeciderPolicyInForce) {
  const grant = deciders ? grantableExtension(deciders.policy, record.provider) : undefined;
  if (grant !== undefined && !grant.anyone)
    return `no rule of the decider policy lets anyone extend at ${record.provider}; a person may still decline or stop the job, so ask for nothing more`;
  const mostMs = Math.min(record.policy.extensionMs, grant?.extendMs ?? Infinity);
  const mostChecks = Math.min(record.policy.extensionStatusRequests, grant?.extraStatusRequests ?? Infinity);
  const over = [
    ...(request.extendMs !== undefined && request.extendMs > mostMs
      ? [`extendMs: at most ${mostMs} (${wholeDuration(mostMs)}) can be granted, asked ${request.extendMs}`]
      : []),
    ...(request.extraStatusRequests !== undefined && request.extraStatusRequests > mostChecks
      ? [`extraStatusRequests: at most ${mostChecks} can be granted, asked ${request.extraStatusRequests}`]
      : []),
  ];
  return over.length > 0 ? over.join('; ') : undefined;
}

/** D4: the recent requests within the window, and why one more is refused (when it is). */
function rateLimit(record: OperationRecord, nowMs: number, deciders?: DeciderPolicyInForce) {
  const limit = deciders?.policy.extensionRequests ?? DEFAULT_EXTENSION_REQUESTS;
  const recent = (record.extensionRequestsAtMs ?? []).filter((atMs) => atMs > nowMs - limit.withinMs);
  if (recent.length < limit.most) return { recent };
  const nextAt = new Date(recent[recent.length - limit.most]! + limit.withinMs).toISOString();
  return {
    recent,
    refused: `${recent.length} extension request${recent.length === 1 ? '' : 's'} within ${wholeDuration(limit.withinMs)} already (at most ${limit.most}); the next is taken from ${nextAt}`,
  };
}

/** The most requesters who may join one escalation (the record keeps each: none of them may approve it). */
const MAX_JOINED = 20;

/**
 * The escalation joined by `request` (D4): its requester is among those who asked, so they may not approve it
 * either (G2), and the join is journalled (`escalation_joined`), so the audit holds them to that too; a requester
 * who asked before is not added twice, their request is journalled again. `journalJoin` false: the record alone, as
 * workflows recorded joins before they were journalled (their histories replay so). Undefined when the escalation
 * already holds the most joins the record keeps: a requester it could not keep is refused, never let in unrecorded,
 * where nothing would stop them approving their own request (D1, G2).
 */
function joined(
  record: OperationRecord,
  request: ExtensionRequest,
  ctx: StepContext,
  journalJoin: boolean,
): StepResult | undefined {
  const escalation = record.escalation!;
  const joinedBy = escalation.joinedBy ?? [];
  const requester = request.requestedBy;
  const known = escalation.requestedBy === requester || joinedBy.includes(requester);
  if (!known && joinedBy.length >= MAX_JOINED) return undefined;
  const withRequester = known
    ? record
    : { ...record, escalation: { ...escalation, joinedBy: [...joinedBy, requester] } };
  if (!journalJoin) return { kind: 'step', record: withRequester, entries: [] };
  const draft = new Builder(record, withRequester);
  draft.appendExtra(
    {
      kind: 'escalation_joined',
      ...(escalation.id !== undefined ? { escalation: escalation.id } : {}),
      requestedBy: requester,
      request: requestText(request),
    },
    ctx.nowMs,
    requester,
  );
  return draft.result();
}

/** How a request is recorded: who asks for what, and why. */
function requestText(request: ExtensionRequest): string {
  return `${request.requestedBy} asks for ${askedFor(request)}: ${request.reason}`.slice(0, 2000);
}

/**
 * Applies an extension request: an escalation for a human, or a join of the one already open (the requester is
 * added to those who may not approve it). Refused for a final operation, before a provider job is known, beyond
 * what any decider could grant, and over the operation's request rate (D4).
 */
export function requestExtension(
  record: OperationRecord,
  request: ExtensionRequest,
  ctx: StepContext,
  journalJoin = true,
): StepResult | StepRefusal {
  if (FINAL_STATES.includes(record.localState))
    return refusal('ASYNCJOB_ERR_OPERATION_FINAL', `the operation already ended ${record.localState}`);
  const state = record.localState;
  if (state !== 'escalated' && (!providerJobKnown(record) || !EXTENDABLE.some((extendable) => extendable === state)))
    return refusal(
      'ASYNCJOB_ERR_EXTENSION_NOT_APPLICABLE',
      `the operation is ${state}: only a running provider job can be given more time`,
    );
  const beyond = beyondGrant(record, request, ctx.deciders);
  if (beyond !== undefined) return refusal('ASYNCJOB_ERR_EXTENSION_BEYOND_GRANT', beyond);
  const rate = rateLimit(record, ctx.nowMs, ctx.deciders);
  if (rate.refused !== undefined) return refusal('ASYNCJOB_ERR_EXTENSION_RATE_LIMITED', rate.refused);
  const counted: OperationRecord = { ...record, extensionRequestsAtMs: [...rate.recent, ctx.nowMs].slice(-100) };
  if (state === 'escalated') {
    const join = joined(counted, request, ctx, journalJoin);
    return (
      join ??
      refusal(
        'ASYNCJOB_ERR_EXTENSION_RATE_LIMITED',
        `${MAX_JOINED} requesters have joined this escalation already (at most ${MAX_JOINED}); ask again once it is answered`,
      )
    );
  }
  const draft = new Builder(counted, counted);
  const detail = requestText(request);
  draft.escalate(
    'extension_requested',
    detail,
    { ...ctx, actor: request.requestedBy },
    'extension_request',
    request.requestedBy,
  );
  return draft.result();
}
