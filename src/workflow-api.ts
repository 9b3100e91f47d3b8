/**
 * `asyncjob/workflow`: run an operation from inside your own workflow, as a child workflow (`AsyncJobWorkflow` on
 * the asyncjob workers' task queue, workflow ID = operation ID). Workflow code: it imports only the Temporal
 * workflow SDK, zod and asyncjob's pure core, so it bundles into any workflow bundle (test/package, bundling test).
 *
 * - N1: the request is checked here, before any child exists (a bad one is a typed failure); the starter is the
 *   parent workflow (`workflow:<namespace>/<workflow ID>`), never a name the parent's code gives; an operation ID
 *   used before is refused (`ASYNCJOB_ERR_OPERATION_EXISTS`): a child never joins an operation started elsewhere.
 * - N2: when the scope that started the child is cancelled, asyncjob's own `cancel` signal is sent with the parent
 *   as requester, and the result is still awaited: `cancelled` is a `CancelledFailure`, a success that arrived
 *   anyway is returned as the success it is. Temporal's bare child cancellation is never sent (`ABANDON`).
 * - N3: the child signals its escalations; `handle.escalation()` and the parent's `asyncjob.escalations` query
 *   show them.
 */
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  isCancellation,
  log,
  setHandler,
  startChild,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { workflowActor } from './core/actor';
import { ERROR_CODES, type ErrorCode } from './core/codes';
import { failureFields } from './core/errors';
import { startFingerprint } from './core/fingerprint';
import { issueText } from './core/issues';
import { outcomeFailure } from './core/outcome-failure';
import { runDetails, runSummary } from './core/run-metadata';
import { sha256HexOfText } from './core/sha256';
import { validateStartRequest, type StartRequest, type StartRequestIssue } from './core/start-request';
import { DEFAULT_TASK_QUEUE } from './core/task-queues';
import type { AsyncJobWorkflow } from './workflows/async-job-workflow';
import {
  cancelRequestSchema,
  cancelSignal,
  type AsyncJobWorkflowInput,
  type OperationSummary,
} from './workflows/messages';
import {
  escalationNoticeSignal,
  escalationsQuery,
  type EscalationNotice,
  type ParentEscalation,
} from './workflows/parent-link';
import { providerKey, resultDeadlineKey, stateKey } from './workflows/search-attributes';

export { DEFAULT_TASK_QUEUE };
export type { EscalationNotice, OperationSummary, ParentEscalation };
export { escalationsQuery };
/** For a caller through Nexus (docs/nexus.md): the service to name beside the endpoint, and the outcome mapping. */
export { ASYNCJOB_SERVICE_NAME, asyncJobService } from './nexus/service';
export type { GetOperationInput, RequestCancelInput, RunJobInput } from './nexus/service';
export type { MessageAnswer } from './workflows/messages';
export { outcomeFailure };

/** A start request as a workflow gives it: everything but `startedBy`, which is the parent workflow itself (N1). */
export type ChildStartRequest = Omit<StartRequest, 'startedBy'>;

/** What a parent does with its still-running child when it closes without waiting (N1). */
export type AsyncJobParentClosePolicy = 'REQUEST_CANCEL' | 'ABANDON';

/** Options of {@link startAsyncJob} and {@link executeAsyncJob}. */
export interface AsyncJobChildOptions {
  /**
   * The task queue of the asyncjob workers' workflows (their `ASYNCJOB_TASK_QUEUE`). Default
   * {@link DEFAULT_TASK_QUEUE} (`asyncjob`), the default of `asyncjob worker` and of the client.
   */
  taskQueue?: string;
  /**
   * When the parent closes while the operation runs: `REQUEST_CANCEL` (default) leaves a Temporal cancel request,
   * which the operation records as a cancel intent and sends to the provider once (X1); one that comes before the
   * provider has the job is held until it has (X5). `ABANDON` lets the job run to its end with nobody waiting.
   * `TERMINATE` is refused: it would stop the operation without a record and leave the provider's job running.
   */
  parentClosePolicy?: AsyncJobParentClosePolicy;
  /** The reason recorded with the cancel sent when the parent's scope is cancelled (N2). */
  cancelReason?: string;
  /** Continue the operation as new past this many history events (tests use small values). */
  historyEventLimit?: number;
}

/** A running child operation. */
export interface AsyncJobHandle {
  /** The operation ID (= the child's workflow ID). */
  readonly operationId: string;
  /**
   * The operation's summary once it succeeded; otherwise throws its typed `ApplicationFailure` (type = our code,
   * `details[0]` = the summary), or `CancelledFailure` when it ended cancelled after the parent's scope was
   * cancelled (N2). Safe to call more than once; keeps waiting in a cancelled scope.
   */
  result(): Promise<OperationSummary>;
  /** The escalation the operation waits on now, as its last signal said (N3); null when none is open. */
  escalation(): ParentEscalation | null;
  /**
   * Asks for cancellation at the provider: asyncjob's recorded cancel intent, the parent as requester (X1). The
   * operation decides (it may refuse, or the job may finish first, X2): {@link result} tells how it ended.
   */
  cancel(reason: string, expectedEffect?: string): Promise<void>;
}

