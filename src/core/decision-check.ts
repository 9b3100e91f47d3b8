/**
 * The one check every decision passes, whatever its route (the CLI, the client, the Web UI's signal form, an
 * update from any Temporal client): the offer and its bounds (A2, E3), agents never granting and no one approving
 * their own request in any spelling (G2, D1), the decider policy in force (D2) and the signature (D3). What it
 * returns on acceptance is how the decision was proven, which the journal records (D5). Pure.
 */
import { actorKind, sameActor } from './actor';
import {
  type DeciderPolicyInForce,
  REQUESTER_WITHDRAWS,
  deciderVerdict,
  keysOf,
  withdrawsOwnRequest,
} from './decider-policy';
import { signedDecideCommand } from './decide-command';
import { SIGNATURE_CLOCK_SKEW_MS, type DecisionSignature, verifyDecisionSignature } from './decision-signature';
import { type Decision, type OpenEscalation, validateDecision } from './escalation';
import { type DecisionRoute } from './journal';
import { type OptionFacts } from './option-executability';

/** How a decision reached the workflow: the `decide` signal or the `decideOperation` update. */
export type DecisionTransport = 'signal' | 'update';

/** What a decision is checked with, besides the escalation. */
export interface DecisionCheckContext {
  nowMs: number;
  operationId: string;
  provider: string;
  transport: DecisionTransport;
  facts?: OptionFacts;
  /** The policy the operation started under; absent: anyone not refused by G2 may decide (today's behaviour). */
  deciders?: DeciderPolicyInForce;
}

/** How an accepted decision was proven (D5): journalled with it. */
interface DecisionProof {
  route: DecisionRoute;
  /** The policy and the rule that allowed it, when a policy is in force. */
  policy?: { digest: string; rule: string };
  /** The verified signature, when signed. */
  signature?: DecisionSignature;
}

/** The result of {@link checkDecision}. */
export type CheckedDecision =
  { kind: 'ok'; decision: Decision; proof: DecisionProof } | { kind: 'refused'; code: RefusalCode; message: string };

type RefusalCode =
  | Extract<ReturnType<typeof validateDecision>, { kind: 'refused' }>['code']
  | 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED'
  | 'ASYNCJOB_ERR_SELF_APPROVAL'
  | 'ASYNCJOB_ERR_SIGNATURE_REQUIRED'
  | 'ASYNCJOB_ERR_SIGNATURE_INVALID';

/** The bounds a decision names, as recorded and signed. */
export function decisionBounds(decision: Decision): Record<string, number | string> {
  const bounds: Record<string, number | string> = {};
  for (const key of [
    'extendMs',
    'extraStatusRequests',
    'extraTransportFailures',
    'extraRateLimited',
    'jobId',
  ] as const) {
    const value = decision[key];
    if (value !== undefined) bounds[key] = value;
  }
  return bounds;
}

/**
 * The route a decision is recorded with. The transport is the one fact the workflow has: a signal is the Web UI's
 * form, whatever its JSON declares (a signal can say anything); an update is the route our tools declare (`cli`,
 * `api`, `mcp`), else `api`.
 */
export function decisionRoute(decision: { route?: unknown }, transport: DecisionTransport): DecisionRoute {
  if (transport === 'signal') return 'web-ui';
  const declared = decision.route;
  return declared === 'cli' || declared === 'mcp' ? declared : 'api';
}

/** G2, D1: agents only decline; no requester approves their own request, compared in canonical form. */
function grantRefusal(escalation: OpenEscalation, decision: Decision): CheckedDecision | undefined {
  if (decision.option === 'keep_bounds') return undefined;
  const requesters = [escalation.requestedBy, ...(escalation.joinedBy ?? [])].filter((r) => r !== undefined);
  if (requesters.some((r) => sameActor(r, decision.approvedBy)))
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_SELF_APPROVAL',
      message: `approvedBy: ${decision.approvedBy} asked for this escalation and cannot grant it (G2); only withdraw it (keep_bounds)`,
    };
  if (actorKind(decision.approvedBy) === 'agent')
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
      message: `approvedBy: ${decision.approvedBy} is an agent; agents ask and people grant (G2), an agent may only decline (keep_bounds)`,
    };
  return undefined;
}

