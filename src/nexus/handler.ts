/**
 * The `asyncjob` Nexus service's handler, served by the worker on the workflows' task queue (N4, N2):
 *
 * - `runJob`: a workflow-run operation over `AsyncJobWorkflow`, started or joined with the client's own checks
 *   and join rules (`client/start.ts`); the calling workflow (the request's links) is the recorded starter. The
 *   run is started, or a running one joined, with the SDK's `startWorkflow`, so the caller's completion callback
 *   and links are attached; an operation that has already ended answers at once with its final summary.
 * - cancelling `runJob`: our `cancelOperation` update with the operation's recorded starter (the caller) as the
 *   requester, never Temporal's bare workflow cancel; a cancel already recorded, or an ended operation, is done.
 * - `getOperation`, `requestCancel`: synchronous operations over the client's query and cancel update.
 *
 * Invalid input is a `HandlerError` BAD_REQUEST naming every field; nothing is created for it.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowUpdateStage } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { getClient, operationInfo, startWorkflow } from '@temporalio/nexus';
import { generateWorkflowRunOperationToken, loadWorkflowRunOperationToken } from '@temporalio/nexus/lib/token';
import * as nexus from 'nexus-rpc';
import type { ProviderRegistry } from '../adapters/providers/registry';
import type { VariableDeclarations } from '../core/operation-variables';
import { AsyncJobClient } from '../client';
import { call, type ClientContext, WORKFLOW_TYPE, workerCall, workflowHandle } from '../client/context';
import { describeRaw } from '../client/describe';
import { AsyncJobRequestRefused, type InputIssue, OperationNotFoundError } from '../client/errors';
import { runStartOptions, type StartedRun, startOperation } from '../client/start';
import type { ErrorCode } from '../core/codes';
import { failureFields } from '../core/errors';
import { validateStartRequest, type StartRequest } from '../core/operation';
import { operationSummary } from '../core/step';
import { cancelRequestSchema, type CancelRequest, cancelUpdate, type MessageAnswer } from '../workflows/messages';
import type { OperationSummary } from '../workflows/messages';
import { callerIdentity, callerOfLinks } from './caller';
import { badRequest, toHandlerError } from './errors';
import { getOperationInputSchema, requestCancelInputSchema } from './schemas';
import { asyncJobService, type RunJobInput } from './service';

/** How long a worker has to accept a cancel (the Nexus request's own deadline is about ten seconds). */
const CANCEL_ACCEPT_TIMEOUT_MS = 8_000;

/** The reason recorded when a caller cancels its `runJob`. */
const CALLER_CANCEL_REASON = 'the Nexus caller cancelled runJob';

/** Refusals that mean a cancel has nothing left to do: it is recorded already, or the operation has ended. */
const CANCEL_DONE: readonly ErrorCode[] = ['ASYNCJOB_ERR_CANCEL_ALREADY_REQUESTED', 'ASYNCJOB_ERR_OPERATION_FINAL'];

/** The client's view of the namespace and task queue this Nexus request is served in. */
function clientContext(): ClientContext {
  const info = operationInfo();
  return { client: getClient(), taskQueue: info.taskQueue, namespace: info.namespace };
}

/** The client over {@link clientContext}. */
function asyncJobClient(ctx: ClientContext): AsyncJobClient {
  return new AsyncJobClient({ client: ctx.client, taskQueue: ctx.taskQueue, namespace: ctx.namespace });
}

