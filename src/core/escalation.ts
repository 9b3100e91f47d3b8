/**
 * Escalations (E1, E2) and decisions (A1, A2). Each reason determines the bounded options a human may pick;
 * the message is data (so the CLI, the Web UI memo and tests share it) with a plain-text rendering that never
 * asks "continue?". A decision is validated against the options offered: who approved, why, and new bounds
 * within the offer. An extension adds bounded time and checks; counters are never reset.
 */
import { z } from 'zod';
import { issueText } from './issues';
import {
  type EscalationReason,
  escalationReasonSchema,
  localStateSchema,
  type LocalState,
  actorSchema,
} from './journal';
import { actorInputSchema } from './actor';
import { decisionSignatureSchema } from './decision-signature';
import { lazySchema } from './lazy-schema';
import { type OptionFacts, candidateOptions, missingForOption, optionRefusal } from './option-executability';

/** The closed set of decision options. */
export const decisionOptionSchema = lazySchema(() =>
  z.enum([
    /** Keep waiting: adds `extendMs` to the deadline and `extraStatusRequests` (and failure allowances) to the budgets. */
    'extend',
    /** Call the provider's documented cancel endpoint once (offered only when the adapter supports cancel). */
    'cancel_at_provider',
    /** Stop automation and close the operation; the remote job is left as it is. */
    'close',
    /** Use a result that failed validation, on a human's authority. */
    'accept_result',
    /** Collect the result again (only offered when collecting is safe to repeat per the adapter, R5). */
    'retry_collect',
    /** Re-send create with the SAME idempotency token to reconcile (U2, I3). */
    'retry_create_same_token',
    /**
     * Look the job up at the provider by the adapter's list or lookup (U2), in a new create window; create is sent
     * again only if the provider has no job (I3). Offered only when the adapter declares a list or a lookup.
     */
    'look_up_job',
    /** Keep one of the conflicting job IDs (U3); the decision names it in `jobId`. */
    'adopt_job',
    /** Look at the provider's console; recorded, changes no state. */
    'inspect_provider_console',
    /** Go on within the current bounds: an extension request declined (G2). */
    'keep_bounds',
  ]),
);
/** A decision option. */
export type DecisionOption = z.infer<typeof decisionOptionSchema>;

/** One option as offered, with its bounds. */
const offeredOptionSchema = lazySchema(() =>
  z.object({
    option: decisionOptionSchema,
    /** Human-readable label, e.g. "extend by 15 min with 4 more checks". */
    label: z.string().min(1).max(200),
    /** For `extend`: the most time that may be added, ms. */
    extendMs: z.number().int().positive().optional(),
    /** For `extend`: the most status requests that may be added. */
    extraStatusRequests: z.number().int().nonnegative().optional(),
    /** For `extend`: the most transport failures that may be added (S5 escalations). */
    extraTransportFailures: z.number().int().nonnegative().optional(),
    /** For `extend`: the most consecutive 429 answers that may be added (rate_limited escalations). */
    extraRateLimited: z.number().int().nonnegative().optional(),
    /** For `adopt_job`: the job IDs that may be adopted. */
    jobIds: z.array(z.string().min(1).max(500)).max(20).optional(),
  }),
);
/** An offered option. */
export type OfferedOption = z.infer<typeof offeredOptionSchema>;

/** The facts an escalation message shows (E2). No secrets: IDs, states, counts and times only. */
const escalationMessageSchema = lazySchema(() =>
  z.object({
    operationId: z.string().min(1).max(200),
    provider: z.string().min(1).max(200),
    /** The provider job, or every job ID seen (U3 conflicts list more than one). */
    providerJobIds: z.array(z.string().max(500)).max(20),
    traceId: z.string().max(200),
    localState: localStateSchema,
    /** The provider's last reported state, verbatim, if any. */
    lastRemoteState: z.string().max(500).optional(),
    elapsedMs: z.number().int().nonnegative(),
    statusRequestsUsed: z.number().int().nonnegative(),
    statusRequestsAllowed: z.number().int().nonnegative(),
    lastHttp: z
      .object({
        transport: z.string().max(50),
        httpStatus: z.number().int().optional(),
        atMs: z.number().int().nonnegative(),
      })
      .optional(),
    reason: escalationReasonSchema,
    /** One sentence on what happened, e.g. "HTTP 403 on status read". */
    detail: z.string().max(2000),
  }),
);

