/**
 * What a person's decision on an escalation changes in the record (A1, A2, X1, X3): the extension of bounds, the
 * adopted job, the accepted result, the cancel intent it stands for, and the approval on record. Applied by
 * `transition` once the decision has passed its evidence check (`validateDecision`). Pure.
 */
import { type Decision } from './escalation';
import { type DecisionEffects, type LocalState } from './journal';
import { type Approval, type OperationRecord, APPROVAL_TAIL, appendBounded } from './operation';

/** The record's approvals with one more at the end (bounded tail). */
function withApproval(record: OperationRecord, approval: Approval): OperationRecord['authorisation'] {
  return {
    ...record.authorisation,
    approvals: appendBounded(record.authorisation.approvals, approval, APPROVAL_TAIL),
  };
}

/**
 * An extension adds to the bounds; counters are never reset (A2, B1). While a cancel already sent awaits its
 * confirmation (`to` = `cancelling`) the cancel deadline moves, otherwise the result deadline. `extendMs` and
 * `extraStatusRequests` are present: the decision evidence requires them for `extend`.
 */
function extension(record: OperationRecord, decision: Decision, to: LocalState, nowMs: number) {
  const extendMs = decision.extendMs ?? 0;
  const extraStatusRequests = decision.extraStatusRequests ?? 0;
  const budgets = {
    maxStatusRequests: record.budgets.maxStatusRequests + extraStatusRequests,
    maxTransportFailures: record.budgets.maxTransportFailures + (decision.extraTransportFailures ?? 0),
    maxRateLimited: record.budgets.maxRateLimited + (decision.extraRateLimited ?? 0),
  };
  const deadlines =
    to === 'cancelling'
      ? {
          ...record.deadlines,
          cancelDeadlineMs: Math.max(record.deadlines.cancelDeadlineMs ?? nowMs, nowMs) + extendMs,
        }
      : { ...record.deadlines, resultDeadlineMs: Math.max(record.deadlines.resultDeadlineMs, nowMs) + extendMs };
  const bounds: Record<string, number> = { extendMs, extraStatusRequests };
  if (decision.extraTransportFailures !== undefined) bounds.extraTransportFailures = decision.extraTransportFailures;
  if (decision.extraRateLimited !== undefined) bounds.extraRateLimited = decision.extraRateLimited;
  return { budgets, deadlines, bounds };
}

/**
 * Returns `next` (the record already moved to `to`) with the effects of `decision` taken at `nowMs`: the
 * escalation closed, the option's changes made, and the approval recorded with the bounds it granted.
 */
export function decisionEffects(
  record: OperationRecord,
  next: OperationRecord,
  to: LocalState,
  decision: Decision,
  nowMs: number,
): OperationRecord {
  let decided: OperationRecord = { ...next, escalation: null };
  let bounds: Record<string, number | string> = {};
  const pollNow = { nextPollAtMs: nowMs, delaySource: 'manual_extension' as const };
  if (decision.option === 'extend') {
    const extended = extension(record, decision, to, nowMs);
    decided = { ...decided, budgets: extended.budgets, deadlines: extended.deadlines, schedule: pollNow };
    bounds = extended.bounds;
  }
  if (decision.option === 'keep_bounds') decided = { ...decided, schedule: pollNow };
  if (decision.option === 'adopt_job' && decision.jobId !== undefined) {
    decided = { ...decided, jobId: decision.jobId, schedule: pollNow };
    bounds = { jobId: decision.jobId };
  }
  if (decision.option === 'accept_result' && record.result !== null)
    decided = { ...decided, result: { ...record.result, acceptedBy: decision.approvedBy } };
  if (to === 'cancel_requested') {
    // X1, M2: the approval is the cancel intent (who, why), recorded before the one cancel call, with its deadline (X3).
    decided = {
      ...decided,
      cancel: {
        requestedBy: decision.approvedBy,
        reason: decision.reason,
        expectedEffect: 'the provider stops the job',
        requestedAtMs: nowMs,
      },
      deadlines: { ...record.deadlines, cancelDeadlineMs: nowMs + record.policy.cancelDeadlineMs },
      schedule: {},
    };
  }
  const approval: Approval = {
    atMs: nowMs,
    approvedBy: decision.approvedBy,
    option: decision.option,
    reason: decision.reason,
    ...(Object.keys(bounds).length > 0 ? { bounds } : {}),
  };
  return { ...decided, authorisation: withApproval(record, approval) };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The bounds a decision changed between `before` and `after` (A2, T5), each at its new value: deadlines as
 * instants, budgets as counts; `{}` when it changed none. Journalled in the decision entry, so the audit replays
 * the record's deadlines and budgets from the journal alone. Pure.
 */
export function changedBounds(before: OperationRecord, after: OperationRecord): DecisionEffects {
  const effects: DecisionEffects = {};
  const was = before.deadlines;
  const now = after.deadlines;
  if (now.createDeadlineMs !== was.createDeadlineMs) effects.createDeadlineAt = iso(now.createDeadlineMs);
  if (now.resultDeadlineMs !== was.resultDeadlineMs) effects.resultDeadlineAt = iso(now.resultDeadlineMs);
  if (now.cancelDeadlineMs !== undefined && now.cancelDeadlineMs !== was.cancelDeadlineMs)
    effects.cancelDeadlineAt = iso(now.cancelDeadlineMs);
  for (const budget of ['maxStatusRequests', 'maxTransportFailures', 'maxRateLimited'] as const)
    if (after.budgets[budget] !== before.budgets[budget]) effects[budget] = after.budgets[budget];
  return effects;
}