function issuesOf(issues: readonly { path: readonly PropertyKey[]; message: string }[]): InputIssue[] {
  return issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/**
 * N4: the start request `runJob` starts, its starter the calling workflow when the links name one. Throws
 * BAD_REQUEST naming every bad field (the identity's too) before anything is created.
 */
export function runJobRequest(input: unknown, caller: string | undefined, nowMs: number): StartRequest {
  const given = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const identity = callerIdentity(caller, given.startedBy, 'startedBy');
  const request = { ...given, startedBy: identity.kind === 'ok' ? identity.actor : caller };
  const checked = validateStartRequest(typeof input === 'object' && input !== null ? request : input, nowMs);
  const refusedIdentity = identity.kind === 'refused' ? [{ path: identity.path, message: identity.message }] : [];
  // A refused identity is named once, by why it was refused.
  const others =
    checked.kind === 'refused'
      ? checked.issues.filter((i) => refusedIdentity.length === 0 || i.path !== 'startedBy')
      : [];
  const issues = [...refusedIdentity, ...others];
  if (issues.length > 0 || checked.kind !== 'ok') throw badRequest(issues);
  return checked.request;
}

/**
 * The answer to a `runJob` that joined an operation whose workflow has closed: its final summary, or the failure
 * of a workflow that did not complete (failed, terminated, timed out).
 */
async function closedRunAnswer(ctx: ClientContext, operationId: string): Promise<OperationSummary> {
  try {
    return await ctx.client.workflow.getHandle(operationId).result();
  } catch (err) {
    const text = `operation ${operationId} has ended without a summary: ${err instanceof Error ? err.message : String(err)}`;
    throw new nexus.OperationError('failed', text, {
      cause: ApplicationFailure.create(failureFields('ASYNCJOB_ERR_WORKFLOW_FAILED', text)),
    });
  }
}

/** Attaches the caller's callback and links to the running operation it joined; false when it has closed. */
async function attachToRunning(
  nexusCtx: nexus.StartOperationContext,
  ctx: ClientContext,
  request: StartRequest,
  started: StartedRun,
): Promise<boolean> {
  if (started.executionStatus !== 'RUNNING') return false;
  try {
    await call(ctx, request.operationId, () =>
      startWorkflow(nexusCtx, WORKFLOW_TYPE, runStartOptions(ctx, request, started.traceId, {}, false)),
    );
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/** What the handler may read of the worker it runs in. */
export interface AsyncJobServiceOptions {
  /**
   * The worker's providers: a start's operation variables are checked against the adapter's declarations before
   * anything is created (C5), as the CLI does; absent, the workflow checks them.
   */
  providers?: ProviderRegistry;
}

/** The variables `provider`'s adapter declares, when this worker serves it. */
function declaredVariablesOf(
  providers: ProviderRegistry | undefined,
  provider: string,
): VariableDeclarations | undefined {
  if (providers === undefined || !providers.names().includes(provider)) return undefined;
  return providers.get(provider).adapter.contract?.variables ?? {};
}

/** `runJob`: see the module comment. */
class RunJobHandler implements nexus.OperationHandler<RunJobInput, OperationSummary> {
  constructor(private readonly options: AsyncJobServiceOptions) {}

  async start(
    nexusCtx: nexus.StartOperationContext,
    input: RunJobInput,
  ): Promise<nexus.HandlerStartOperationResult<OperationSummary>> {
    const request = runJobRequest(input, callerOfLinks(nexusCtx.inboundLinks), Date.now());
    const ctx = clientContext();
    try {
      let launched = false;
      const declaredVariables = declaredVariablesOf(this.options.providers, request.provider);
      const checks = declaredVariables !== undefined ? { declaredVariables } : {};
      const started = await startOperation(ctx, request, checks, async (options) => {
        await startWorkflow(nexusCtx, WORKFLOW_TYPE, options);
        launched = true;
      });
      if (!launched && !(await attachToRunning(nexusCtx, ctx, request, started)))
        return nexus.HandlerStartOperationResult.sync(await closedRunAnswer(ctx, request.operationId));
      return nexus.HandlerStartOperationResult.async(
        generateWorkflowRunOperationToken(ctx.namespace, request.operationId),
      );
    } catch (err) {
      if (err instanceof nexus.OperationError) throw err;
      throw toHandlerError(err);
    }
  }

  /** N2: the caller's cancel becomes our recorded cancel intent, requested by the operation's starter. */
  async cancel(_nexusCtx: nexus.CancelOperationContext, token: string): Promise<void> {
    const operationId = loadWorkflowRunOperationToken(token).wid;
    const ctx = clientContext();
    try {
      const record = await asyncJobClient(ctx).get(operationId, { timeoutMs: CANCEL_ACCEPT_TIMEOUT_MS });
      await acceptCancel(ctx, operationId, {
        requestedBy: record.authorisation.startedBy,
        reason: CALLER_CANCEL_REASON,
      });
    } catch (err) {
      if (err instanceof OperationNotFoundError) return;
      if (err instanceof AsyncJobRequestRefused && CANCEL_DONE.includes(err.refusalCode)) return;
      throw toHandlerError(err);
    }
  }
}

/**
 * Sends the `cancelOperation` update and returns once the workflow accepted it (its validator: the intent will
 * be recorded and the provider asked once, X1). Throws `AsyncJobRequestRefused` with the workflow's code when
 * refused, `OperationNotFoundError` when no run is open.
 */
async function acceptCancel(ctx: ClientContext, operationId: string, request: CancelRequest): Promise<void> {
  await workerCall(ctx, operationId, 'update', CANCEL_ACCEPT_TIMEOUT_MS, () =>
    workflowHandle(ctx, operationId).startUpdate(cancelUpdate, {
      args: [request],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    }),
  );
}

/** `getOperation`: the operation's summary now (a query: a worker answers, no provider call). */
async function getOperation(_nexusCtx: nexus.StartOperationContext, input: unknown): Promise<OperationSummary> {
  const parsed = getOperationInputSchema.safeParse(input);
  if (!parsed.success) throw badRequest(issuesOf(parsed.error.issues));
  try {
    return operationSummary(await asyncJobClient(clientContext()).get(parsed.data.operationId));
  } catch (err) {
    throw toHandlerError(err);
  }
}

/** Whether a run of the operation exists and has closed (a cancel then is refused as final, not "not found"). */
async function hasEnded(ctx: ClientContext, operationId: string): Promise<boolean> {
  try {
    return (await describeRaw(ctx, operationId)).status.name !== 'RUNNING';
  } catch {
    return false;
  }
}

/**
 * `requestCancel`: records a cancel intent (X1) as the calling workflow (or the input's `requestedBy` when no
 * workflow calls) and answers once the workflow accepted or refused it; a refusal is an answer, not an error.
 */
async function requestCancel(nexusCtx: nexus.StartOperationContext, input: unknown): Promise<MessageAnswer> {
  const given = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const identity = callerIdentity(callerOfLinks(nexusCtx.inboundLinks), given.requestedBy, 'requestedBy');
  const parsed = requestCancelInputSchema.safeParse(input);
  const issues = [
    ...(identity.kind === 'refused' ? [{ path: identity.path, message: identity.message }] : []),
    ...(parsed.success ? [] : issuesOf(parsed.error.issues)),
  ];
  const { operationId, ...cancel } = parsed.data ?? { operationId: '' };
  const request = cancelRequestSchema.safeParse({
    ...cancel,
    requestedBy: identity.kind === 'ok' ? identity.actor : undefined,
  });
  if (parsed.success && !request.success) issues.push(...issuesOf(request.error.issues));
  if (issues.length > 0 || !request.success) throw badRequest(issues);
  const ctx = clientContext();
  try {
    await acceptCancel(ctx, operationId, request.data);
    return { accepted: true, localState: (await asyncJobClient(ctx).get(operationId)).localState };
  } catch (err) {
    if (err instanceof AsyncJobRequestRefused) return { accepted: false, code: err.refusalCode, message: err.detail };
    if (err instanceof OperationNotFoundError && (await hasEnded(ctx, operationId)))
      return { accepted: false, code: 'ASYNCJOB_ERR_OPERATION_FINAL', message: `operation ${operationId} has ended` };
    throw toHandlerError(err);
  }
}

/**
 * The handler of the `asyncjob` service, for a worker's `nexusServices` on the workflows' task queue (the queue
 * the Nexus endpoint targets): its operations start and read operations in the worker's namespace and queue.
 */
export function asyncJobServiceHandler(
  options: AsyncJobServiceOptions = {},
): nexus.ServiceHandler<typeof asyncJobService.operations> {
  return nexus.serviceHandler(asyncJobService, {
    runJob: new RunJobHandler(options),
    getOperation,
    requestCancel,
  });
}