/** The open escalation carried in the operation record. */
export const openEscalationSchema = lazySchema(() =>
  z.object({
    reason: escalationReasonSchema,
    message: escalationMessageSchema,
    options: z.array(offeredOptionSchema).min(1).max(10),
    raisedAtMs: z.number().int().nonnegative(),
    /** After this instant a decision is refused; the operation stays escalated (epoch ms). */
    decisionDeadlineMs: z.number().int().nonnegative(),
    /** The local state the operation was in when escalated. */
    raisedFrom: localStateSchema,
    /** Who asked for this escalation (an extension request, G2): never the one who may approve it. */
    requestedBy: actorSchema.optional(),
    /** Who asked for more while it was open (their requests joined it, D4): none of them may approve it either. */
    joinedBy: z.array(actorSchema).max(20).optional(),
    /** The journal sequence of its escalation entry: what a signed decision names, so it answers this one only. */
    id: z.number().int().positive().optional(),
  }),
);
/** An open escalation. */
export type OpenEscalation = z.infer<typeof openEscalationSchema>;

/** What the adapter can do, which bounds the options offered (E3). */
export interface AdapterCapabilities {
  /** The provider has a documented cancel endpoint (E2: "cancel at provider" only then). */
  cancel: boolean;
  /** Collecting the result is safe to repeat (R5). */
  repeatableCollect: boolean;
  /**
   * Re-sending create cannot start a second job: the create carries an idempotency token or its method is
   * idempotent (I3, V4). Absent in facts recorded before it existed: see `withResendFact`.
   */
  sameTokenResend?: boolean;
  /**
   * The adapter finds a job after a lost create answer by a list or a lookup (U2). Derived from its reconciliation
   * method by `withReconciliationFacts`, never declared apart from it.
   */
  lookup?: boolean;
}

/** Conservative capabilities: no cancel, no repeated collection. */
export const NO_CAPABILITIES: AdapterCapabilities = { cancel: false, repeatableCollect: false };

/** E1: for each reason, the options it allows, before adapter capabilities filter them. */
export const OPTIONS_BY_REASON: Readonly<Record<EscalationReason, readonly DecisionOption[]>> = {
  deadline_exceeded: ['extend', 'cancel_at_provider', 'close', 'inspect_provider_console'],
  request_budget_exhausted: ['extend', 'cancel_at_provider', 'close', 'inspect_provider_console'],
  rate_limited: ['extend', 'cancel_at_provider', 'close', 'inspect_provider_console'],
  unknown_state: ['extend', 'cancel_at_provider', 'close', 'inspect_provider_console'],
  // No retry with the same credential (H4): only closing or looking.
  authorization_denied: ['close', 'inspect_provider_console'],
  provider_failure: ['extend', 'cancel_at_provider', 'close', 'inspect_provider_console'],
  create_unknown: ['retry_create_same_token', 'look_up_job', 'close', 'inspect_provider_console'],
  job_id_conflict: ['adopt_job', 'cancel_at_provider', 'close', 'inspect_provider_console'],
  cancellation_unconfirmed: ['extend', 'close', 'inspect_provider_console'],
  result_validation_failed: ['accept_result', 'retry_collect', 'close', 'inspect_provider_console'],
  // Our request was at fault (an adapter or payload problem): fix it, then extend to look again, or close.
  request_rejected: ['extend', 'cancel_at_provider', 'close', 'inspect_provider_console'],
  // An agent asked for more (G2): a human grants it (extend), declines it (keep_bounds), or stops the job.
  extension_requested: ['extend', 'keep_bounds', 'cancel_at_provider', 'close', 'inspect_provider_console'],
};

/** The bounds one extension offers, from the policy. */
export interface ExtensionBounds {
  extensionMs: number;
  extensionStatusRequests: number;
  maxTransportFailures: number;
  maxRateLimited: number;
}

