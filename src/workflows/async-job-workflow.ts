/**
 * AsyncJobWorkflow: drives one operation (workflow ID = operation ID) from intent to a verified result.
 * Deterministic: imports only `src/core`, `@temporalio/workflow` (and `@temporalio/common` keys), and the
 * activity interface as types. The run's state and loop are in {@link OperationRun}, its handlers in
 * `handlers.ts` (see README.md beside it).
 */
import { CancellationScope, workflowInfo } from '@temporalio/workflow';
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
  // and handled by the cancel rules like any other, never a bare stop of the workflow: the loop runs shielded from it.
  CancellationScope.current().cancelRequested.catch(() => {
    run.inbox.enqueue({ kind: 'cancel', request: TEMPORAL_CANCEL_REQUEST });
  });
  return CancellationScope.nonCancellable(() => run.run());
}
