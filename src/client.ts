/**
 * The typed asyncjob client over the Temporal client: what backend services, agents and the CLI call.
 *
 * One operation is one workflow (workflow ID = operation ID). `start` checks the request with the workflow's own
 * rules and that a worker serves the provider before anything exists (`client/start.ts`); a second start of the
 * same request joins the operation, a changed one is refused (I2, `client/join.ts`). Waiting returns when the
 * operation ends or needs a decision (`client/wait.ts`). Everything else goes through the workflow's queries,
 * updates and signals (`src/workflows/messages.ts`) or Temporal's visibility store, never around them. Every
 * failure is one of the typed errors of `client/errors.ts`. This module imports nothing of the worker side.
 */
import { type Client, type Connection, WorkflowUpdateStage, type WorkflowUpdateHandle } from '@temporalio/client';
import type { ArtifactStore } from './adapters/artifacts/artifact-store';
import { artifactSettingsOf, openArtifactStore } from './adapters/artifacts/open-artifact-store';
import { type Decision, decisionSchema, type OpenEscalation } from './core/escalation';
import type { OperationRecord, RecordedTransition, StartRequest } from './core/operation';
import { connectFromEnvironment } from './client/connection';
import { call, type ClientContext, DEFAULT_TASK_QUEUE, workerCall, workflowHandle } from './client/context';
import { describeOperation, describeRaw, workflowFailure, type OperationDescription } from './client/describe';
import {
  AsyncJobInputError,
  AsyncJobRequestRefused,
  type InputIssue,
  isErrorCode,
  OperationEndedError,
  OperationNotFoundError,
} from './client/errors';
import {
  listEscalated,
  listOperations,
  type EscalatedOperation,
  type ListEscalatedOptions,
  type ListOptions,
  type OperationListing,
} from './client/list';
import { queryOperation } from './client/queries';
import { withPendingAnswer } from './client/pending-read';
import { openVerifiedResult, recordedResultOf, type VerifiedResultStream } from './client/read-result';
import { OperationHandle, type UpdateOptions } from './client/operation-handle';
import { waitForProviderWorkers } from './client/provider-check';
import { startOperation, type StartOptions } from './client/start';
import { refuseClaimedCallers } from './client/caller-claims';
import { waitForOutcome, watchOperation, type WaitOptions, type WatchOptions } from './client/wait';
import {
  cancelRequestSchema,
  cancelUpdate,
  decideUpdate,
  extensionRequestSchema,
  extensionUpdate,
  type ExtensionRequest,
  escalationQuery,
  historyQuery,
  stateQuery,
  webhookHintSchema,
  webhookSignal,
  type CancelRequest,
  type MessageAnswer,
  type OperationSummary,
  type WebhookHint,
} from './workflows/messages';
import { stateKey } from './workflows/search-attributes';

export * from './client/errors';
export { temporalConnectionSettings, type TemporalConnectionSettings } from './client/connection';
export { DEFAULT_TASK_QUEUE, providerTaskQueue, WORKFLOW_TYPE } from './client/context';
export { FAILED_EXECUTION_STATUSES, type OperationDescription } from './client/describe';
export {
  listQuery,
  type EscalatedOperation,
  type ListEscalatedOptions,
  type ListOptions,
  type OperationListing,
} from './client/list';
export { RESTARTABLE_FAILURE_TYPES, type StartedRun, type StartOptions } from './client/start';
export { joinDifferences, DEADLINE_TOLERANCE_MS } from './client/join';
export type { WaitOptions, WatchOptions } from './client/wait';
export { OperationHandle, type UpdateOptions } from './client/operation-handle';
export { VerifiedResultStream, type RecordedResult } from './client/read-result';
export type { ArtifactStore } from './adapters/artifacts/artifact-store';
export type { OperationSummary } from './workflows/messages';
export type { OperationVariables, VariableDeclarations } from './core/operation-variables';

/** Options for {@link AsyncJobClient}. */
export interface AsyncJobClientOptions {
  client: Client;
  /** Task queue of the workflows (default {@link DEFAULT_TASK_QUEUE}). */
  taskQueue?: string;
  /** For messages only; the namespace is the one `client` was made with. */
  namespace?: string;
  /** A connection {@link AsyncJobClient.close} closes (set by {@link AsyncJobClient.connect}). */
  ownedConnection?: Connection;
  /**
   * Where {@link AsyncJobClient.readResult} reads results: default, the store the environment names
   * (`ASYNCJOB_ARTIFACTS`, else the file store at `ASYNCJOB_ARTIFACTS_DIR`), chosen at the first read.
   */
  artifacts?: ArtifactStore;
}

