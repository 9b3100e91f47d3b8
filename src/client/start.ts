/**
 * Starting an operation: the front door. Before any workflow exists the request is checked with the
 * workflow's own rules (`validateStartRequest`) and the provider must be served by a worker (unless the caller
 * starts anyway during an outage). Then, per operation ID:
 *
 * - no workflow yet: start one;
 * - a run that failed before recording or sending anything (invalid input, unknown provider): start a new run
 *   in its place (Temporal's `ALLOW_DUPLICATE_FAILED_ONLY`), so a corrected request is never locked out;
 * - a running or completed run (or one that failed or was stopped later): join it, if it is the same request
 *   (fingerprint and provider, I2) with the same settings (`join.ts`); otherwise refuse, changing nothing.
 */
import { randomBytes } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  type WorkflowExecutionDescription,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { newIdempotencyToken, startFingerprint } from '../core/fingerprint';
import { type StartRequest, validateStartRequest } from '../core/operation';
import { runDetails, runSummary } from '../core/run-metadata';
import { checkOperationVariables, type VariableDeclarations } from '../core/operation-variables';
import type { AsyncJobWorkflow } from '../workflows/async-job-workflow';
import type { AsyncJobWorkflowInput } from '../workflows/messages';
import { providerKey, resultDeadlineKey, stateKey } from '../workflows/search-attributes';
import { call, type ClientContext, WORKFLOW_TYPE } from './context';
import { describeRaw, memoString, workflowFailure } from './describe';
import {
  AsyncJobInputError,
  FingerprintMismatchError,
  InvalidVariableError,
  OperationNotFoundError,
  type WorkflowFailure,
} from './errors';
import { assertSameSettings, assertSameVariables } from './join';
import { assertProviderServed, providerServedNow } from './provider-check';

/** Options for {@link startOperation}. */
export interface StartOptions {
  /** Continue as new past this many history events (tests use small values). */
  historyEventLimit?: number;
  /**
   * Start even when no worker serves the provider now (`--allow-unserved-provider`): a durable start during a
   * worker outage. The operation waits for a worker; if the provider turns out to be unknown, it fails and its
   * ID can be started again.
   */
  allowUnservedProvider?: boolean;
  /**
   * The operation variables the provider's adapter declares, when the caller can read its document (the CLI with
   * `ASYNCJOB_PROVIDERS`): the variables are checked against them before anything is started (C5), as the workflow
   * will. Absent: only their grammar is checked here, and the workflow checks the rest.
   */
  declaredVariables?: VariableDeclarations;
}

/** What a start did. */
export interface StartedRun {
  operationId: string;
  runId: string;
  /** True when the operation already existed with the same request and settings (nothing new was started). */
  joined: boolean;
  requestFingerprint: string;
  traceId: string;
  /** Temporal's execution status of the run started or joined (`RUNNING`, `COMPLETED`, `FAILED`, ...). */
  executionStatus: string;
  /** When this start replaced a run that had failed on its input: that run's failure. */
  replaced: WorkflowFailure | null;
}

/** Failure types of a run that failed before recording or sending anything: its operation ID may be started again. */
export const RESTARTABLE_FAILURE_TYPES: readonly string[] = [
  'ASYNCJOB_ERR_INVALID_INPUT',
  'ASYNCJOB_ERR_PROVIDER_UNKNOWN',
];

/** A fresh W3C trace ID: 32 lowercase hex, never all zeros (T1). */
function newTraceId(): string {
  for (;;) {
    const id = randomBytes(16).toString('hex');
    if (!/^0+$/.test(id)) return id;
  }
}

async function describeIfExists(ctx: ClientContext, operationId: string): Promise<WorkflowExecutionDescription | null> {
  try {
    return await describeRaw(ctx, operationId);
  } catch (err) {
    if (err instanceof OperationNotFoundError) return null;
    throw err;
  }
}