/** The open escalations of this workflow's children, by operation ID (module state is per workflow execution). */
const escalations = new Map<string, ParentEscalation | null>();
let handlersSet = false;

/** Registers the escalation signal and query on the parent, once. */
function setEscalationHandlers(): void {
  if (handlersSet) return;
  handlersSet = true;
  setHandler(escalationNoticeSignal, (notice: EscalationNotice) => {
    escalations.set(notice.operationId, notice.escalation);
  });
  setHandler(escalationsQuery, () =>
    [...escalations].flatMap(([operationId, escalation]) => (escalation ? [{ operationId, escalation }] : [])),
  );
}

function invalidRequest(issues: StartRequestIssue[]): ApplicationFailure {
  const text = issueText(issues, '(request)');
  return ApplicationFailure.create({ ...failureFields('ASYNCJOB_ERR_INVALID_INPUT', text), details: [issues] });
}

/**
 * What a workflow's code may not decide (N1): the starter, and a policy that would terminate the operation; and
 * options the child would refuse only once it exists (its ID then used up): an empty task queue (the SDK would
 * put the child on the parent's queue), a history limit outside the workflow's bounds.
 */
function refusedOptions(request: object, options: AsyncJobChildOptions): StartRequestIssue[] {
  const issues: StartRequestIssue[] = [];
  const { taskQueue, historyEventLimit, cancelReason } = options;
  if (
    cancelReason !== undefined &&
    (typeof cancelReason !== 'string' || !/\S/.test(cancelReason) || cancelReason.length > 2000)
  )
    issues.push({ path: 'cancelReason', message: 'a reason of 1 to 2000 characters' });
  if (taskQueue !== undefined && (typeof taskQueue !== 'string' || taskQueue.trim() === ''))
    issues.push({ path: 'taskQueue', message: "the asyncjob workers' task queue: a non-empty name" });
  if (
    historyEventLimit !== undefined &&
    !(Number.isInteger(historyEventLimit) && historyEventLimit >= 100 && historyEventLimit <= 50_000)
  )
    issues.push({ path: 'historyEventLimit', message: 'an integer from 100 to 50000' });
  if ('startedBy' in request)
    issues.push({ path: 'startedBy', message: 'not given by a workflow: the starter is the parent workflow itself' });
  const policy = options.parentClosePolicy;
  if (policy !== undefined && policy !== 'REQUEST_CANCEL' && policy !== 'ABANDON')
    issues.push({
      path: 'parentClosePolicy',
      message: `${String(policy)} is refused: REQUEST_CANCEL or ABANDON (a terminated operation leaves its job unseen)`,
    });
  return issues;
}

/**
 * The operation's trace ID (T1), made deterministically: workflow code has no `crypto`, and a replay must make
 * the same one. SHA-256 over the parent's namespace, workflow ID and run ID and the operation ID. The idempotency
 * token is not made here: it must carry 128 bits no one can predict (I1), so the worker draws it (the input leaves
 * it out).
 */
function derivedTraceId(operationId: string): string {
  const { namespace, workflowId, runId } = workflowInfo();
  const trace = sha256HexOfText(['asyncjob trace', namespace, workflowId, runId, operationId].join('\u0000')).slice(
    0,
    32,
  );
  // A W3C trace ID is never all zeros (T1).
  return /^0+$/.test(trace) ? `${trace.slice(0, 31)}1` : trace;
}