/** Options for {@link AsyncJobClient.connect}. */
export interface AsyncJobConnectOptions {
  /** The environment to read (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Overrides `ASYNCJOB_TASK_QUEUE`. */
  taskQueue?: string;
  /** How long to keep trying to reach the server before {@link AsyncJobConnectionError} (default 10 000 ms). */
  connectTimeoutMs?: number;
  /** Overrides the artifact store the environment names (`ASYNCJOB_ARTIFACTS`). */
  artifacts?: ArtifactStore;
}

/** The open escalation as the workflow answers it, with its rendered text (E2). */
export type EscalationView = OpenEscalation & { text: string };

/** Options of the query methods. */
export interface QueryOptions {
  /** How long to wait for a worker to answer (default 30 000 ms). */
  timeoutMs?: number;
}

const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

const DEFAULT_ACCEPT_TIMEOUT_MS = 30_000;

function zodIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): InputIssue[] {
  return issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/** Starts, observes and controls operations. Safe to share; most methods are one or two Temporal calls. */
export class AsyncJobClient {
  private readonly ctx: ClientContext;
  private readonly ownedConnection: Connection | undefined;
  private artifacts: ArtifactStore | undefined;
  /** Chooses the artifact store at the first read, so a client that reads no result never loads an object store's SDK. */
  private chooseArtifacts = () => openArtifactStore(artifactSettingsOf(process.env));
  /** The namespace the operations live in. */
  readonly namespace: string;

  constructor(options: AsyncJobClientOptions) {
    this.namespace = options.namespace ?? options.client.options.namespace;
    this.ctx = {
      client: options.client,
      taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
      namespace: options.client.options.namespace,
    };
    this.ownedConnection = options.ownedConnection;
    this.artifacts = options.artifacts;
  }

  /**
   * Connects using Temporal's environment conventions (see `src/client/connection.ts`). Throws `ConfigError`
   * for a bad environment, `TlsFileError` for an unreadable TLS file and {@link AsyncJobConnectionError} when the
   * server cannot be reached. Call {@link close} when done.
   */
  static async connect(options: AsyncJobConnectOptions = {}): Promise<AsyncJobClient> {
    const env = options.env ?? process.env;
    const { client, connection, config } = await connectFromEnvironment(env, options.connectTimeoutMs);
    const made = new AsyncJobClient({
      client,
      taskQueue: options.taskQueue ?? config.ASYNCJOB_TASK_QUEUE,
      namespace: client.options.namespace,
      ownedConnection: connection,
      ...(options.artifacts !== undefined ? { artifacts: options.artifacts } : {}),
    });
    made.chooseArtifacts = () => openArtifactStore(config, env);
    return made;
  }

  /** Closes the connection made by {@link connect}; a client given from outside is left open. */
  async close(): Promise<void> {
    await this.ownedConnection?.close();
  }

  /**
   * Waits until a worker serves each of `providers` (polls its task queue), for scripts that start workers and then
   * operations: a start checks this once, with a short grace, and refuses an unserved provider. Throws
   * `ProviderUnservedError` for the first provider still unserved after `timeoutMs` (default 60 000).
   */
  async waitForWorkers(providers: readonly string[], options: { timeoutMs?: number } = {}): Promise<void> {
    await waitForProviderWorkers(this.ctx, providers, options.timeoutMs ?? 60_000);
  }

  /**
   * Starts an operation, or joins it when it already exists with the same request and settings (idempotent per
   * operation ID); a run that failed on its input is replaced. See `client/start.ts` for the rules and errors:
   * nothing is started or changed when it throws.
   */
  async start(request: StartRequest, options: StartOptions = {}): Promise<OperationHandle> {
    refuseClaimedCallers({ startedBy: request?.startedBy, authorisedBy: request?.authorisedBy });
    const started = await startOperation(this.ctx, request, options);
    return new OperationHandle(this, started, workflowHandle(this.ctx, started.operationId));
  }

  /**
   * The operation's current record: local and remote state, counters, budgets, schedule. A query: needs a worker;
   * throws `AsyncJobQueryTimeout` when none answers within `timeoutMs` (default 30 000), and
   * `OperationFailedError` (with the reason) when the workflow failed before it could answer. While the status
   * activity holds a running job, its last answer (state, the provider's word, progress, requests used, next read)
   * is shown over the workflow's copy, which is refreshed only once it is 30 status reads and 15 s old and something
   * it shows moved (P8).
   */
  async get(operationId: string, options: QueryOptions = {}): Promise<OperationRecord> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    const queried = queryOperation(this.ctx, operationId, timeoutMs, () =>
      workflowHandle(this.ctx, operationId).query(stateQuery),
    );
    return withPendingAnswer(this.ctx, operationId, queried);
  }

  /** The open escalation with its text and offered options, or null (a query, see {@link get}). */
  async escalation(operationId: string, options: QueryOptions = {}): Promise<EscalationView | null> {
    return queryOperation(this.ctx, operationId, options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS, () =>
      workflowHandle(this.ctx, operationId).query(escalationQuery),
    );
  }

  /** The transitions kept in the record, oldest first (the full journal is in the store). A query, see {@link get}. */
  async history(operationId: string, options: QueryOptions = {}): Promise<RecordedTransition[]> {
    return queryOperation(this.ctx, operationId, options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS, () =>
      workflowHandle(this.ctx, operationId).query(historyQuery),
    );
  }

  /**
   * Asks for cancellation at the provider (X1) and waits for the workflow's answer (the `cancelOperation`
   * update). Throws {@link AsyncJobInputError} for a bad request, {@link AsyncJobRequestRefused} when the
   * workflow refuses (e.g. `ASYNCJOB_ERR_CANCEL_UNSUPPORTED`), {@link OperationEndedError}
   * (`ASYNCJOB_ERR_OPERATION_FINAL`) when the operation has ended. Accepted means the intent is recorded; the
   * provider's confirmation comes later (`cancelled`, or `succeeded`/`failed` if the job ended first, X2).
   * `AsyncJobUpdateTimeout` when no worker takes the request within `acceptTimeoutMs`: it may still be applied.
   */
  async cancel(
    operationId: string,
    request: CancelRequest,
    options: UpdateOptions = {},
  ): Promise<MessageAnswer & { accepted: true }> {
    refuseClaimedCallers({ requestedBy: request?.requestedBy });
    const parsed = cancelRequestSchema.safeParse(request);
    if (!parsed.success) throw new AsyncJobInputError(zodIssues(parsed.error.issues));
    return this.update(operationId, options, () =>
      workflowHandle(this.ctx, operationId).startUpdate(cancelUpdate, {
        args: [parsed.data],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      }),
    );
  }

  /**
   * Answers the open escalation (A2) and waits for the workflow's answer (the `decideOperation` update).
   * Throws {@link AsyncJobInputError} for an incomplete decision, {@link AsyncJobRequestRefused} when the
   * workflow refuses it (`ASYNCJOB_ERR_OPTION_NOT_OFFERED`, `..._OUT_OF_BOUNDS`, `..._TOO_LATE`, the decider
   * policy's `ASYNCJOB_ERR_DECIDER_NOT_ALLOWED`, `ASYNCJOB_ERR_SIGNATURE_REQUIRED`, `..._SIGNATURE_INVALID`, ...) and
   * {@link OperationEndedError} when the operation has ended; `AsyncJobUpdateTimeout` as for {@link cancel}.
   */
  async decide(
    operationId: string,
    decision: Decision,
    options: UpdateOptions = {},
  ): Promise<MessageAnswer & { accepted: true }> {
    refuseClaimedCallers({ approvedBy: (decision as { approvedBy?: unknown } | undefined)?.approvedBy });
    const parsed = decisionSchema.safeParse(decision);
    if (!parsed.success) throw new AsyncJobInputError(zodIssues(parsed.error.issues));
    return this.update(operationId, options, () =>
      workflowHandle(this.ctx, operationId).startUpdate(decideUpdate, {
        args: [parsed.data],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      }),
    );
  }

  /**
   * Asks a human for more time or status checks (G2), for callers without approval authority (AI agents): the
   * operation escalates with reason `extension_requested` (or the request joins the escalation already open) and
   * the answer comes at once; a human grants it with `decide` (`extend`), declines it (`keep_bounds`) or stops the
   * job. The requester can never approve its own request, in any spelling (`ASYNCJOB_ERR_SELF_APPROVAL`, D1).
   * Throws {@link AsyncJobRequestRefused} for a final operation or one without a running provider job
   * (`ASYNCJOB_ERR_EXTENSION_NOT_APPLICABLE`), for more than any decider could grant
   * (`ASYNCJOB_ERR_EXTENSION_BEYOND_GRANT`, naming the bound) and for too many requests on the operation in the
   * decider policy's window (`ASYNCJOB_ERR_EXTENSION_RATE_LIMITED`, D4); `AsyncJobUpdateTimeout` as for {@link cancel}.
   */
  async requestExtension(
    operationId: string,
    request: ExtensionRequest,
    options: UpdateOptions = {},
  ): Promise<MessageAnswer & { accepted: true }> {
    refuseClaimedCallers({ requestedBy: request?.requestedBy });
    const parsed = extensionRequestSchema.safeParse(request);
    if (!parsed.success) throw new AsyncJobInputError(zodIssues(parsed.error.issues));
    return this.update(operationId, options, () =>
      workflowHandle(this.ctx, operationId).startUpdate(extensionUpdate, {
        args: [parsed.data],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      }),
    );
  }

  /** Forwards a webhook hint (W1): the workflow reads the status now. Fire and forget; safe to repeat. */
  async signalWebhook(operationId: string, hint: WebhookHint): Promise<void> {
    const parsed = webhookHintSchema.safeParse(hint);
    if (!parsed.success) throw new AsyncJobInputError(zodIssues(parsed.error.issues));
    await call(this.ctx, operationId, () => workflowHandle(this.ctx, operationId).signal(webhookSignal, parsed.data));
  }

  /**
   * Waits until the operation ends or escalates (something to act on) and returns its summary (never the result
   * body): `localState` says which; an escalation comes with its reason and text. `untilFinal` waits through
   * escalations; `signal` and `timeoutMs` bound the wait (`AsyncJobAborted`, `AsyncJobWaitTimeout`). Follows
   * continue-as-new. Throws `OperationFailedError` if the workflow itself failed or was terminated.
   */
  async result(operationId: string, options: WaitOptions = {}): Promise<OperationSummary> {
    return waitForOutcome(this.ctx, operationId, options);
  }

  /**
   * The collected result's bytes, read from the artifact store on any machine that reaches it, as a stream that
   * fails with `ResultUnavailableError` (`mismatch`) unless they match the sha256 and size recorded when the result
   * was validated: keep nothing of it before it has ended without an error. Finds the result with {@link get} (a
   * query: a worker must answer); throws `ResultUnavailableError` when none is stored (`no_result`) or the store
   * cannot open it (`unreadable`). Read-only, safe to repeat.
   */
  async readResult(operationId: string, options: QueryOptions = {}): Promise<VerifiedResultStream> {
    const recorded = recordedResultOf(await this.get(operationId, options));
    this.artifacts ??= this.chooseArtifacts();
    return openVerifiedResult(this.artifacts, operationId, recorded);
  }

  /**
   * Each change of the operation's record, as an async iterator: `for await (const record of client.watch(id))`.
   * Ends after a final record, or an escalated one unless `untilFinal`; see `client/wait.ts`.
   */
  watch(operationId: string, options: WatchOptions = {}): AsyncGenerator<OperationRecord, void, undefined> {
    return watchOperation(this.ctx, operationId, options);
  }

  /** Lists operations by state, provider and escalation reason from the visibility store (`client/list.ts`). */
  async list(options: ListOptions = {}): Promise<OperationListing[]> {
    return listOperations(this.ctx, options);
  }

  /** Lists escalated operations (`AsyncJobState = "escalated"`, optionally one reason), running or closed, newest first. */
  async listEscalated(options: ListEscalatedOptions = {}): Promise<EscalatedOperation[]> {
    return listEscalated(this.ctx, options);
  }

  /** Describes the operation from Temporal's records (execution status, search attributes, memo, failure): no worker needed. */
  async describeOperation(operationId: string): Promise<OperationDescription> {
    return describeOperation(this.ctx, operationId);
  }

  /**
   * Sends an update and waits for the workflow's answer. Only its acceptance is bounded (a worker must take it);
   * a refusal by a validator arrives as the update's failure and becomes {@link AsyncJobRequestRefused}
   * (`translate.ts`), a refusal by the main loop as an answer that is not accepted.
   */
  private async update(
    operationId: string,
    options: UpdateOptions,
    send: () => Promise<WorkflowUpdateHandle<MessageAnswer>>,
  ): Promise<MessageAnswer & { accepted: true }> {
    let answer: MessageAnswer;
    try {
      const sent = await workerCall(
        this.ctx,
        operationId,
        'update',
        options.acceptTimeoutMs ?? DEFAULT_ACCEPT_TIMEOUT_MS,
        send,
      );
      answer = await call(this.ctx, operationId, () => sent.result());
    } catch (err) {
      if (err instanceof OperationNotFoundError) throw await this.endedOrMissing(operationId, err);
      throw err;
    }
    if (!answer.accepted) {
      const code = isErrorCode(answer.code) ? answer.code : 'ASYNCJOB_ERR_REFUSED';
      throw new AsyncJobRequestRefused(operationId, code, answer.message);
    }
    return answer;
  }

  /** An update found no running workflow: {@link OperationEndedError} if the operation exists and has ended. */
  private async endedOrMissing(operationId: string, notFound: OperationNotFoundError): Promise<Error> {
    let d;
    try {
      d = await describeRaw(this.ctx, operationId);
    } catch {
      return notFound;
    }
    if (d.status.name === 'RUNNING') return notFound;
    const failure = await workflowFailure(this.ctx, operationId, d.runId, d.status.name);
    return new OperationEndedError(operationId, d.status.name, d.typedSearchAttributes.get(stateKey) ?? null, failure);
  }
}