/** The failure of an existing run that failed on its input, or null when the run is to be joined. */
async function restartableFailure(
  ctx: ClientContext,
  existing: WorkflowExecutionDescription,
): Promise<WorkflowFailure | null> {
  if (existing.status.name !== 'FAILED') return null;
  const failure = await workflowFailure(ctx, existing.workflowId, existing.runId, existing.status.name);
  return failure && failure.type !== null && RESTARTABLE_FAILURE_TYPES.includes(failure.type) ? failure : null;
}

function workflowInput(req: StartRequest, traceId: string, options: StartOptions): AsyncJobWorkflowInput {
  const token = newIdempotencyToken(randomBytes(32));
  if (token.kind !== 'ok') throw new Error(token.message);
  return {
    request: req,
    idempotencyToken: token.token,
    traceId,
    ...(options.historyEventLimit !== undefined ? { historyEventLimit: options.historyEventLimit } : {}),
  };
}

/** The options of an operation's workflow start: how the client and the Nexus service start every run. */
export type RunStartOptions = WorkflowStartOptions<typeof AsyncJobWorkflow> & { taskQueue: string };

/**
 * Starts the operation's workflow with `options` (the client's `workflow.start`, or the Nexus `startWorkflow`
 * that attaches the caller's callback and links). Throws `WorkflowExecutionAlreadyStartedError` as they do.
 */
export type RunLauncher = (options: RunStartOptions) => Promise<unknown>;

/** The client's launcher: a plain `workflow.start`. */
function clientLauncher(ctx: ClientContext): RunLauncher {
  return (options) => ctx.client.workflow.start<typeof AsyncJobWorkflow>(WORKFLOW_TYPE, options);
}

/**
 * The start options of the operation's run: its ID is the operation ID; a running operation with this ID is
 * joined (and checked by the caller); a closed one is restarted only when it failed on its input (`replacing`,
 * decided before).
 */
export function runStartOptions(
  ctx: ClientContext,
  req: StartRequest,
  traceId: string,
  options: StartOptions,
  replacing: boolean,
): RunStartOptions {
  const nowMs = Date.now();
  return {
    workflowId: req.operationId,
    taskQueue: ctx.taskQueue,
    args: [workflowInput(req, traceId, options)],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: replacing ? 'ALLOW_DUPLICATE_FAILED_ONLY' : 'REJECT_DUPLICATE',
    memo: { requestFingerprint: startFingerprint(req.payload, req.variables), traceId },
    typedSearchAttributes: [
      { key: stateKey, value: 'create_pending' },
      { key: providerKey, value: req.provider },
      // A relative deadline as the client sees it; the workflow publishes its exact one with the next state.
      {
        key: resultDeadlineKey,
        value: new Date('atMs' in req.resultDeadline ? req.resultDeadline.atMs : nowMs + req.resultDeadline.afterMs),
      },
    ],
    staticSummary: runSummary(req),
    staticDetails: runDetails(req),
  };
}

