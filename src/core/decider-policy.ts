/**
 * Who may decide (D1, D2): the operator's decider policy as the workflow holds it, durations in milliseconds and
 * identities canonical. Rules name deciders (identities or `group:<name>`) per provider, escalation reason and
 * option, with the largest extension and the most extra checks each may grant; the policy says which decisions
 * must be signed (D3) and how often one operation may ask for more (D4). An operation keeps the policy it started
 * under, known by its digest. Pure: used by workflow code and by the audit.
 */
import { z } from 'zod';
import { actorInputSchema, sameActor } from './actor';
import { canonicalJson } from './canonical-json';
import { type DecisionOption, decisionOptionSchema } from './escalation';
import { type EscalationReason, escalationReasonSchema } from './journal';
import { lazySchema } from './lazy-schema';
import { sha256HexOfText } from './sha256';
import { idSchema } from './start-request';

/** An Ed25519 public key as policies hold it: `ed25519:` and its 32 bytes in lowercase hex. */
export const publicKeySchema = lazySchema(() =>
  z.string().regex(/^ed25519:[0-9a-f]{64}$/, 'must be ed25519: and 64 lowercase hex characters'),
);

const groupNameSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'must be lowercase letters, digits, . _ -');

/** A rule's `who`: a canonical identity or `group:<name>`. */
const deciderReferenceSchema = lazySchema(() =>
  z.union([z.string().regex(/^group:[a-z0-9][a-z0-9._-]{0,62}$/), actorInputSchema]),
);

/** One rule: these deciders may choose these options on these providers' escalations for these reasons. */
const deciderRuleSchema = lazySchema(() =>
  z
    .object({
      name: groupNameSchema,
      who: z.array(deciderReferenceSchema).min(1).max(200),
      /** Provider names, or `*` for every provider. */
      providers: z.array(z.union([z.literal('*'), idSchema])).min(1),
      /** Escalation reasons, or `*` for every reason. */
      reasons: z.array(z.union([z.literal('*'), escalationReasonSchema])).min(1),
      options: z.array(decisionOptionSchema).min(1),
      /** For `extend`: the longest extension this rule grants, ms (absent: what the escalation offers). */
      largestExtensionMs: z.number().int().positive().optional(),
      /** For `extend`: the most extra status checks this rule grants (absent: what the escalation offers). */
      mostExtraChecks: z.number().int().nonnegative().optional(),
      /** Every decision this rule allows must be signed. */
      signed: z.boolean().optional(),
    })
    .strict(),
);
/** A decider rule. */
type DeciderRule = z.infer<typeof deciderRuleSchema>;

/** The decider policy in its normalised form: what the workflow checks, the journal records and the audit re-checks. */
export const deciderPolicySchema = lazySchema(() =>
  z
    .object({
      /** Deciders who sign, with their public keys (a decider without keys need not be listed). */
      deciders: z
        .array(z.object({ identity: actorInputSchema, keys: z.array(publicKeySchema).min(1).max(10) }).strict())
        .max(500),
      groups: z.record(groupNameSchema, z.array(actorInputSchema).min(1).max(500)),
      rules: z.array(deciderRuleSchema).min(1).max(200),
      /** Decisions that must be signed whatever the rule: these options, and extensions longer than this. */
      signatures: z
        .object({
          options: z.array(decisionOptionSchema),
          extensionsOverMs: z.number().int().positive().optional(),
        })
        .strict(),
      /** At most `most` extension requests per operation within `withinMs` (an agent's flood is refused, D4). */
      extensionRequests: z
        .object({ most: z.number().int().min(1).max(100), withinMs: z.number().int().positive() })
        .strict(),
    })
    .strict(),
);
/** A decider policy. */
export type DeciderPolicy = z.infer<typeof deciderPolicySchema>;

/** The policy an operation started under, with its digest (its version). */
export const deciderPolicyInForceSchema = lazySchema(() =>
  z.object({ digest: z.string().regex(/^sha256:[0-9a-f]{64}$/), policy: deciderPolicySchema }).strict(),
);
/** A policy in force. */
export type DeciderPolicyInForce = z.infer<typeof deciderPolicyInForceSchema>;

/** The extension requests allowed without a policy: three an hour per operation. */
export const DEFAULT_EXTENSION_REQUESTS = { most: 3, withinMs: 3_600_000 } as const;

/** The digest of a normalised policy: SHA-256 of its canonical JSON. */
export function deciderPolicyDigest(policy: DeciderPolicy): string {
  return `sha256:${sha256HexOfText(canonicalJson(policy))}`;
}

/** The policy with its digest. */
export function inForce(policy: DeciderPolicy): DeciderPolicyInForce {
  return { digest: deciderPolicyDigest(policy), policy };
}

/** What a decision asks, as the policy judges it. */
export interface DecisionAsked {
  provider: string;
  reason: EscalationReason;
  option: DecisionOption;
  /** Canonical identity of the decider. */
  decider: string;
  extendMs?: number;
  extraStatusRequests?: number;
}

