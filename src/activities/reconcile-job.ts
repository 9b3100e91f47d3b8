/**
 * The `reconcileJob` activity (U2, U3): after an ambiguous create, finds out whether the provider has our job
 * by the adapter's method (the create again with the same token, a list by client reference, a lookup by
 * token) and applies `afterReconcile`.
 */
import { type OperationRecord } from '../core/operation';
import { afterReconcile } from '../core/step';
import { type ProviderCallInput } from './types';
import { assertIntent, clientReferenceOf } from './create-job';
import { alreadyRecorded, commitStep, parseInputRecord } from './journal-writer';
import { sendOnce, stepContext, type ActivityContext } from './provider-call';

/** Makes the activity. */
export function reconcileJob(ctx: ActivityContext) {
  return async (input: ProviderCallInput & { payload: Record<string, unknown> }): Promise<OperationRecord> => {
    const record = parseInputRecord(input.record);
    const provider = ctx.providers.get(record.provider);
    const recorded = await alreadyRecorded(ctx.store, record);
    if (recorded !== undefined) return recorded;
    // A same-token resend sends the payload again: the same C1/I2 guard as create.
    await assertIntent(ctx, record, input.payload);
    const { adapter, http } = provider;
    const clientReference = clientReferenceOf(record);
    if (record.reconcileBy === 'resend' && adapter.reconciliationMethod !== 'same_token_resend') {
      // A lookup found no job before the create deadline: the create again, with the same token (I3).
      const resend = adapter.buildCreateRequest({ payload: input.payload, token: record.idempotencyToken, clientReference, nowMs: ctx.clock(), firstSentAtMs: record.createdAtMs });
      const { observation } = await sendOnce(ctx, http, adapter, 'reconcile', resend, record, (answer) => ({ ...adapter.interpretCreate(answer), action: 'reconcile' as const }));
      const step = afterReconcile(record, observation, stepContext(ctx, provider, input.random));
      return commitStep(ctx.store, step.record, step.entries, ctx.clock());
    }
    const built = adapter.buildReconcileRequest({
      payload: input.payload,
      token: record.idempotencyToken,
      clientReference,
      nowMs: ctx.clock(),
      firstSentAtMs: record.createdAtMs,
    });
    const { observation } = await sendOnce(ctx, http, adapter, 'reconcile', built, record, (answer) => {
      const interpreted = adapter.interpretReconcile(answer, { clientReference, token: record.idempotencyToken });
      const observation = { ...interpreted.observation, action: 'reconcile' as const };
      const distinct = [...new Set(interpreted.matches.map((m) => m.remoteJobId))];
      if (distinct.length > 1 && observation.parseProblem === undefined) {
        // Several jobs answer for one operation (U3): never read as "no job was created".
        observation.parseProblem = `${distinct.length} provider jobs match this operation: ${distinct.slice(0, 5).join(', ')} (U3)`.slice(0, 2000);
      }
      return observation;
    });
    const step = afterReconcile(record, observation, stepContext(ctx, provider, input.random));
    return commitStep(ctx.store, step.record, step.entries, ctx.clock());
  };
}