/** Starts a new run; a run that appeared meanwhile is joined instead (checked by the caller). */
async function startRun(
  ctx: ClientContext,
  req: StartRequest,
  traceId: string,
  options: StartOptions,
  replacing: boolean,
  launch: RunLauncher,
): Promise<void> {
  try {
    await call(ctx, req.operationId, () => launch(runStartOptions(ctx, req, traceId, options, replacing)));
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * A new operation, the common case, in one call: a start that Temporal refuses when any run holds the ID (the FAIL
 * conflict policy, REJECT_DUPLICATE reuse), so a start that succeeds made a new run and nothing needs describing
 * before or after it. Null, with nothing started, when a run holds the ID or no worker serves the provider at first
 * look: the general path decides then (join, replace, wait for a worker, or refuse). The client's own start only: a
 * Nexus start joins a running operation within its start call, to attach its caller.
 */
async function startedNew(
  ctx: ClientContext,
  req: StartRequest,
  traceId: string,
  options: StartOptions,
  requestFingerprint: string,
): Promise<StartedRun | null> {
  if (!options.allowUnservedProvider && !(await providerServedNow(ctx, req.provider))) return null;
  try {
    const handle = await call(ctx, req.operationId, () =>
      ctx.client.workflow.start<typeof AsyncJobWorkflow>(WORKFLOW_TYPE, {
        ...runStartOptions(ctx, req, traceId, options, false),
        workflowIdConflictPolicy: 'FAIL',
      }),
    );
    return {
      operationId: req.operationId,
      runId: handle.firstExecutionRunId,
      joined: false,
      requestFingerprint,
      traceId,
      executionStatus: 'RUNNING',
      replaced: null,
    };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return null;
    throw err;
  }
}

/**
 * I2: the same payload and variables (fingerprint) under the same provider; then the same settings (`join.ts`). A
 * fingerprint that differs only by the variables is refused naming each variable that differs.
 */
async function assertSameRequest(
  ctx: ClientContext,
  req: StartRequest,
  d: WorkflowExecutionDescription,
  fingerprint: string,
): Promise<void> {
  const existingFingerprint = memoString(d, 'requestFingerprint') ?? '(none recorded)';
  if (existingFingerprint !== fingerprint) {
    await assertSameVariables(ctx, req.operationId, d.runId, req);
    throw new FingerprintMismatchError(req.operationId, existingFingerprint, fingerprint);
  }
  const existingProvider = d.typedSearchAttributes.get(providerKey);
  if (existingProvider !== undefined && existingProvider !== req.provider) {
    throw new FingerprintMismatchError(req.operationId, `provider ${existingProvider}`, `provider ${req.provider}`);
  }
  await assertSameSettings(ctx, req.operationId, d.runId, req);
}

/**
 * Starts an operation, or joins it (see the module comment). Throws {@link AsyncJobInputError} naming every bad
 * field, {@link InvalidVariableError} naming every variable the adapter refuses (with `declaredVariables`),
 * `ProviderUnservedError`, {@link FingerprintMismatchError} or `JoinMismatchError`; nothing is started or changed
 * when it throws. `launch` starts a new run (the Nexus service passes one that attaches its caller); without it,
 * a new operation ID costs one start call ({@link startedNew}).
 */
export async function startOperation(
  ctx: ClientContext,
  request: StartRequest,
  options: StartOptions = {},
  launch?: RunLauncher,
): Promise<StartedRun> {
  const checked = validateStartRequest(request, Date.now());
  if (checked.kind === 'refused') throw new AsyncJobInputError(checked.issues);
  const req = checked.request;
  if (options.declaredVariables !== undefined) {
    const variables = checkOperationVariables(options.declaredVariables, req.variables);
    if (!variables.ok) throw new InvalidVariableError(variables.issues);
  }
  const fingerprint = startFingerprint(req.payload, req.variables);
  const traceId = newTraceId();
  if (launch === undefined) {
    const started = await startedNew(ctx, req, traceId, options, fingerprint);
    if (started !== null) return started;
  }

  const existing = await describeIfExists(ctx, req.operationId);
  const replaced = existing ? await restartableFailure(ctx, existing) : null;
  if (!existing || replaced) {
    if (!options.allowUnservedProvider) await assertProviderServed(ctx, req.provider);
    await startRun(ctx, req, traceId, options, replaced !== null, launch ?? clientLauncher(ctx));
  }
  const d = await describeRaw(ctx, req.operationId);
  const existingTrace = memoString(d, 'traceId');
  const joined = existingTrace !== traceId;
  if (joined) await assertSameRequest(ctx, req, d, fingerprint);
  return {
    operationId: req.operationId,
    runId: d.runId,
    joined,
    requestFingerprint: fingerprint,
    traceId: existingTrace ?? traceId,
    executionStatus: d.status.name,
    replaced: joined ? null : replaced,
  };
}
