/**
 * The frame every provider-call activity shares (idempotent by sequence): read the record, find its provider,
 * and when an earlier attempt already recorded this step, return what the store holds without calling the
 * provider again; otherwise make the one call, which returns the step to record, and record it with the
 * snapshot in the same activity. Returns the record with only this step's journal entries in its tails (the
 * workflow folds them into its own, `core/record-tails.ts`).
 */
import { type RegisteredProvider } from '../adapters/providers/registry';
import { type OperationRecord } from '../core/operation';
import { tailsFrom } from '../core/record-tails';
import { type StepContext, type StepResult } from '../core/step';
import { alreadyRecorded, commitStep, parseInputRecord } from './journal-writer';
import { stepContext, type ActivityContext } from './provider-call';
import { type ProviderCallInput } from './types';

/** Runs `call` inside the frame; `action` names the call in the log line of a skipped repeat. */
export async function inCallFrame(
  ctx: ActivityContext,
  input: ProviderCallInput,
  action: string,
  call: (record: OperationRecord, provider: RegisteredProvider, step: StepContext) => Promise<StepResult>,
): Promise<OperationRecord> {
  const record = parseInputRecord(input.record);
  const provider = ctx.providers.get(record.provider);
  const from = record.journal.nextSequence;
  const recorded = await alreadyRecorded(ctx.store, record);
  if (recorded !== undefined) {
    ctx.logger.info(`${action} already recorded: nothing sent`, { operationId: record.operationId });
    return recorded; // its tails are already the entries from `from` on, read back from the journal
  }
  const step = await call(record, provider, stepContext(ctx, provider, input.random));
  return tailsFrom(await commitStep(ctx.store, step.record, step.entries, ctx.clock()), from);
}
