/**
 * The collect step (R1-R5, S1): a validated result ends the operation; anything else is kept with its reason.
 */
import { type JournalEntryBody } from './journal';
import { type Observation } from './observation';
import { type OperationRecord, type ResultSummary } from './operation';
import { isTransportFailure, refusalText } from './status-verdict';
import { effectiveDeadlineMs } from './wait-planner';
import { planWait } from './wait-time';
import { type StepContext, type StepResult, Builder, is2xx } from './step-draft';

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
  const draft = new Builder(record, record);
  const sequence = draft.observe(observation, ctx, {});
  draft.callSequence = sequence;
  const frame = { actor: ctx.actor, cause: `collect_response:${sequence}`, evidenceSequence: sequence };
  if (outcome.artifact) draft.appendExtra(outcome.artifact, ctx.nowMs, ctx.actor);
  const result = outcome.result;
  if (is2xx(observation) && result?.validation === 'valid') {
    draft.apply([{ type: 'result_validated', ...frame, result }], ctx);
  } else if (is2xx(observation) && result?.validation === 'invalid') {
    if (draft.record.localState === 'result_collecting')
      draft.apply([{ type: 'result_invalid', ...frame, result }], ctx);
    else draft.record = { ...draft.record, result };
    draft.escalate(
      'result_validation_failed',
      `the result failed validation: ${(result.problems ?? []).join('; ').slice(0, 1500)} (R2, R4)`,
      ctx,
      frame.cause,
    );
  } else if (scheduleCollectRetry(draft, observation, ctx) === 'given_up') {
    const failure =
      observation.transport === 'refused'
        ? refusalText(observation)
        : (observation.errorCategory ??
          (observation.httpStatus !== undefined ? `HTTP ${observation.httpStatus}` : observation.transport));
    const detail = `the result could not be collected (${failure}) (R4)`;
    if (draft.record.localState === 'result_collecting')
      draft.apply([{ type: 'result_unavailable', ...frame, observation, reason: detail }], ctx);
    const rateLimited = observation.transport === 'response' && observation.httpStatus === 429;
    draft.escalate(rateLimited ? 'rate_limited' : 'provider_failure', detail, ctx, frame.cause);
  }
  return draft.result();
}

/**
 * A collect that served nothing: counted, and planned again when that is safe and inside the budgets and the
 * deadline (H1, R5, S5), else given up.
 */
function scheduleCollectRetry(draft: Builder, observation: Observation, ctx: StepContext): 'scheduled' | 'given_up' {
  const transient = isTransportFailure(observation);
  // H1: a 429 is "not now": the provider served nothing, so asking again later is safe whatever R5 says.
  const rateLimited = observation.transport === 'response' && observation.httpStatus === 429;
  const counted = draft.record.used;
  const used = {
    ...counted,
    transportFailures: counted.transportFailures + (transient ? 1 : 0),
    rateLimited: counted.rateLimited + (rateLimited ? 1 : 0),
    consecutiveRateLimited: rateLimited ? counted.consecutiveRateLimited + 1 : 0,
  };
  draft.record = { ...draft.record, used };
  const { budgets } = draft.record;
  const retryable =
    (transient &&
      (ctx.capabilities.repeatableCollect || observation.transport === 'not_sent') &&
      used.transportFailures < budgets.maxTransportFailures) ||
    (rateLimited && used.consecutiveRateLimited < budgets.maxRateLimited);
  if (!retryable || ctx.nowMs >= draft.record.deadlines.resultDeadlineMs) return 'given_up';
  const plan = planWait(
    {
      observation,
      policy: draft.record.policy,
      deadlineMs: effectiveDeadlineMs(draft.record),
      backoffAttempt: used.backoffAttempt,
      rateLimitedInARow: rateLimited ? used.consecutiveRateLimited : 0,
    },
    ctx,
  );
  if (plan.kind !== 'poll') return 'given_up';
  draft.record = {
    ...draft.record,
    used: { ...used, backoffAttempt: used.backoffAttempt + 1 },
    schedule: { nextPollAtMs: plan.atMs, delaySource: plan.source },
  };
  return 'scheduled';
}