/** D3: a signature verifies with one of the decider's keys, over this very decision, signed while it was open. */
function signatureRefusal(
  escalation: OpenEscalation,
  decision: Decision,
  signature: DecisionSignature,
  ctx: DecisionCheckContext,
): string | undefined {
  if (ctx.deciders === undefined)
    return 'no decider policy is in force for this operation, so no key can be checked; send it unsigned';
  if (escalation.id === undefined) return 'this escalation has no ID to sign; send it unsigned';
  const signedAtMs = Date.parse(signature.signedAt);
  if (signedAtMs < escalation.raisedAtMs - SIGNATURE_CLOCK_SKEW_MS)
    return `signed at ${signature.signedAt}, before this escalation was raised (a signature for another one?)`;
  if (signedAtMs > ctx.nowMs + SIGNATURE_CLOCK_SKEW_MS) return `signed at ${signature.signedAt}, in the future`;
  const check = verifyDecisionSignature(
    signature,
    {
      operationId: ctx.operationId,
      escalationId: escalation.id,
      option: decision.option,
      bounds: decisionBounds(decision),
      decider: decision.approvedBy,
      reason: decision.reason,
    },
    keysOf(ctx.deciders.policy, decision.approvedBy),
  );
  return check.kind === 'invalid' ? check.message : undefined;
}

/**
 * Checks a decision on the open escalation: offered, in bounds and in time (A2, E3); not an agent's grant nor a
 * self-approval (G2); signed correctly when signed (D3); allowed by the policy in force, signed where it must be
 * (D2, D3). The only check: the update validator, the main loop and the audit all call it.
 */
export function checkDecision(escalation: OpenEscalation, input: unknown, ctx: DecisionCheckContext): CheckedDecision {
  const valid = validateDecision(escalation, input, { nowMs: ctx.nowMs, ...(ctx.facts ? { facts: ctx.facts } : {}) });
  if (valid.kind === 'refused') return valid;
  const decision = valid.decision;
  const refused = grantRefusal(escalation, decision);
  if (refused !== undefined) return refused;
  const route = decisionRoute(decision, ctx.transport);
  if (decision.signature !== undefined) {
    const why = signatureRefusal(escalation, decision, decision.signature, ctx);
    if (why !== undefined) return { kind: 'refused', code: 'ASYNCJOB_ERR_SIGNATURE_INVALID', message: why };
  }
  const signature = decision.signature ? { signature: decision.signature } : {};
  if (ctx.deciders === undefined) return { kind: 'ok', decision, proof: { route, ...signature } };
  if (withdrawsOwnRequest(decision.option, decision.approvedBy, escalation.requestedBy))
    return {
      kind: 'ok',
      decision,
      proof: { route, policy: { digest: ctx.deciders.digest, rule: REQUESTER_WITHDRAWS }, ...signature },
    };
  const verdict = deciderVerdict(ctx.deciders.policy, {
    provider: ctx.provider,
    reason: escalation.reason,
    option: decision.option,
    decider: decision.approvedBy,
    ...(decision.extendMs !== undefined ? { extendMs: decision.extendMs } : {}),
    ...(decision.extraStatusRequests !== undefined ? { extraStatusRequests: decision.extraStatusRequests } : {}),
  });
  if (verdict.kind === 'refused') return verdict;
  if (verdict.signatureRequired && decision.signature === undefined)
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_SIGNATURE_REQUIRED',
      message: `the decider policy (rule "${verdict.rule}") requires this decision to be signed; run instead: ${signedDecideCommand(ctx.operationId, decision)}`,
    };
  return {
    kind: 'ok',
    decision,
    proof: {
      route,
      policy: { digest: ctx.deciders.digest, rule: verdict.rule },
      ...signature,
    },
  };
}
