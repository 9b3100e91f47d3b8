/**
 * The collect step (R1-R5, S1): a validated result ends the operation; anything else is kept with its reason.
 */
import { type JournalEntryBody } from './journal';
import { type Observation } from './observation';
import { type OperationRecord, type ResultSummary } from './operation';
import { planWait } from './wait-planner';
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
  o: Observation,
  outcome: CollectOutcome,
  ctx: StepContext,
): StepResult {
  const b = new Builder(record, record);
  const seq = b.observe(o, ctx, {});
  b.callSequence = seq;
  const cause = `collect_response:${seq}`;
  if (outcome.artifact) b.appendExtra(outcome.artifact, ctx.nowMs, ctx.actor);
  const result = outcome.result;
  if (is2xx(o) && result?.validation === 'valid') {
    b.apply([{ type: 'result_validated', actor: ctx.actor, cause, evidenceSequence: seq, result }], ctx);
  } else if (is2xx(o) && result?.validation === 'invalid') {
    if (b.record.localState === 'result_collecting')
      b.apply([{ type: 'result_invalid', actor: ctx.actor, cause, evidenceSequence: seq, result }], ctx);
    else b.record = { ...b.record, result };
    b.escalate(
      'result_validation_failed',
      `the result failed validation: ${(result.problems ?? []).join('; ').slice(0, 1500)} (R2, R4)`,
      ctx,
      cause,
    );
  } else {
    const transient =
      o.transport === 'not_sent' ||
      o.transport === 'ambiguous' ||
      (o.transport === 'response' && (o.httpStatus ?? 0) >= 500);
    // H1: a 429 is "not now": the provider served nothing, so asking again later is safe whatever R5 says.
    const rateLimited = o.transport === 'response' && o.httpStatus === 429;
    const used = {
      ...b.record.used,
      transportFailures: b.record.used.transportFailures + (transient ? 1 : 0),
      rateLimited: b.record.used.rateLimited + (rateLimited ? 1 : 0),
      consecutiveRateLimited: rateLimited ? b.record.used.consecutiveRateLimited + 1 : 0,
    };
    b.record = { ...b.record, used };
    const retryable =
      (transient &&
        (ctx.capabilities.repeatableCollect || o.transport === 'not_sent') &&
        used.transportFailures < b.record.budgets.maxTransportFailures) ||
      (rateLimited && used.consecutiveRateLimited < b.record.budgets.maxRateLimited);
    if (retryable && ctx.nowMs < b.record.deadlines.resultDeadlineMs) {
      const plan = planWait(
        b.record,
        b.record.policy,
        o,
        ctx.nowMs,
        ctx.random,
        b.record.used.backoffAttempt,
        rateLimited ? used.consecutiveRateLimited : 0,
      );
      if (plan.kind === 'poll') {
        b.record = {
          ...b.record,
          used: { ...used, backoffAttempt: used.backoffAttempt + 1 },
          schedule: { nextPollAtMs: plan.atMs, delaySource: plan.source },
        };
        return b.result();
      }
    }
    const detail = `the result could not be collected (${o.errorCategory ?? (o.httpStatus !== undefined ? `HTTP ${o.httpStatus}` : o.transport)}) (R4)`;
    if (b.record.localState === 'result_collecting')
      b.apply(
        [
          {
            type: 'result_unavailable',
            actor: ctx.actor,
            cause,
            evidenceSequence: seq,
            observation: o,
            reason: detail,
          },
        ],
        ctx,
      );
    b.escalate(rateLimited ? 'rate_limited' : 'provider_failure', detail, ctx, cause);
  }
  return b.result();
}
