/**
 * How each recorded decision was proven (D5), checked again from the journal alone. The intent entry holds the
 * whole decider policy the operation started under; each decision entry names the escalation it answered, the
 * policy's digest, the rule that allowed it and the signature it carried. The workflow checked all of it once
 * (`checkDecision`); this runs the same rules again (`deciderVerdict`, `verifyDecisionSignature`, `keysOf`) on what
 * the store holds, so a decision forged or edited in the store afterwards (by someone who could recompute the
 * chain) is a finding. `asyncjob audit verify` reports the findings; `asyncjob audit show` prints the proof. Pure.
 */
import { actorKind, sameActor } from '../core/actor';
import {
  type DeciderPolicyInForce,
  type DecisionAsked,
  deciderPolicyDigest,
  deciderVerdict,
  keysOf,
  REQUESTER_WITHDRAWS,
  withdrawsOwnRequest,
} from '../core/decider-policy';
import { verifyDecisionSignature } from '../core/decision-signature';
import { decisionOptionSchema } from '../core/escalation';
import { type EscalationReason, type JournalEntry, type JournalEntryBody } from '../core/journal';
import { opFinding, type AuditFinding, type AuditProblem } from './findings';

/** A decision entry's body. */
export type DecisionBody = Extract<JournalEntryBody, { kind: 'decision' }>;
type DecisionEntry = JournalEntry & { body: DecisionBody };

/** An escalation entry as decisions are checked against it. */
interface AnsweredEscalation {
  sequence: number;
  reason: EscalationReason;
  requestedBy?: string;
  /** Who joined it with a request of their own (`escalation_joined` entries, D4): none of them may approve it. */
  joinedBy: string[];
}

/** What an operation's journal says that its decisions are checked with: the intent's provider and policy. */
export interface DecisionContext {
  readonly provider?: string;
  /** The decider policy the intent recorded; absent: the operation started without one. */
  readonly policy?: DeciderPolicyInForce;
  /** Every escalation entry: its sequence, reason and requester, in journal order. */
  readonly escalations: ReadonlyArray<AnsweredEscalation>;
}

/**
 * The context of an operation's decisions, from its entries in journal order. A join names the escalation it
 * joined; one that names none joined the latest raised before it.
 */
export function decisionContext(entries: readonly JournalEntry[]): DecisionContext {
  const intent = entries[0]?.body.kind === 'intent' ? entries[0].body : undefined;
  const escalations: AnsweredEscalation[] = [];
  for (const e of entries) {
    const b = e.body;
    if (b.kind === 'escalation')
      escalations.push({
        sequence: e.sequence,
        reason: b.reason,
        ...(b.requestedBy !== undefined ? { requestedBy: b.requestedBy } : {}),
        joinedBy: [],
      });
    else if (b.kind === 'escalation_joined')
      (b.escalation === undefined
        ? escalations.at(-1)
        : escalations.find((x) => x.sequence === b.escalation)
      )?.joinedBy.push(b.requestedBy);
  }
  return {
    ...(intent !== undefined ? { provider: intent.provider } : {}),
    ...(intent?.deciderPolicy !== undefined ? { policy: intent.deciderPolicy } : {}),
    escalations,
  };
}

/** A decision's signature checked against the recorded policy. */
export type SignatureStatus =
  { kind: 'unsigned' } | { kind: 'verified'; keyId: string } | { kind: 'invalid'; keyId: string; message: string };

/**
 * D3 again: the signature verifies with one of the decider's keys in the recorded policy over the decision as the
 * entry holds it (the operation, the escalation it names, the option, its bounds, the decider, the reason, and the
 * signing time the signature states).
 */
export function signatureStatus(
  context: DecisionContext,
  entry: JournalEntry & { body: DecisionBody },
): SignatureStatus {
  const b = entry.body;
  if (b.signature === undefined) return { kind: 'unsigned' };
  const keyId = b.signature.keyId;
  if (context.policy === undefined)
    return { kind: 'invalid', keyId, message: 'the intent records no decider policy, so no key can check it' };
  if (b.escalation === undefined)
    return {
      kind: 'invalid',
      keyId,
      message: 'the entry names no escalation, and a signature covers the one it answers',
    };
  const check = verifyDecisionSignature(
    b.signature,
    {
      operationId: entry.operationId,
      escalationId: b.escalation,
      option: b.decision,
      bounds: (b.bounds ?? {}) as Record<string, number | string>,
      decider: b.approvedBy,
      reason: b.reason,
    },
    keysOf(context.policy.policy, b.approvedBy),
  );
  return check.kind === 'verified' ? { kind: 'verified', keyId } : { kind: 'invalid', keyId, message: check.message };
}