/** The policy's verdict on a decision. */
export type DeciderVerdict =
  | { kind: 'allowed'; rule: string; signatureRequired: boolean }
  | { kind: 'refused'; code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED'; message: string };

/** The members of a group the policy defines (its own entries only: `group:constructor` is no group). */
function groupMembers(policy: DeciderPolicy, group: string): readonly string[] {
  return Object.hasOwn(policy.groups, group) ? (policy.groups[group] ?? []) : [];
}

function names(policy: DeciderPolicy, rule: DeciderRule, decider: string): boolean {
  return rule.who.some((who) =>
    who.startsWith('group:')
      ? groupMembers(policy, who.slice('group:'.length)).some((member) => sameActor(member, decider))
      : sameActor(who, decider),
  );
}

function covers(rule: DeciderRule, asked: Omit<DecisionAsked, 'decider'>): boolean {
  return (
    (rule.providers.includes('*') || rule.providers.includes(asked.provider)) &&
    (rule.reasons.includes('*') || rule.reasons.includes(asked.reason)) &&
    rule.options.includes(asked.option)
  );
}

/** Why `rule` does not grant the extension asked, or undefined when it does. */
function limitBroken(rule: DeciderRule, asked: DecisionAsked): string | undefined {
  if (asked.option !== 'extend') return undefined;
  if (rule.largestExtensionMs !== undefined && (asked.extendMs ?? 0) > rule.largestExtensionMs)
    return `rule "${rule.name}" grants an extension of at most ${rule.largestExtensionMs} ms (asked ${asked.extendMs} ms)`;
  if (rule.mostExtraChecks !== undefined && (asked.extraStatusRequests ?? 0) > rule.mostExtraChecks)
    return `rule "${rule.name}" grants at most ${rule.mostExtraChecks} extra checks (asked ${asked.extraStatusRequests})`;
  return undefined;
}

/** True when the policy itself (not only a rule) asks for a signature on this decision. */
function policyWantsSignature(policy: DeciderPolicy, asked: DecisionAsked): boolean {
  const over = policy.signatures.extensionsOverMs;
  return (
    policy.signatures.options.includes(asked.option) ||
    (asked.option === 'extend' && over !== undefined && (asked.extendMs ?? 0) > over)
  );
}

/**
 * D2: the first rule (in the file's order) that lets `asked.decider` choose `asked.option` on this provider's
 * escalation for this reason within its limits, and whether the decision must be signed (D3). Refused naming the
 * rule that did not allow it: the one that named the decider but not within its limits, else that no rule names
 * the decider for this option.
 */
export function deciderVerdict(policy: DeciderPolicy, asked: DecisionAsked): DeciderVerdict {
  const candidates = policy.rules.filter((rule) => covers(rule, asked) && names(policy, rule, asked.decider));
  const allowing = candidates.find((rule) => limitBroken(rule, asked) === undefined);
  if (allowing !== undefined)
    return {
      kind: 'allowed',
      rule: allowing.name,
      signatureRequired: allowing.signed === true || policyWantsSignature(policy, asked),
    };
  const broken = candidates.map((rule) => limitBroken(rule, asked)).filter((why) => why !== undefined);
  const naming = policy.rules.filter((rule) => names(policy, rule, asked.decider)).map((rule) => `"${rule.name}"`);
  const message =
    broken.length > 0
      ? broken.join('; ')
      : `no rule of the decider policy lets ${asked.decider} choose ${asked.option} for ${asked.reason} at ${asked.provider}` +
        (naming.length > 0 ? ` (rules naming them: ${naming.join(', ')})` : ' (no rule names them)');
  return { kind: 'refused', code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED', message };
}

/** The most any decider could grant on an extension request at `provider` (D4); `undefined` limits: no rule limit. */
export interface GrantableExtension {
  /** False when no rule lets anyone extend there. */
  anyone: boolean;
  extendMs?: number;
  extraStatusRequests?: number;
}

/** The largest extension any rule lets someone grant for an `extension_requested` escalation at `provider`. */
export function grantableExtension(policy: DeciderPolicy, provider: string): GrantableExtension {
  const rules = policy.rules.filter((rule) =>
    covers(rule, { provider, reason: 'extension_requested', option: 'extend' }),
  );
  if (rules.length === 0) return { anyone: false };
  const largest = (values: (number | undefined)[]): number | undefined =>
    values.some((value) => value === undefined) ? undefined : Math.max(...(values as number[]));
  const extendMs = largest(rules.map((rule) => rule.largestExtensionMs));
  const extraStatusRequests = largest(rules.map((rule) => rule.mostExtraChecks));
  return {
    anyone: true,
    ...(extendMs !== undefined ? { extendMs } : {}),
    ...(extraStatusRequests !== undefined ? { extraStatusRequests } : {}),
  };
}

/**
 * The rule recorded when the one who asked for an escalation withdraws it (`keep_bounds`): it grants nothing, so
 * it needs no rule of the policy (G2). Not a rule name a policy can hold (they are lowercase words).
 */
export const REQUESTER_WITHDRAWS = '(requester withdraws)';

/** True when `decider` declines (`keep_bounds`) the escalation they asked for themselves (canonical comparison). */
export function withdrawsOwnRequest(option: string, decider: string, requestedBy: string | undefined): boolean {
  return option === 'keep_bounds' && requestedBy !== undefined && sameActor(decider, requestedBy);
}

/** The public keys the policy holds for a decider (canonical comparison). */
export function keysOf(policy: DeciderPolicy, decider: string): string[] {
  return policy.deciders.filter((entry) => sameActor(entry.identity, decider)).flatMap((entry) => entry.keys);
}
