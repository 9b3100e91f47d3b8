/**
 * AsyncJobWorkflow: drives one operation (workflow ID = operation ID) from intent to a verified result.
 * Deterministic: imports only `@temporalio/workflow` and `src/core`.
 */
import { condition, setHandler } from '@temporalio/workflow';
import { cancelSignal, stateQuery, type CancelRequest, type OperationView } from './messages';

/** The workflow's input. */
export interface AsyncJobWorkflowInput {
  operationId: string;
  provider: string;
  /** How long to observe before closing, in ms. */
  observeForMs?: number;
}

/** Runs the operation and returns its final view. */
export async function AsyncJobWorkflow(input: AsyncJobWorkflowInput): Promise<OperationView> {
  const view: OperationView = { operationId: input.operationId, provider: input.provider, localState: 'observing' };
  let cancelRequest: CancelRequest | undefined;
  setHandler(stateQuery, () => view);
  setHandler(cancelSignal, (request) => {
    cancelRequest ??= request;
    view.cancelRequest = cancelRequest;
  });
  await condition(() => cancelRequest !== undefined, input.observeForMs ?? 1000);
  view.localState = cancelRequest ? 'cancel_requested' : 'closed';
  return view;
}