/** The escalation a decision answered: the entry at the sequence it names, else the last one before it. */
function answered(context: DecisionContext, entry: DecisionEntry): AnsweredEscalation | undefined {
  const named = entry.body.escalation;
  if (named !== undefined) return context.escalations.find((e) => e.sequence === named);
  return context.escalations.filter((e) => e.sequence < entry.sequence).at(-1);
}

/** A finding at a decision's sequence. */
function findingAt(entry: DecisionEntry): (problem: AuditProblem, expected: string, found: string) => AuditFinding {
  return (problem, expected, found) => opFinding(entry.operationId, entry.sequence, problem, expected, found);
}

/** What the decision asked, as the policy judges it, or why it cannot be judged. */
function askedOf(context: DecisionContext, entry: DecisionEntry): DecisionAsked | string {
  const b = entry.body;
  const option = decisionOptionSchema.safeParse(b.decision);
  if (!option.success) return `option ${b.decision}, which is not a decision option`;
  const escalation = answered(context, entry);
  if (escalation === undefined)
    return b.escalation === undefined
      ? 'no escalation entry before it'
      : `no escalation entry at sequence ${b.escalation}, the one it names`;
  const extendMs = b.bounds?.extendMs;
  const checks = b.bounds?.extraStatusRequests;
  return {
    provider: context.provider ?? '(no intent)',
    reason: escalation.reason,
    option: option.data,
    decider: b.approvedBy,
    ...(typeof extendMs === 'number' ? { extendMs } : {}),
    ...(typeof checks === 'number' ? { extraStatusRequests: checks } : {}),
  };
}

/** D2, D3 again for an accepted decision under the recorded policy: allowed, by the rule recorded, signed if it must be. */
function policyFindings(
  context: DecisionContext & { policy: DeciderPolicyInForce },
  entry: DecisionEntry,
): AuditFinding[] {
  const b = entry.body;
  const at = findingAt(entry);
  if (b.policy?.rule === REQUESTER_WITHDRAWS) {
    const requester = answered(context, entry)?.requestedBy;
    return withdrawsOwnRequest(b.decision, b.approvedBy, requester)
      ? []
      : [
          at(
            'decision_not_allowed',
            `keep_bounds by ${requester ?? 'the requester'}, who asked for the escalation`,
            `${b.approvedBy} chose ${b.decision}`,
          ),
        ];
  }
  const asked = askedOf(context, entry);
  const allowance = `a rule of decider policy ${context.policy.digest} allowing ${b.approvedBy} to choose ${b.decision}`;
  if (typeof asked === 'string') return [at('decision_not_allowed', allowance, asked)];
  const verdict = deciderVerdict(context.policy.policy, asked);
  if (verdict.kind === 'refused') return [at('decision_not_allowed', allowance, verdict.message)];
  const findings: AuditFinding[] = [];
  if (b.policy?.rule !== verdict.rule)
    findings.push(
      at(
        'decision_rule_mismatch',
        `rule "${verdict.rule}" (the first that allows it)`,
        b.policy?.rule === undefined ? 'no rule recorded' : `rule "${b.policy.rule}"`,
      ),
    );
  if (verdict.signatureRequired && b.signature === undefined)
    findings.push(
      at(
        'decision_unsigned',
        `a signature by ${b.approvedBy} (rule "${verdict.rule}" or the policy's signaturesRequired asks for one)`,
        'none',
      ),
    );
  return findings;
}

/**
 * Every check of one decision entry: the policy digest it names (refused ones too); for an accepted one, that an
 * agent granted nothing, the signature, and the recorded policy's verdict.
 */
