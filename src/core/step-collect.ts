/**
 * The collect step (R1-R5, S1): a validated result ends the operation; anything else is kept with its reason.
 */
import { type EscalationReason, type JournalEntryBody } from './journal';
import { type Observation } from './observation';
import { type OperationRecord, type ResultSummary } from './operation';
import { answerText, rateLimitedInARow, type Reaction } from './answer-policy';
import { openAnswerStep, type AnswerStep } from './step-answer';
import { refusalText } from './status-verdict';
import { effectiveDeadlineMs } from './wait-planner';
import { planWait } from './wait-time';
import { type StepContext, type StepResult } from './step-draft';

/** What a collect activity found, beside its observation (R1-R4). */
export interface CollectOutcome {
  /** Present when bytes were stored and checked. */
  result?: ResultSummary;
  /** The artifact journal entry to append, when stored. */
  artifact?: Extract<JournalEntryBody, { kind: 'artifact' }>;
}

/** After collecting the result (R1-R5, S1): succeeded only with a valid result; otherwise the reason is kept. */
export function afterCollect(
  record: OperationRecord,
  observation: Observation,
  outcome: CollectOutcome,
  ctx: StepContext,
): StepResult {
  const step = openAnswerStep(record, 'collect', observation, ctx);
  const { draft, frame, reaction } = step;
  if (outcome.artifact) draft.appendExtra(outcome.artifact, ctx.nowMs, ctx.actor);
  const result = outcome.result;
  if (reaction.kind === 'read' && result?.validation === 'valid') {
    draft.apply([{ type: 'result_validated', ...frame, result }], ctx);
  } else if (reaction.kind === 'read' && result?.validation === 'invalid') {
    if (draft.record.localState === 'result_collecting')
      draft.apply([{ type: 'result_invalid', ...frame, result }], ctx);
    else draft.record = { ...draft.record, result };
    draft.escalate(
      'result_validation_failed',
      `the result failed validation: ${(result.problems ?? []).join('; ').slice(0, 1500)} (R2, R4)`,
      ctx,
      frame.cause,
    );
  } else {
    const stop = reaction.kind === 'retry' ? scheduleCollectRetry(step, reaction, observation, ctx) : undefined;
    if (stop === 'scheduled') return draft.result();
    const failure =
      observation.transport === 'refused'
        ? refusalText(observation)
        : (observation.errorCategory ?? answerText(observation));
    const detail = `the result could not be collected (${failure}) (R4)`;
    if (draft.record.localState === 'result_collecting')
      draft.apply([{ type: 'result_unavailable', ...frame, observation, reason: detail }], ctx);
    const reason = stop?.reason ?? (reaction.kind === 'escalate' ? reaction.reason : 'provider_failure');
    draft.escalate(reason, detail, ctx, frame.cause);
  }
  return draft.result();
}

/**
 * A collect that served nothing, planned again when the answer policy allows it, within the budgets and the
 * deadline (H1, R5, S5); else the reason it stops.
 */
function scheduleCollectRetry(
  { draft, spent }: AnswerStep,
  reaction: Extract<Reaction, { kind: 'retry' }>,
  observation: Observation,
  ctx: StepContext,
): 'scheduled' | { reason: EscalationReason } {
  const { used } = draft.record;
  if (spent !== undefined) return { reason: spent.reason };
  const stop = { reason: reaction.budget === 'rate_limit' ? 'rate_limited' : 'provider_failure' } as const;
  // R5: a download that may have been served is repeated only when the provider says that is safe.
  if (reaction.onlyIfRepeatable === true && !ctx.capabilities.repeatableCollect) return stop;
  if (ctx.nowMs >= draft.record.deadlines.resultDeadlineMs) return stop;
  const plan = planWait(
    {
      observation,
      policy: draft.record.policy,
      deadlineMs: effectiveDeadlineMs(draft.record),
      backoffAttempt: used.backoffAttempt,
      rateLimitedInARow: rateLimitedInARow(used, observation.signal),
    },
    ctx,
  );
  if (plan.kind !== 'poll') return stop;
  draft.record = {
    ...draft.record,
    used: { ...used, backoffAttempt: used.backoffAttempt + 1 },
    schedule: { nextPollAtMs: plan.atMs, delaySource: plan.source },
  };
  return 'scheduled';
}
