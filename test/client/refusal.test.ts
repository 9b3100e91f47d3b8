/**
 * The client reads a refusal as data: its code from the failure's `type`, its text from the first detail (the
 * workflow refuses with the ApplicationFailure `failureFields` makes, whose message `CODE: text` is for the Web UI),
 * never from the message. The failures arrive through the real SDK: the update's outcome is the failure proto the
 * worker would send, encoded by the SDK's own failure converter.
 */
import { ApplicationFailure, DefaultFailureConverter, defaultPayloadConverter } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { AsyncJobRequestRefused } from '../../src/client';
import { updateRefusal } from '../../src/client/refusal';
import { failureFields } from '../../src/core/errors';
import { clientOn } from './fake-temporal';

const OPERATION = 'op-1';

/** The server's answer to an update the workflow finished with `outcome`. */
function updateAnswered(outcome: object) {
  return () => ({
    value: { stage: 3, updateRef: { workflowExecution: { workflowId: OPERATION, runId: 'run-1' } }, outcome },
  });
}

/** The outcome of an update whose validator threw `err`, as the worker sends it. */
function refusedWith(err: Error): object {
  return { failure: new DefaultFailureConverter().errorToFailure(err, defaultPayloadConverter) };
}

const byType = (type: string, message: string): Error =>
  ApplicationFailure.create({ type, message, nonRetryable: true });

async function refusalOf(outcome: object, call: 'cancel' | 'decide'): Promise<AsyncJobRequestRefused> {
  const client = clientOn({
    methods: { updateWorkflowExecution: updateAnswered(outcome) },
    otherwise: () => ({ error: new Error('not asked in this test') }),
  });
  const sent =
    call === 'cancel'
      ? client.cancel(OPERATION, { requestedBy: 'bob', reason: 'not needed' })
      : client.decide(OPERATION, { option: 'close', approvedBy: 'bob', reason: 'done' });
  const err = await sent.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(AsyncJobRequestRefused);
  return err as AsyncJobRequestRefused;
}

describe('a refusal of a cancel or a decision', () => {
  it.each([
    ['ASYNCJOB_ERR_INVALID_INPUT', 'reason: Too small: expected string to have >=1 characters', 'cancel'],
    ['ASYNCJOB_ERR_CANCEL_NOT_ALLOWED', 'no job exists yet to cancel', 'cancel'],
    ['ASYNCJOB_ERR_CANCEL_ALREADY_REQUESTED', 'a cancel was already requested', 'cancel'],
    ['ASYNCJOB_ERR_NOT_READY', 'the operation is starting; try again in a moment', 'cancel'],
    ['ASYNCJOB_ERR_DECISION_INCOMPLETE', 'approvedBy: Required', 'decide'],
    ['ASYNCJOB_ERR_OPTION_NOT_OFFERED', 'option "extend" was not offered', 'decide'],
    ['ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS', 'extendMs 9000000 is above 3600000', 'decide'],
  ] as const)('the code is the failure type %s; the message is the text alone', async (code, text, call) => {
    const refused = await refusalOf(refusedWith(byType(code, text)), call);
    expect(refused).toMatchObject({ code: 'ASYNCJOB_ERR_REFUSED', refusalCode: code, detail: text });
    expect(refused.message).toBe(`${code}: ${text}`);
  });

  it.each([
    ['ASYNCJOB_ERR_OPTION_NOT_OFFERED', 'option "extend" was not offered'],
    ['ASYNCJOB_ERR_DECISION_TOO_LATE', 'after the deadline'],
  ] as const)(
    "the workflow's refusal %s: the code from its type, the text from its detail, shown once",
    async (code, text) => {
      const failure = ApplicationFailure.create(failureFields(code, text));
      expect(failure.message).toBe(`${code}: ${text}`);
      const refused = await refusalOf(refusedWith(failure), 'decide');
      expect(refused).toMatchObject({ refusalCode: code, detail: text });
      expect(refused.message).toBe(`${code}: ${text}`);
    },
  );

  it.each(['ASYNCJOB_ERR_OPTION_NOT_OFFERED: option "extend" was not offered', 'Unknown update handler'])(
    'a plain Error %j is ASYNCJOB_ERR_REFUSED with its message as it is (no code read from text)',
    async (message) => {
      const refused = await refusalOf(refusedWith(new Error(message)), 'decide');
      expect(refused).toMatchObject({ refusalCode: 'ASYNCJOB_ERR_REFUSED', detail: message });
    },
  );

  it("a failure type that is not one of our codes (the SDK's `Error`) never becomes the code", () => {
    const failure = byType('TypeError', 'x is undefined');
    expect(updateRefusal(new WorkflowUpdateFailedError('Workflow Update failed', failure))).toEqual({
      code: 'ASYNCJOB_ERR_REFUSED',
      message: 'x is undefined',
    });
  });

  it("an accepted request returns the workflow's answer; one its main loop refused is AsyncJobRequestRefused", async () => {
    const answered = (answer: object) =>
      clientOn({
        methods: {
          updateWorkflowExecution: updateAnswered({
            success: { payloads: [defaultPayloadConverter.toPayload(answer)] },
          }),
        },
        otherwise: () => ({ error: new Error('not asked in this test') }),
      });
    const request = { requestedBy: 'bob', reason: 'not needed' };
    expect(await answered({ accepted: true, localState: 'cancel_requested' }).cancel(OPERATION, request)).toEqual({
      accepted: true,
      localState: 'cancel_requested',
    });
    const refused = answered({ accepted: false, code: 'ASYNCJOB_ERR_CANCEL_NOT_ALLOWED', message: 'too early' });
    await expect(refused.cancel(OPERATION, request)).rejects.toMatchObject({
      refusalCode: 'ASYNCJOB_ERR_CANCEL_NOT_ALLOWED',
      detail: 'too early',
    });
  });
});
