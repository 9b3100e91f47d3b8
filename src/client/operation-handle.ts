/**
 * A started (or joined) operation, as `AsyncJobClient.start` returns it: what the start did, and the client's
 * calls bound to its operation ID.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { Decision, OpenEscalation } from '../core/escalation';
import type { OperationRecord } from '../core/operation';
import type { AsyncJobWorkflow } from '../workflows/async-job-workflow';
import type { CancelRequest, MessageAnswer, OperationSummary } from '../workflows/messages';
import type { StartedRun } from './start';
import type { WaitOptions, WatchOptions } from './wait';

/** The calls of `AsyncJobClient` a handle binds to its operation. */
/** Options of `AsyncJobClient.cancel` and `AsyncJobClient.decide`. */
export interface UpdateOptions {
  /**
   * How long a worker has to accept or refuse the request (default 30 000 ms), else `AsyncJobUpdateTimeout`. Once
   * accepted, the workflow's answer is awaited as long as it takes (it comes when its current step ends).
   */
  acceptTimeoutMs?: number;
}

export interface OperationCalls {
  result(operationId: string, options?: WaitOptions): Promise<OperationSummary>;
  watch(operationId: string, options?: WatchOptions): AsyncGenerator<OperationRecord, void, undefined>;
  get(operationId: string): Promise<OperationRecord>;
  escalation(operationId: string): Promise<(OpenEscalation & { text: string }) | null>;
  cancel(
    operationId: string,
    request: CancelRequest,
    options?: UpdateOptions,
  ): Promise<MessageAnswer & { accepted: true }>;
  decide(operationId: string, decision: Decision, options?: UpdateOptions): Promise<MessageAnswer & { accepted: true }>;
}

/**
 * A started (or joined) operation. `joined` is true when the operation already existed with the same request
 * and settings (nothing new was started); `traceId` is then the existing operation's. `replaced` is set when this
 * start replaced a run that had failed on its input.
 */
export class OperationHandle implements StartedRun {
  readonly operationId: string;
  readonly runId: string;
  readonly joined: boolean;
  readonly requestFingerprint: string;
  readonly traceId: string;
  readonly executionStatus: string;
  readonly replaced: StartedRun['replaced'];

  constructor(
    private readonly calls: OperationCalls,
    started: StartedRun,
    /** The underlying Temporal handle, for anything this class does not cover. */
    readonly workflow: WorkflowHandle<typeof AsyncJobWorkflow>,
  ) {
    this.operationId = started.operationId;
    this.runId = started.runId;
    this.joined = started.joined;
    this.requestFingerprint = started.requestFingerprint;
    this.traceId = started.traceId;
    this.executionStatus = started.executionStatus;
    this.replaced = started.replaced;
  }

  /** Waits until the operation ends or escalates (see `AsyncJobClient.result`). */
  result(options: WaitOptions = {}): Promise<OperationSummary> {
    return this.calls.result(this.operationId, options);
  }

  /** Each change of the operation's record (see `AsyncJobClient.watch`). */
  watch(options: WatchOptions = {}): AsyncGenerator<OperationRecord, void, undefined> {
    return this.calls.watch(this.operationId, options);
  }

  /** The operation's current record (a query; no provider call). */
  state(): Promise<OperationRecord> {
    return this.calls.get(this.operationId);
  }

  /** The open escalation, or null. */
  escalation(): Promise<(OpenEscalation & { text: string }) | null> {
    return this.calls.escalation(this.operationId);
  }

  /** Asks for cancellation at the provider (see `AsyncJobClient.cancel`). */
  cancel(request: CancelRequest, options?: UpdateOptions): Promise<MessageAnswer & { accepted: true }> {
    return this.calls.cancel(this.operationId, request, options);
  }

  /** Answers the open escalation (see `AsyncJobClient.decide`). */
  decide(decision: Decision, options?: UpdateOptions): Promise<MessageAnswer & { accepted: true }> {
    return this.calls.decide(this.operationId, decision, options);
  }
}