/** Starts the child; an operation ID used before is refused (N1). */
async function startOperationChild(
  request: StartRequest,
  input: AsyncJobWorkflowInput,
  options: AsyncJobChildOptions,
): Promise<ChildWorkflowHandle<typeof AsyncJobWorkflow>> {
  const nowMs = Date.now();
  const deadline = request.resultDeadline;
  try {
    return await startChild<typeof AsyncJobWorkflow>('AsyncJobWorkflow', {
      workflowId: request.operationId,
      taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      parentClosePolicy: options.parentClosePolicy ?? 'REQUEST_CANCEL',
      // N2: the parent's cancellation is our cancel signal, sent by the handle; Temporal sends the child nothing.
      cancellationType: ChildWorkflowCancellationType.ABANDON,
      memo: { requestFingerprint: startFingerprint(request.payload, request.variables), traceId: input.traceId },
      typedSearchAttributes: [
        { key: stateKey, value: 'create_pending' },
        { key: providerKey, value: request.provider },
        { key: resultDeadlineKey, value: new Date('atMs' in deadline ? deadline.atMs : nowMs + deadline.afterMs) },
      ],
      staticSummary: runSummary(request),
      staticDetails: runDetails(request),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    throw ApplicationFailure.create(
      failureFields(
        'ASYNCJOB_ERR_OPERATION_EXISTS',
        `operation ${request.operationId} exists already: a child workflow never joins an operation started ` +
          'elsewhere; follow it with the asyncjob client or the Nexus getOperation operation, or use a new ID',
      ),
    );
  }
}

/**
 * A child that ended without a summary (it failed before recording anything, e.g. an unknown provider, or was
 * terminated or timed out) as one typed failure: its own code when it carries one, else
 * `ASYNCJOB_ERR_WORKFLOW_FAILED`; the child's failure is the cause.
 */
function endedWithoutSummary(operationId: string, err: unknown): ApplicationFailure {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  const type = cause instanceof ApplicationFailure ? cause.type : undefined;
  const code: ErrorCode =
    typeof type === 'string' && type in ERROR_CODES ? (type as ErrorCode) : 'ASYNCJOB_ERR_WORKFLOW_FAILED';
  const text = `operation ${operationId} ended without a summary: ${cause instanceof Error ? cause.message : String(cause)}`;
  return ApplicationFailure.create({
    ...failureFields(code, text),
    nonRetryable: true,
    cause: cause instanceof Error ? cause : undefined,
  });
}

/** The handle of one child operation, and the watch that turns the parent's cancellation into our cancel (N2). */
class ChildOperation implements AsyncJobHandle {
  private cancelledByParent = false;
  private outcome: Promise<OperationSummary> | undefined;
  private cancelSent: Promise<void> = Promise.resolve();

  constructor(
    readonly operationId: string,
    private readonly child: ChildWorkflowHandle<typeof AsyncJobWorkflow>,
    private readonly requester: string,
    scope: CancellationScope,
    cancelReason: string,
  ) {
    scope.cancelRequested.catch((err: unknown) => {
      if (!isCancellation(err)) return;
      this.cancelledByParent = true;
      this.cancelSent = this.cancel(cancelReason, 'the provider stops the job');
    });
  }

  result(): Promise<OperationSummary> {
    this.outcome ??= CancellationScope.nonCancellable(async () => {
      const summary = await this.child.result().catch((err: unknown) => {
        throw endedWithoutSummary(this.operationId, err);
      });
      await this.cancelSent;
      escalations.delete(this.operationId);
      if (summary.localState === 'cancelled' && this.cancelledByParent)
        throw new CancelledFailure(`operation ${this.operationId} ended cancelled, as the parent asked`, [summary]);
      const failure = outcomeFailure(summary);
      if (failure !== null) throw ApplicationFailure.create(failure);
      return summary;
    });
    return this.outcome;
  }

  escalation(): ParentEscalation | null {
    return escalations.get(this.operationId) ?? null;
  }

  cancel(reason: string, expectedEffect?: string): Promise<void> {
    const request = {
      requestedBy: this.requester,
      reason,
      ...(expectedEffect !== undefined ? { expectedEffect } : {}),
    };
    // The operation would refuse a malformed request without an answer: refused here, where the caller sees it.
    const checked = cancelRequestSchema.safeParse(request);
    if (!checked.success) {
      const issues = checked.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
      return Promise.reject(invalidRequest(issues));
    }
    // Sent even from a cancelled scope: it is how the cancellation reaches the provider.
    return CancellationScope.nonCancellable(() =>
      this.child.signal(cancelSignal, request).catch((err: unknown) => {
        log.warn('the cancel signal did not reach the operation (it has ended)', {
          operationId: this.operationId,
          error: err instanceof Error ? err.message : String(err),
        });
      }),
    );
  }
}

/**
 * Starts `request` as a child operation of the calling workflow and returns its handle once the child runs.
 * Throws (nothing started) a non-retryable `ApplicationFailure` of type `ASYNCJOB_ERR_INVALID_INPUT` naming every
 * bad field, or `ASYNCJOB_ERR_OPERATION_EXISTS` for an operation ID used before (N1). Workflow code only.
 */
export async function startAsyncJob(
  request: ChildStartRequest,
  options: AsyncJobChildOptions = {},
): Promise<AsyncJobHandle> {
  const info = workflowInfo();
  const parent = workflowActor(info.namespace, info.workflowId);
  const refused = refusedOptions(request, options);
  const checked = validateStartRequest({ ...request, startedBy: parent }, Date.now());
  if (refused.length > 0 || checked.kind === 'refused')
    throw invalidRequest([...refused, ...(checked.kind === 'refused' ? checked.issues : [])]);
  const valid = checked.request;
  const input: AsyncJobWorkflowInput = {
    request: valid,
    traceId: derivedTraceId(valid.operationId),
    ...(options.historyEventLimit !== undefined ? { historyEventLimit: options.historyEventLimit } : {}),
  };
  setEscalationHandlers();
  const scope = CancellationScope.current();
  const child = await CancellationScope.nonCancellable(() => startOperationChild(valid, input, options));
  const reason = options.cancelReason ?? `the parent workflow ${info.workflowId} was cancelled`;
  return new ChildOperation(valid.operationId, child, parent, scope, reason);
}

/** Starts `request` as a child operation (see {@link startAsyncJob}) and returns its result (see `result()`). */
export async function executeAsyncJob(
  request: ChildStartRequest,
  options: AsyncJobChildOptions = {},
): Promise<OperationSummary> {
  return (await startAsyncJob(request, options)).result();
}
