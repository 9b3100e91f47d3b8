/**
 * How every step on a provider's answer begins (create, reconcile, cancel, collect): the answer is counted against
 * the budgets (H1, S5), journalled, and looked up in the answer policy (`answer-policy.ts`).
 */
import { countAnswer, reactionTo, retryBudgetSpent, type ProviderCall, type Reaction } from './answer-policy';
import { type EscalationReason } from './journal';
import { type Observation } from './observation';
import { type OperationRecord } from './operation';
import { type StepContext, Builder } from './step-draft';

/** A step opened on one answer: the draft, the answer's journal sequence, how events cite it, and the reaction. */
export interface AnswerStep {
  draft: Builder;
  sequence: number;
  /** How the events of this step cite the answer (M3). */
  frame: { actor: string; cause: string; evidenceSequence: number };
  reaction: Reaction;
  /** For a retry, why it may not happen: the budget it draws on is spent (H1, S5). */
  spent?: { reason: EscalationReason; detail: string };
}

/** Opens a step on `call`'s answer `observation`. */
export function openAnswerStep(
  record: OperationRecord,
  call: Exclude<ProviderCall, 'status'>,
  observation: Observation,
  ctx: StepContext,
): AnswerStep {
  const draft = new Builder(record, record);
  draft.record = { ...draft.record, used: countAnswer(draft.record.used, call, observation.signal) };
  const sequence = draft.observe(observation, ctx, {});
  draft.callSequence = sequence;
  const frame = { actor: ctx.actor, cause: `${call}_response:${sequence}`, evidenceSequence: sequence };
  const reaction = reactionTo(call, observation.signal);
  const spent =
    reaction.kind === 'retry' ? retryBudgetSpent(reaction, draft.record.used, draft.record.budgets) : undefined;
  return { draft, sequence, frame, reaction, ...(spent !== undefined ? { spent } : {}) };
}
