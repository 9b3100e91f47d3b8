/**
 * Decision steps (A1, A2, E2): a human decision applied or recorded as refused, and the decision deadline.
 */
import { parseActor, shownAsTyped } from './actor';
import { type DecisionTransport, checkDecision, decisionBounds, decisionRoute } from './decision-check';
import { changedBounds } from './decision-effects';
import { decisionSignatureSchema } from './decision-signature';
import { parseDecision } from './escalation';
import { type OperationRecord } from './operation';
import { optionFacts, withReconciliationFacts } from './option-executability';
import { transition } from './transitions';
import { type StepContext, type StepResult, type StepRefusal, Builder } from './step-draft';

/**
 * The step with its decision entry (at `sequence`) stating the bounds the decision changed (T5): the entry is
 * appended before the decision takes effect, so what it changed is known only once the step is done.
 */
function withEffects(before: OperationRecord, step: StepResult, sequence: number): StepResult {
  const effects = changedBounds(before, step.record);
  const entries = step.entries.map((entry) =>
    entry.sequence === sequence && entry.body.kind === 'decision'
      ? { ...entry, body: { ...entry.body, effects } }
      : entry,
  );
  return { ...step, entries };
}

/**
 * The refusal of a decision when no escalation is open; a malformed one is told so first, as what is wrong with it
 * holds whether or not an escalation is open.
 */
function withoutEscalation(input: unknown): StepRefusal {
  const parsed = parseDecision(input);
  if (parsed.kind === 'refused') return parsed;
  return { kind: 'refused', code: 'ASYNCJOB_ERR_NO_OPEN_ESCALATION', message: 'there is no open escalation to decide' };
}

/**
 * A human decision on the open escalation (A1, A2): checked by {@link checkDecision} (the offer, G2, the decider
 * policy and the signature), journalled with how it was proven (D5), and applied. `inspect_provider_console` is
 * recorded and changes nothing. `transport`: how it arrived.
 */
export function applyDecision(
  record: OperationRecord,
  input: unknown,
  ctx: StepContext,
  transport: DecisionTransport = 'update',
): StepResult | StepRefusal {
  if (record.escalation === null) return withoutEscalation(input);
  // E3: an option that cannot act on what the adapter and the record hold is refused before anything happens.
  const capabilities = withReconciliationFacts(ctx.capabilities, ctx.reconciliation);
  const facts = optionFacts(record, capabilities, record.escalation.raisedFrom);
  const escalationId = record.escalation.id;
  const check = checkDecision(record.escalation, input, {
    nowMs: ctx.nowMs,
    operationId: record.operationId,
    provider: record.provider,
    transport,
    facts,
    ...(ctx.deciders !== undefined ? { deciders: ctx.deciders } : {}),
  });
  if (check.kind === 'refused') return { kind: 'refused', code: check.code, message: check.message };
  const { decision, proof } = check;
  const b = new Builder(record, record);
  const sequence = record.journal.nextSequence;
  const bounds = decisionBounds(decision);
  b.appendExtra(
    {
      kind: 'decision',
      decision: decision.option,
      approvedBy: decision.approvedBy,
      reason: decision.reason,
      accepted: true,
      ...(Object.keys(bounds).length > 0 ? { bounds } : {}),
      ...(escalationId !== undefined ? { escalation: escalationId } : {}),
      ...proof,
    },
    ctx.nowMs,
    decision.approvedBy,
  );
  if (decision.option === 'inspect_provider_console') return withEffects(record, b.result(), sequence);
  const applied = transition(
    b.record,
    { type: 'decide', actor: decision.approvedBy, cause: 'decision', decision, reason: decision.reason },
    ctx.nowMs,
  );
  if (applied.kind === 'refused') return { kind: 'refused', code: applied.code, message: applied.message };
  b.record = applied.record;
  if (decision.option === 'accept_result') {
    // A1: a human accepted the result that failed validation; the success observation is on record, so the
    // operation completes without collecting again (a collect would fail validation the same way).
    b.apply(
      [
        {
          type: 'result_validated',
          actor: decision.approvedBy,
          cause: 'decision',
          reason: `result accepted by ${decision.approvedBy} despite failed validation`,
        },
      ],
      ctx,
    );
  }
  if (decision.option === 'retry_create_same_token' || decision.option === 'look_up_job') {
    // A human authorised a new attempt (A1): it gets a bounded create window of its own.
    // Without a reconciliation method there is nothing to look up: the create itself is sent again (I3, E3);
    // looking the job up asks the provider first, whatever was tried before (U2).
    const r = b.record;
    const reconcileBy =
      decision.option === 'look_up_job' ? 'lookup' : ctx.reconciliation === 'none' ? 'resend' : undefined;
    b.record = {
      ...r,
      ...(reconcileBy !== undefined ? { reconcileBy } : {}),
      deadlines: {
        ...r.deadlines,
        createDeadlineMs: Math.max(r.deadlines.createDeadlineMs, ctx.nowMs + r.policy.extensionMs),
      },
      schedule: { nextPollAtMs: ctx.nowMs, delaySource: 'manual_extension' },
    };
  }
  return withEffects(record, b.result(), sequence);
}