function decisionFindings(context: DecisionContext, entry: DecisionEntry): AuditFinding[] {
  const b = entry.body;
  const at = findingAt(entry);
  const findings: AuditFinding[] = [];
  const digest = context.policy?.digest;
  if (b.policy !== undefined && b.policy.digest !== digest)
    findings.push(
      at(
        'decision_policy_mismatch',
        digest === undefined
          ? 'no decider policy (the intent records none)'
          : `decider policy ${digest} (the intent's)`,
        `decider policy ${b.policy.digest}`,
      ),
    );
  if (!b.accepted) return findings;
  if (b.policy === undefined && digest !== undefined)
    findings.push(at('decision_policy_mismatch', `decider policy ${digest} (the intent's)`, 'no decider policy named'));
  const escalation = answered(context, entry);
  const requester = [escalation?.requestedBy, ...(escalation?.joinedBy ?? [])].find(
    (r) => r !== undefined && sameActor(r, b.approvedBy),
  );
  if (b.decision !== 'keep_bounds' && requester !== undefined)
    findings.push(
      at(
        'decision_self_approval',
        `someone other than ${requester}, who asked for it`,
        `${b.approvedBy} chose ${b.decision}`,
      ),
    );
  else if (b.decision !== 'keep_bounds' && actorKind(b.approvedBy) === 'agent')
    findings.push(
      at(
        'decision_by_agent',
        'a person granting it (an agent may only decline: keep_bounds)',
        `${b.approvedBy} chose ${b.decision}`,
      ),
    );
  const signature = signatureStatus(context, entry);
  if (signature.kind === 'invalid')
    findings.push(
      at(
        'decision_signature_invalid',
        `a signature over this decision by one of ${b.approvedBy}'s keys in the decider policy`,
        `key ${signature.keyId}: ${signature.message}`,
      ),
    );
  if (context.policy !== undefined) findings.push(...policyFindings({ ...context, policy: context.policy }, entry));
  return findings;
}

/**
 * Checks every decision entry of one operation (its entries in journal order) against the decider policy its
 * intent recorded, and that policy against its own digest (a finding at sequence 1). Each finding names the
 * decision's sequence.
 */
export function checkDecisionProofs(operationId: string, entries: readonly JournalEntry[]): AuditFinding[] {
  const context = decisionContext(entries);
  const findings: AuditFinding[] = [];
  if (context.policy !== undefined) {
    const computed = deciderPolicyDigest(context.policy.policy);
    if (computed !== context.policy.digest)
      findings.push(
        opFinding(
          operationId,
          1,
          'decision_policy_mismatch',
          `digest ${computed} (of the decider policy the intent records)`,
          `digest ${context.policy.digest}`,
        ),
      );
  }
  for (const entry of entries)
    if (entry.body.kind === 'decision') findings.push(...decisionFindings(context, entry as DecisionEntry));
  return findings;
}

const short = (text: string, keep: number): string => (text.length <= keep ? text : `${text.slice(0, keep)}…`);

/**
 * How a decision was proven, for its story line: the route, the rule (or the policy, or "no decider policy"), and
 * whether it was signed and the signature verifies. Empty for an entry no one sent (no decision before the
 * deadline, a refused Temporal cancellation request). Without `context`, a signature is shown without a verdict.
 */
export function decisionProofText(entry: JournalEntry & { body: DecisionBody }, context?: DecisionContext): string {
  const b = entry.body;
  if (!b.accepted && b.route === undefined && b.signature === undefined) return '';
  const digest = b.policy?.digest ?? context?.policy?.digest;
  const policy =
    b.policy?.rule !== undefined
      ? `rule ${b.policy.rule}`
      : digest !== undefined
        ? `decider policy ${short(digest, 19)}${b.accepted ? ', no rule recorded' : ''}`
        : 'no decider policy';
  const status: SignatureStatus | undefined =
    b.signature === undefined
      ? { kind: 'unsigned' }
      : context === undefined
        ? undefined
        : signatureStatus(context, entry);
  const key = b.signature === undefined ? '' : ` (key ${short(b.signature.keyId, 24)})`;
  const signed =
    status === undefined
      ? `signed${key}`
      : status.kind === 'unsigned'
        ? 'unsigned'
        : status.kind === 'verified'
          ? `signed, verified${key}`
          : `signed, NOT VERIFIED${key}: ${status.message}`;
  return `route ${b.route ?? 'not recorded'}, ${policy}, ${signed}`;
}
