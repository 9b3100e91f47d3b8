/**
 * The `createJob` activity (C1-C3, I1-I3, T1): refuses to send unless the intent is recorded with this
 * request's fingerprint; sends the create request once with the record's idempotency token where the contract
 * puts it; records the observation and the step's decision (`afterCreate`) in the same activity.
 */
import { startFingerprint } from '../core/fingerprint';
import { type OperationRecord } from '../core/operation';
import { type OperationVariables } from '../core/operation-variables';
import { type StepOutcome } from '../core/step-outcome';
import { afterCreate, stopAtCreateDeadline } from '../core/step';
import { type CreateJobInput, type StartedCallInput } from './types';
import { parseInputRecord } from './journal-writer';
import { parseLimits, readOnAfterCreate } from './poll-status';
import { AsyncJobError } from '../core/errors';
import { inCallFrame } from './call-frame';
import { overtakenByDeadline, requestFactsOf, sendOnce, type ActivityContext } from './provider-call';
import { recordedIntent } from './record-intent';
import { stageInlineResult } from './stage-inline';

/** The client reference sent to the provider: the caller's, else our operation ID (used by reconciliation, U2). */
export function clientReferenceOf(record: OperationRecord): string {
  return record.clientReference ?? record.operationId;
}

/**
 * C1, I2: the intent must be recorded and the payload, with the variables as given (C5), must be the request it
 * recorded. Throws non-retryable `ASYNCJOB_ERR_INTENT_MISSING` / `ASYNCJOB_ERR_FINGERPRINT_MISMATCH`; sends
 * nothing.
 */
export async function assertIntent(
  ctx: ActivityContext,
  record: OperationRecord,
  payload: Record<string, unknown>,
  variables?: OperationVariables,
): Promise<void> {
  const intent = await recordedIntent(ctx, record.operationId);
  if (intent === undefined)
    throw new AsyncJobError(
      'ASYNCJOB_ERR_INTENT_MISSING',
      `operation ${record.operationId} has no recorded intent; recordIntent runs first (C1)`,
    );
  let fingerprint: string;
  try {
    fingerprint = startFingerprint(payload, variables);
  } catch (error) {
    throw new AsyncJobError('ASYNCJOB_ERR_INVALID_INPUT', `payload: ${(error as Error).message}`);
  }
  if (fingerprint !== intent.requestFingerprint || fingerprint !== record.requestFingerprint) {
    throw new AsyncJobError(
      'ASYNCJOB_ERR_FINGERPRINT_MISMATCH',
      `payload: its fingerprint ${fingerprint} is not the recorded ${intent.requestFingerprint} (record ${record.requestFingerprint}) (I2)`,
    );
  }
}

/**
 * Makes the activity. Given `loop` (`readOnAfterCreateLimits`), a create that leaves the job polled is followed by the
 * reads due within it, in this activity (`readOnAfterCreate`); a worker of an earlier version ignores `loop` and the
 * workflow schedules the reads.
 */
export function createJob(ctx: ActivityContext) {
  return async (input: CreateJobInput): Promise<StepOutcome> => {
    // Checked before anything is sent: a bad limit refuses the call, never a create already made.
    const readOn = input.loop === undefined ? undefined : parseLimits(input.loop);
    const created = await createOnce(ctx, input);
    return readOn === undefined ? created : readOnAfterCreate(ctx, created, readOn, parseInputRecord(input.state));
  };
}

/** The create request, sent once and recorded with the step's decision (see the module comment). */
function createOnce(ctx: ActivityContext, input: StartedCallInput): Promise<StepOutcome> {
  return inCallFrame(ctx, input, 'create', async (record, { adapter, http }, step) => {
    await assertIntent(ctx, record, input.payload, input.variables);
    const built = adapter.buildCreateRequest({
      ...requestFactsOf(record, ctx.clock()),
      payload: input.payload,
      token: record.idempotencyToken,
      clientReference: clientReferenceOf(record),
      nowMs: ctx.clock(),
      firstSentAtMs: record.createdAtMs,
    });
    const requestUrl = built.kind === 'request' ? built.request.url : undefined;
    // Written before the create deadline or not at all (I3): a create that waited in the queue or for its turn
    // past it is not sent, and the operation stops there as its next reservation would.
    const { observation } = await sendOnce(
      ctx,
      http,
      adapter,
      'create',
      built,
      record,
      (answer) =>
        adapter.interpretCreate(answer, {
          requestUrl,
          ...(record.variables !== undefined ? { variables: record.variables } : {}),
        }),
      record.deadlines.createDeadlineMs,
    );
    if (overtakenByDeadline(observation))
      return stopAtCreateDeadline(record, { ...step, nowMs: observation.receivedAtMs });
    return afterCreate(record, await stageInlineResult(ctx, record, observation), step);
  });
}
