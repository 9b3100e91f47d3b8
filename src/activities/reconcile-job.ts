/**
 * The `reconcileJob` activity (U2, U3): after an ambiguous create, finds out whether the provider has our job
 * by the adapter's method (the create again with the same token, a list by client reference, a lookup by
 * token) and applies `afterReconcile`.
 */
import { type Observation } from '../core/observation';
import { type StepOutcome } from '../core/step-outcome';
import { afterReconcile, stopAtCreateDeadline } from '../core/step';
import { type StartedCallInput } from './types';
import { assertIntent, clientReferenceOf } from './create-job';
import { inCallFrame } from './call-frame';
import { overtakenByDeadline, requestFactsOf, sendOnce, type ActivityContext } from './provider-call';
import { stageInlineResult } from './stage-inline';

/** Makes the activity. */
export function reconcileJob(ctx: ActivityContext) {
  return async (input: StartedCallInput): Promise<StepOutcome> => {
    return inCallFrame(ctx, input, 'reconcile', async (record, { adapter, http }, step) => {
      // The answer's step, or the stop at the create deadline when a create it was to send came after it (I3).
      const answerStep = async (observation: Observation) =>
        overtakenByDeadline(observation)
          ? stopAtCreateDeadline(record, { ...step, nowMs: observation.receivedAtMs })
          : afterReconcile(record, await stageInlineResult(ctx, record, observation), step);
      // A same-token resend sends the payload again: the same C1/I2 guard as create.
      await assertIntent(ctx, record, input.payload, input.variables);
      const clientReference = clientReferenceOf(record);
      if (record.reconcileBy === 'resend' && adapter.reconciliationMethod !== 'same_token_resend') {
        // A lookup found no job before the create deadline: the create again, with the same token (I3).
        const resend = adapter.buildCreateRequest({
          ...requestFactsOf(record, ctx.clock()),
          payload: input.payload,
          token: record.idempotencyToken,
          clientReference,
          nowMs: ctx.clock(),
          firstSentAtMs: record.createdAtMs,
        });
        const requestUrl = resend.kind === 'request' ? resend.request.url : undefined;
        const { observation } = await sendOnce(
          ctx,
          http,
          adapter,
          'reconcile',
          resend,
          record,
          (answer) => ({
            ...adapter.interpretCreate(answer, {
              requestUrl,
              ...(record.variables !== undefined ? { variables: record.variables } : {}),
            }),
            action: 'reconcile' as const,
          }),
          record.deadlines.createDeadlineMs,
        );
        return answerStep(observation);
      }
      const built = adapter.buildReconcileRequest({
        ...requestFactsOf(record, ctx.clock()),
        payload: input.payload,
        token: record.idempotencyToken,
        clientReference,
        nowMs: ctx.clock(),
        firstSentAtMs: record.createdAtMs,
      });
      const requestUrl = built.kind === 'request' ? built.request.url : undefined;
      // A reconciliation by the same-token create is a create: written before the create deadline or not at all.
      const sendByMs =
        adapter.reconciliationMethod === 'same_token_resend'
          ? record.deadlines.createDeadlineMs
          : Number.POSITIVE_INFINITY;
      const { observation } = await sendOnce(
        ctx,
        http,
        adapter,
        'reconcile',
        built,
        record,
        (answer) => {
          const interpreted = adapter.interpretReconcile(answer, {
            clientReference,
            token: record.idempotencyToken,
            ...(requestUrl !== undefined ? { requestUrl } : {}),
          });
          const observation = { ...interpreted.observation, action: 'reconcile' as const };
          const distinct = [...new Set(interpreted.matches.map((m) => m.remoteJobId))];
          if (distinct.length > 1 && observation.parseProblem === undefined) {
            // Several jobs answer for one operation (U3): never read as "no job was created".
            observation.parseProblem =
              `${distinct.length} provider jobs match this operation: ${distinct.slice(0, 5).join(', ')} (U3)`.slice(
                0,
                2000,
              );
          }
          return observation;
        },
        sendByMs,
      );
      return answerStep(observation);
    });
  };
}
