/**
 * The `appendJournal` activity: appends workflow-made entries (messages, wake-up checks, decisions) and the
 * snapshot. The same entries again are a no-op; when the store already holds DIFFERENT entries at those
 * sequences (another run of the workflow got there first), the stored state is returned for the workflow to adopt.
 */
import { type OperationRecord } from '../core/operation';
import { type StepOutcome } from '../core/step-outcome';
import { type StepEntry } from '../core/step';
import { AsyncJobError, hasCode } from '../core/errors';
import { commitStep, parseInputRecord, storedOutcome } from './journal-writer';
import { type ActivityContext } from './provider-call';

/** Makes the activity. */
export function appendJournal(ctx: ActivityContext) {
  return async (input: { state: OperationRecord; entries: StepEntry[] }): Promise<StepOutcome> => {
    const record = parseInputRecord(input.state);
    const entries = [...input.entries].sort((a, b) => a.sequence - b.sequence);
    for (const e of entries) {
      if (e.sequence >= record.journal.nextSequence) {
        throw new AsyncJobError(
          'ASYNCJOB_ERR_INVALID_INPUT',
          `entries: sequence ${e.sequence} is not below the record's journal.nextSequence ${record.journal.nextSequence}`,
        );
      }
    }
    // What the workflow has not seen starts at the first entry it sends.
    const from = entries[0]?.sequence ?? record.journal.nextSequence;
    try {
      return await commitStep(ctx.store, record, entries, ctx.clock());
    } catch (error) {
      if (!hasCode(error, 'ASYNCJOB_ERR_JOURNAL_CONFLICT')) throw error;
      ctx.logger.warn('different entries already recorded: adopting the stored record', {
        operationId: record.operationId,
        sequence: entries[0]?.sequence,
      });
      return storedOutcome(ctx.store, record.operationId, from);
    }
  };
}
