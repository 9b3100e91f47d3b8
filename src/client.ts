/**
 * The typed asyncjob client over the Temporal client: what backend services and agents call.
 */
import { type Client, type WorkflowHandle } from '@temporalio/client';
import { AsyncJobWorkflow, type AsyncJobWorkflowInput } from './workflows/async-job-workflow';
import { cancelSignal, stateQuery, type CancelRequest, type OperationView } from './workflows/messages';
import { DEFAULT_TASK_QUEUE } from './worker';

/** Options for {@link AsyncJobClient}. */
export interface AsyncJobClientOptions {
  client: Client;
  taskQueue?: string;
}

/** Starts, observes and controls operations. */
export class AsyncJobClient {
  private readonly client: Client;
  private readonly taskQueue: string;

  constructor(options: AsyncJobClientOptions) {
    this.client = options.client;
    this.taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  }

  /** Starts an operation; the workflow ID is the operation ID. */
  async start(input: AsyncJobWorkflowInput): Promise<WorkflowHandle<typeof AsyncJobWorkflow>> {
    return this.client.workflow.start(AsyncJobWorkflow, {
      workflowId: input.operationId,
      taskQueue: this.taskQueue,
      args: [input],
    });
  }

  /** The operation's current view (a query; no provider call). */
  async get(operationId: string): Promise<OperationView> {
    return this.client.workflow.getHandle(operationId).query(stateQuery);
  }

  /** Asks for cancellation at the provider. */
  async cancel(operationId: string, request: CancelRequest): Promise<void> {
    await this.client.workflow.getHandle(operationId).signal(cancelSignal, request);
  }

  /** Waits for the operation's final view. */
  async result(operationId: string): Promise<OperationView> {
    return this.client.workflow.getHandle<typeof AsyncJobWorkflow>(operationId).result();
  }
}