function minutes(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

/**
 * Builds the offered options for `reason` (E1, E3): the reason's candidates, only those that can act on `facts`
 * (`missingForOption`: no cancel without a cancel call, no same-token re-send without a token or an idempotent
 * create, no collecting again unless repeatable...), and bounded by the policy's extension.
 */
export function optionsFor(reason: EscalationReason, facts: OptionFacts, bounds: ExtensionBounds): OfferedOption[] {
  const out: OfferedOption[] = [];
  for (const option of candidateOptions(OPTIONS_BY_REASON[reason], reason, facts)) {
    if (missingForOption(option, facts).length > 0) continue;
    switch (option) {
      case 'extend': {
        const extra: OfferedOption = {
          option,
          label: `extend by ${minutes(bounds.extensionMs)} with ${bounds.extensionStatusRequests} more checks`,
          extendMs: bounds.extensionMs,
          extraStatusRequests: bounds.extensionStatusRequests,
        };
        if (reason === 'provider_failure') extra.extraTransportFailures = bounds.maxTransportFailures;
        if (reason === 'rate_limited') extra.extraRateLimited = bounds.maxRateLimited;
        out.push(extra);
        break;
      }
      case 'adopt_job':
        out.push({ option, label: `keep one job: ${facts.jobIds.join(' or ')}`, jobIds: [...facts.jobIds] });
        break;
      case 'retry_create_same_token':
        out.push({
          option,
          label: facts.capabilities.sameTokenResend
            ? 're-send create with the same idempotency token'
            : 'send create again (no job can have been created)',
        });
        break;
      default:
        out.push({ option, label: LABELS[option] });
    }
  }
  return out;
}

const LABELS: Readonly<Record<DecisionOption, string>> = {
  extend: 'extend',
  cancel_at_provider: 'cancel at provider',
  close: 'close the operation (the provider job is left as it is)',
  accept_result: 'accept the result despite failed validation',
  retry_collect: 'collect the result again',
  retry_create_same_token: 're-send create with the same idempotency token',
  look_up_job: 'look the job up at the provider (create is sent again only if it has none)',
  adopt_job: 'keep one job',
  inspect_provider_console: 'inspect provider console',
  keep_bounds: 'decline: go on within the current bounds',
};

function hhmm(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')} UTC`;
}

function elapsed(ms: number): string {
  const totalMinutes = Math.floor(ms / 60_000);
  if (totalMinutes < 1) return `${Math.floor(ms / 1000)} seconds`;
  if (totalMinutes < 120) return `${totalMinutes} minutes`;
  return `${Math.floor(totalMinutes / 60)} hours ${totalMinutes % 60} minutes`;
}

/** Renders an escalation as plain text in the format docs/rules.md#e2 describes (E2). Never asks "continue?". */
export function renderEscalation(escalation: OpenEscalation): string {
  const m = escalation.message;
  const lastHttp = m.lastHttp ? `${m.lastHttp.httpStatus ?? m.lastHttp.transport} at ${hhmm(m.lastHttp.atMs)}` : 'none';
  return [
    'External job needs a decision',
    `Operation: ${m.operationId}`,
    `Provider: ${m.provider}`,
    `Provider job: ${m.providerJobIds.length > 0 ? m.providerJobIds.join(', ') : 'none known'}`,
    `Trace: ${m.traceId}`,
    `Last state: ${m.lastRemoteState ?? m.localState}`,
    `Elapsed time: ${elapsed(m.elapsedMs)}`,
    `Status requests: ${m.statusRequestsUsed} of ${m.statusRequestsAllowed}`,
    `Last HTTP result: ${lastHttp}`,
    `Stopped because: ${m.reason} (${m.detail})`,
    `Safe options: ${escalation.options.map((o) => o.label).join(', ')}`,
    `Decide before: ${new Date(escalation.decisionDeadlineMs).toISOString()}`,
  ].join('\n');
}

/** A decision as a human or an authorised process gives it (A2). */
export const decisionSchema = lazySchema(() =>
  z
    .object({
      option: decisionOptionSchema,
      /** Who decides, parsed to its canonical form (D1). */
      approvedBy: actorInputSchema,
      reason: z.string().trim().min(1).max(2000),
      extendMs: z.number().int().positive().optional(),
      extraStatusRequests: z.number().int().nonnegative().optional(),
      extraTransportFailures: z.number().int().nonnegative().optional(),
      extraRateLimited: z.number().int().nonnegative().optional(),
      jobId: z.string().min(1).max(500).optional(),
      /** The decider's Ed25519 signature over this decision (D3). */
      signature: decisionSignatureSchema.optional(),
      /** The tool that sent it, as it declares itself (D5); absent: told by how it arrived. */
      route: z.enum(['cli', 'api', 'mcp']).optional(),
    })
    .strict(),
);
/** A decision. */
export type Decision = z.infer<typeof decisionSchema>;

/** The result of {@link validateDecision}. */
export type DecisionCheck =
  | { kind: 'ok'; decision: Decision }
  | {
      kind: 'refused';
      code:
        | 'ASYNCJOB_ERR_DECISION_INCOMPLETE'
        | 'ASYNCJOB_ERR_OPTION_NOT_OFFERED'
        | 'ASYNCJOB_ERR_OPTION_NOT_EXECUTABLE'
        | 'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS'
        | 'ASYNCJOB_ERR_DECISION_TOO_LATE';
      message: string;
    };

/** A decision parsed (identities canonical), or refused naming every field that is missing or wrong (A2). */
export function parseDecision(
  input: unknown,
): { kind: 'ok'; decision: Decision } | { kind: 'refused'; code: 'ASYNCJOB_ERR_DECISION_INCOMPLETE'; message: string } {
  const parsed = decisionSchema.safeParse(input);
  if (parsed.success) return { kind: 'ok', decision: parsed.data };
  return {
    kind: 'refused',
    code: 'ASYNCJOB_ERR_DECISION_INCOMPLETE',
    message: issueText(parsed.error.issues, '(decision)'),
  };
}

/**
 * A2: validates a decision against the escalation's offered options at `limits.nowMs`: it must name who and
 * why, choose an offered option, arrive before the decision deadline, and stay within the offered bounds
 * (an `extend` names its extension explicitly: `extendMs` and `extraStatusRequests`, each at most what was
 * offered). Given the option facts now, an option that cannot act on them is refused naming what is missing
 * (E3, `optionRefusal`). Pure; safe to repeat.
 */
export function validateDecision(
  escalation: OpenEscalation,
  decision: unknown,
  limits: { nowMs: number; facts?: OptionFacts },
): DecisionCheck {
  const parsed = parseDecision(decision);
  if (parsed.kind === 'refused') return parsed;
  const d = parsed.decision;
  if (limits.nowMs > escalation.decisionDeadlineMs) {
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECISION_TOO_LATE',
      message: `decision at ${limits.nowMs} is after the decision deadline ${escalation.decisionDeadlineMs}`,
    };
  }
  const refusal = optionRefusal(escalation, OPTIONS_BY_REASON[escalation.reason], d.option, limits.facts);
  if (refusal !== undefined) return { kind: 'refused', ...refusal };
  const offered = escalation.options.find((o) => o.option === d.option)!;
  const out = (message: string): DecisionCheck => ({
    kind: 'refused',
    code: 'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS',
    message,
  });
  if (d.option === 'extend') {
    if (d.extendMs === undefined || d.extraStatusRequests === undefined) {
      return {
        kind: 'refused',
        code: 'ASYNCJOB_ERR_DECISION_INCOMPLETE',
        message: 'extendMs and extraStatusRequests: an extension names its new bounds',
      };
    }
    if (d.extendMs > (offered.extendMs ?? 0))
      return out(`extendMs: ${d.extendMs} exceeds the offered ${offered.extendMs ?? 0}`);
    if (d.extraStatusRequests > (offered.extraStatusRequests ?? 0))
      return out(
        `extraStatusRequests: ${d.extraStatusRequests} exceeds the offered ${offered.extraStatusRequests ?? 0}`,
      );
    if ((d.extraTransportFailures ?? 0) > (offered.extraTransportFailures ?? 0))
      return out(
        `extraTransportFailures: ${d.extraTransportFailures} exceeds the offered ${offered.extraTransportFailures ?? 0}`,
      );
    if ((d.extraRateLimited ?? 0) > (offered.extraRateLimited ?? 0))
      return out(`extraRateLimited: ${d.extraRateLimited} exceeds the offered ${offered.extraRateLimited ?? 0}`);
  } else if (
    d.extendMs !== undefined ||
    d.extraStatusRequests !== undefined ||
    d.extraTransportFailures !== undefined ||
    d.extraRateLimited !== undefined
  ) {
    return out(`${d.option} grants no extension; extension fields are only for "extend"`);
  }
  if (d.option === 'adopt_job') {
    if (d.jobId === undefined || !(offered.jobIds ?? []).includes(d.jobId))
      return out(`jobId: must be one of ${(offered.jobIds ?? []).join(', ')}`);
  } else if (d.jobId !== undefined) {
    return out('jobId: only "adopt_job" names a job');
  }
  return { kind: 'ok', decision: d };
}

/** The local state a decision leads to from `escalated`, or `null` when it changes no state (inspect). */
export function decisionTarget(option: DecisionOption, cancelAlreadySent: boolean): LocalState | null {
  switch (option) {
    case 'extend':
    case 'keep_bounds':
      // A cancel already sent is never sent again (X3): keep waiting for its confirmation instead.
      return cancelAlreadySent ? 'cancelling' : 'observing';
    case 'adopt_job':
      return 'observing';
    case 'cancel_at_provider':
      return 'cancel_requested';
    case 'close':
      return 'closed';
    case 'accept_result':
    case 'retry_collect':
      return 'result_collecting';
    case 'retry_create_same_token':
    case 'look_up_job':
      return 'reconciliation';
    case 'inspect_provider_console':
      return null;
  }
}
