/**
 * Signals, queries and updates of {@link AsyncJobWorkflow}, with stable wire names, shared by the workflow,
 * the client, the CLI and the tests.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';

/** What a caller asks for when cancelling an operation (X1: who, why, expected effect). */
export interface CancelRequest {
  requestedBy: string;
  reason: string;
  expectedEffect?: string;
}

/** The operation as the workflow sees it right now. */
export interface OperationView {
  operationId: string;
  provider: string;
  localState: string;
  cancelRequest?: CancelRequest;
}

/** Asks the workflow to cancel the operation at the provider. */
export const cancelSignal = defineSignal<[CancelRequest]>('cancel');
/** Returns the operation's current view. */
export const stateQuery = defineQuery<OperationView>('state');
