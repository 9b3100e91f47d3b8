/**
 * Retry-driven status waits (P4, B2): waits longer than the status loop keeps are retries of the `pollStatus`
 * activity. An attempt that finds the next read not due fails with the planner's wait as its retry delay; Temporal
 * keeps the activity scheduled meanwhile and records nothing in history (only the last attempt's start and its
 * completion are), so a wait costs no timer, no workflow task, no replay and no activity slot. The attempts after the
 * first take the operation up from the store, where the earlier attempts recorded every read and reservation.
 */
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { type OperationRecord } from '../core/operation';
import { STATUS_WAIT_FAILURE_TYPE, pendingReadDetails, pendingReadSummary, storeIsAhead } from '../core/poll-loop';
import { afterActivityFailure, type StepContext, type StepResult } from '../core/step';
import { type StepOutcome } from '../core/step-outcome';
import { storedOutcome } from './journal-writer';
import { type ActivityContext } from './provider-call';

/**
 * The failure that ends an attempt for `delayMs`: Temporal starts the next attempt then (`nextRetryDelay`). Its
 * message and details name the job's last answer (`pendingReadDetails`), which the Web UI shows on the pending
 * activity while the workflow's copy waits for its refresh (P8).
 */
export function waitAsRetry(delayMs: number, record: OperationRecord, nowMs: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: STATUS_WAIT_FAILURE_TYPE,
    message: pendingReadSummary(record, nowMs + delayMs, nowMs),
    details: [pendingReadDetails(record, nowMs + delayMs)],
    nextRetryDelay: delayMs,
    category: ApplicationFailureCategory.BENIGN,
  });
}

/** What an attempt after the first resumes from: the state, the entries recorded since `held`, and a lost read. */
export interface ResumedAttempt extends StepOutcome {
  /** The failed call journalled for a read an earlier attempt reserved and never recorded (B2), when there is one. */
  lostRead?: StepResult;
}

/**
 * The state an attempt after the first takes the operation up from: the store's when it is ahead of `held` (the
 * workflow's copy, the activity's input), as the workflow itself decides after a lost loop (`storeIsAhead`). A read
 * reserved there and never recorded (its attempt lost with its worker, or timed out) is journalled as a failed call,
 * so it stays counted and is planned again (B2): never sent a second time unjournalled.
 */
export async function resumeAttempt(
  ctx: ActivityContext,
  held: OperationRecord,
  step: StepContext,
): Promise<ResumedAttempt> {
  const stored = await storedOutcome(ctx.store, held.operationId, held.journal.nextSequence);
  const resumed: StepOutcome = storeIsAhead(held, stored.state) ? stored : { state: held, entries: [] };
  if (resumed.state.schedule.reservedAtMs === undefined) return resumed;
  const message = 'the attempt that reserved this status read ended without recording it';
  return { ...resumed, lostRead: afterActivityFailure(resumed.state, 'status', message, step) };
}
