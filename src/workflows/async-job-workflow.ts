/**
 * AsyncJobWorkflow: drives one operation (workflow ID = operation ID) from intent to a verified result.
 * Deterministic: imports only `src/core`, `@temporalio/workflow` (and `@temporalio/common` keys), and the
 * activity interface as types. The run's state and loop are in {@link OperationRun}, its handlers in
 * `handlers.ts` (see README.md beside it).
 */
import { CancellationScope, patched, workflowInfo } from '@temporalio/workflow';
import { issueText } from '../core/issues';
import { setMessageHandlers } from './handlers';
import { TEMPORAL_CANCEL_REQUEST } from './message-steps';
import {
  asyncJobWorkflowInputSchema,
  type AsyncJobWorkflowInput,
  type CarriedState,
  type OperationSummary,
} from './messages';
import { OperationRun } from './operation-run';
import { invalidInput } from './refusals';

/** The patch that makes a Temporal cancellation request a recorded cancel intent. */
const CANCEL_REQUEST_AS_INTENT = 'asyncjob-temporal-cancel-as-intent';

/**
 * Runs one operation and returns its summary (state, job, result summary, escalation): never the result body.
 * `carried` is set only by continue-as-new.
 */
export async function AsyncJobWorkflow(
  rawInput: AsyncJobWorkflowInput,
  carried?: CarriedState,
): Promise<OperationSummary> {
  const parsed = asyncJobWorkflowInputSchema.safeParse(rawInput);
  if (!parsed.success) throw invalidInput(issueText(parsed.error.issues));
  const input = parsed.data;
  const { workflowId } = workflowInfo();
  if (input.request.operationId !== workflowId) {
    throw invalidInput(`the workflow ID ${workflowId} must be the operation ID ${input.request.operationId}`);
  }
  const run = new OperationRun(input, carried);
  setMessageHandlers(run);

  // X1: a Temporal "Request Cancellation" (Web UI, `temporal workflow cancel`) is an operator's cancel intent, recorded
  // and handled by the cancel rules like any other, never a bare stop of the workflow. The loop runs shielded from
  // it; histories recorded before this (no marker) replay the old behaviour: the loop is cancelled.
  let loop: CancellationScope | undefined;
  CancellationScope.current().cancelRequested.catch(() => {
    if (patched(CANCEL_REQUEST_AS_INTENT)) run.inbox.enqueue({ kind: 'cancel', request: TEMPORAL_CANCEL_REQUEST });
    else loop?.cancel();
  });
  return CancellationScope.nonCancellable(() => {
    loop = new CancellationScope();
    return loop.run(() => run.run());
  });
}
