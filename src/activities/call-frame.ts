/**
 * The frame every provider-call activity shares (idempotent by sequence): read the operation state, find its
 * provider, and when an earlier attempt already recorded this step, return what the store holds without calling
 * the provider again; otherwise make the one call, which returns the step to record, and record it with the
 * snapshot in the same activity. Returns the step's outcome: the state after it and its journal entries. A failure
 * before any request was written is reported as such (`ASYNCJOB_ERR_NOTHING_SENT`).
 */
import { type RegisteredProvider } from '../adapters/providers/registry';
import { type OperationRecord } from '../core/operation';
import { type StepContext, type StepResult } from '../core/step';
import { type StepOutcome } from '../core/step-outcome';
import { alreadyRecorded, commitStep, parseInputRecord } from './journal-writer';
import { stepContext, type ActivityContext } from './provider-call';
import { reportingNothingSent } from './sent-requests';
import type { ProviderCallInput } from './types';

/** Runs `call` inside the frame; `action` names the call in the log line of a skipped repeat. */
export async function inCallFrame(
  ctx: ActivityContext,
  input: ProviderCallInput,
  action: string,
  call: (state: OperationRecord, provider: RegisteredProvider, step: StepContext) => Promise<StepResult>,
): Promise<StepOutcome> {
  const state = parseInputRecord(input.state);
  const provider = ctx.providers.get(state.provider);
  // A failure before any request was written says so: the provider got nothing (`sent-requests.ts`).
  return reportingNothingSent(async () => {
    const recorded = await alreadyRecorded(ctx.store, state);
    if (recorded !== undefined) {
      ctx.logger.info(`${action} already recorded: nothing sent`, { operationId: state.operationId });
      return recorded;
    }
    const step = await call(state, provider, stepContext(ctx, provider, input.random));
    return commitStep(ctx.store, step.record, step.entries, ctx.clock());
  });
}