/**
 * A decision that was refused is still recorded (A2): who tried what, by which route, with the signature it
 * carried, and why it was refused. A claimed identity that is not one is recorded as claimed, marked so.
 */
export function recordRejectedDecision(
  record: OperationRecord,
  decision: { option?: unknown; approvedBy?: unknown; reason?: unknown; signature?: unknown; route?: unknown },
  refusal: StepRefusal,
  ctx: StepContext,
  transport?: DecisionTransport,
): StepResult {
  const b = new Builder(record, record);
  const text = (v: unknown, fallback: string, max: number): string =>
    typeof v === 'string' && v.trim().length > 0 ? v.slice(0, max) : fallback;
  const claimed = parseActor(decision.approvedBy);
  const signature = decisionSignatureSchema.safeParse(decision.signature);
  const escalationId = record.escalation?.id;
  b.appendExtra(
    {
      kind: 'decision',
      decision: text(decision.option, '(none)', 100),
      approvedBy:
        claimed.kind === 'ok'
          ? claimed.actor.id
          : typeof decision.approvedBy === 'string' && decision.approvedBy.trim().length > 0
            ? `"${shownAsTyped(decision.approvedBy.slice(0, 150)).slice(0, 170)}" (not an identity)`
            : '(unknown)',
      reason: text(decision.reason, '(none)', 2000),
      accepted: false,
      rejectionReason: `${refusal.code}: ${refusal.message}`.slice(0, 2000),
      ...(escalationId !== undefined ? { escalation: escalationId } : {}),
      ...(transport !== undefined ? { route: decisionRoute(decision, transport) } : {}),
      ...(signature.success ? { signature: signature.data } : {}),
      ...(ctx.deciders !== undefined ? { policy: { digest: ctx.deciders.digest } } : {}),
    },
    ctx.nowMs,
    ctx.actor,
  );
  return b.result();
}

/**
 * No decision arrived before the decision deadline: the operation closes as escalated, and the journal says so
 * (E2). Appends nothing (returns the record unchanged, no entries) unless an escalation is open and its decision
 * deadline has passed at `ctx.nowMs`.
 */
export function decisionDeadlinePassed(record: OperationRecord, ctx: StepContext): StepResult {
  const b = new Builder(record, record);
  if (
    record.localState !== 'escalated' ||
    record.escalation === null ||
    ctx.nowMs < record.escalation.decisionDeadlineMs
  )
    return b.result();
  b.appendExtra(
    {
      kind: 'decision',
      decision: 'none',
      approvedBy: ctx.actor,
      reason:
        'no decision arrived before the decision deadline; the operation stays escalated and automation has ended',
      accepted: false,
      rejectionReason: 'ASYNCJOB_ERR_DECISION_TOO_LATE',
    },
    ctx.nowMs,
    ctx.actor,
  );
  return b.result();
}
