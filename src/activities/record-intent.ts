/**
 * The `recordIntent` activity (C1, I2): the intent (sequence 1), the new operation's first entries (its initial
 * transition) and the snapshot are written before anything is sent. An operation ID that already holds an intent is joined when its request
 * fingerprint is the same, and refused (non-retryable `ASYNCJOB_ERR_FINGERPRINT_MISMATCH`) when it differs.
 */
import { type DeciderPolicyInForce } from '../core/decider-policy';
import { issueText } from '../core/issues';
import { intentEntrySchema } from '../core/journal';
import { tokenDigest } from '../core/fingerprint';
import { intentEntryOf, startRecord, type OperationRecord, type OperationStart } from '../core/operation';
import { type StepEntry } from '../core/step';
import { AsyncJobError } from '../core/errors';
import { outcomeOfRecord, type StepOutcome } from '../core/step-outcome';
import { settleVariables } from '../core/step-variables';
import { commitStep, parseInputRecord, storedOutcome } from './journal-writer';
import { type ActivityContext } from './provider-call';
import { type ProviderFacts, type RecordedStart } from './types';

/** Reads the recorded intent of an operation, or undefined when none is recorded. */
export async function recordedIntent(ctx: ActivityContext, operationId: string) {
  const head = await ctx.store.chainHead(operationId);
  if (head.lastSequence < 1) return undefined;
  const [first] = await ctx.store.entries(operationId, { fromSequence: 1 });
  if (first === undefined || first.entry.sequence !== 1) return undefined;
  const parsed = intentEntrySchema.safeParse(first.entry.body);
  return parsed.success ? parsed.data : undefined;
}

/** Makes the activity. */
export function recordIntent(ctx: ActivityContext) {
  return async (input: {
    state: OperationRecord;
    entries: StepEntry[];
    deciders?: DeciderPolicyInForce;
  }): Promise<StepOutcome> => {
    const record = parseInputRecord(input.state);
    ctx.providers.get(record.provider);
    const existing = await recordedIntent(ctx, record.operationId);
    if (existing !== undefined) {
      if (existing.requestFingerprint !== record.requestFingerprint) {
        throw new AsyncJobError(
          'ASYNCJOB_ERR_FINGERPRINT_MISMATCH',
          `requestFingerprint: operation ${record.operationId} already holds the request ${existing.requestFingerprint}, now ${record.requestFingerprint}; a changed request needs a new operation ID`,
        );
      }
      if ((await ctx.store.getOperation(record.operationId)) !== null) {
        ctx.logger.info('intent already recorded: joined', { operationId: record.operationId });
        return storedOutcome(ctx.store, record.operationId, 1);
      }
    }
    const entries: StepEntry[] = [
      intentEntryOf(record, tokenDigest(record.idempotencyToken), input.deciders),
      ...input.entries.filter((entry) => entry.sequence > 1 && entry.sequence < record.journal.nextSequence),
    ].sort((a, b) => a.sequence - b.sequence);
    const stored = await commitStep(ctx.store, record, entries, ctx.clock());
    ctx.logger.info('intent recorded', { operationId: record.operationId, provider: record.provider });
    return stored;
  };
}

/**
 * Records the intent of a start once its provider's facts are read (C1, C5): the record the start makes under the
 * provider's tuning, its operation variables settled against the adapter's declarations (refused: the record
 * without them, and the issues returned for the workflow to record), then the intent as {@link recordIntent}.
 */
export function recordStartIntent(ctx: ActivityContext) {
  const record = recordIntent(ctx);
  return async (start: OperationStart, facts: ProviderFacts): Promise<RecordedStart> => {
    const made = startRecord(start, facts.policy);
    if (made.kind === 'refused')
      throw new AsyncJobError('ASYNCJOB_ERR_INVALID_INPUT', issueText(made.issues, '(request)'));
    const settled = settleVariables(made.record, facts.variables, start.request.variables);
    const state = settled.kind === 'ok' ? settled.record : made.record;
    const outcome = await record({
      ...outcomeOfRecord(state),
      ...(facts.deciders !== undefined ? { deciders: facts.deciders } : {}),
    });
    return settled.kind === 'refused' ? { outcome, variableIssues: settled.issues } : { outcome };
  };
}
