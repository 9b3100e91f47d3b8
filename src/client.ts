/**
 * The typed asyncjob client over the Temporal client: what backend services, agents and the CLI call.
 *
 * One operation is one workflow (workflow ID = operation ID). `start` validates the request, computes its
 * fingerprint, a fresh idempotency token and trace ID, and starts the workflow; a second start with the same
 * request joins the existing operation, one with a changed request is refused (I2). Everything else goes
 * through the workflow's queries, updates and signals (`src/workflows/messages.ts`) or Temporal's visibility
 * store (search attributes), never around them.
 */
import { randomBytes } from 'node:crypto';
import {
  Client,
  Connection,
  isGrpcDeadlineError,
  isGrpcServiceError,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import { loadConfig } from './config';
import { type Decision, decisionSchema, type OpenEscalation } from './core/escalation';
import { newIdempotencyToken, requestFingerprint } from './core/fingerprint';
import { escalationReasonSchema, type EscalationReason, type LocalState } from './core/journal';
import { type OperationRecord, type RecordedTransition, type StartRequest, startRequestSchema } from './core/operation';
import { temporalConnectionSettings } from './client/connection';
import {
  AsyncJobConnectionError,
  AsyncJobInputError,
  AsyncJobQueryTimeout,
  AsyncJobRequestRefused,
  FingerprintMismatchError,
  OperationFailedError,
  OperationNotFoundError,
  parseRefusal,
  type InputIssue,
} from './client/errors';
import type { AsyncJobWorkflow } from './workflows/async-job-workflow';
import {
  cancelRequestSchema,
  cancelUpdate,
  decideUpdate,
  escalationQuery,
  historyQuery,
  stateQuery,
  webhookHintSchema,
  webhookSignal,
  type AsyncJobWorkflowInput,
  type CancelRequest,
  type MessageAnswer,
  type OperationSummary,
  type WebhookHint,
} from './workflows/messages';
import { escalationReasonKey, providerJobIdKey, providerKey, resultDeadlineKey, stateKey } from './workflows/search-attributes';
import { DEFAULT_TASK_QUEUE } from './worker';

export * from './client/errors';
export { temporalConnectionSettings, type TemporalConnectionSettings } from './client/connection';

/** The workflow type name the worker registers. */
export const WORKFLOW_TYPE = 'AsyncJobWorkflow';

/** Options for {@link AsyncJobClient}. */
export interface AsyncJobClientOptions {
  client: Client;
  /** Task queue of the workflows (default {@link DEFAULT_TASK_QUEUE}). */
  taskQueue?: string;
  /** For messages only; the namespace is the one `client` was made with. */
  namespace?: string;
  /** A connection {@link AsyncJobClient.close} closes (set by {@link AsyncJobClient.connect}). */
  ownedConnection?: Connection;
}

/** Options for {@link AsyncJobClient.connect}. */
export interface AsyncJobConnectOptions {
  /** The environment to read (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Overrides `ASYNCJOB_TASK_QUEUE`. */
  taskQueue?: string;
  /** How long to keep trying to reach the server before {@link AsyncJobConnectionError} (default 10 000 ms). */
  connectTimeoutMs?: number;
}

/** Options for {@link AsyncJobClient.start}. */
export interface StartOptions {
  /** Continue as new past this many history events (tests use small values). */
  historyEventLimit?: number;
}

/** The open escalation as the workflow answers it, with its rendered text (E2). */
export type EscalationView = OpenEscalation & { text: string };

/** An escalated operation as the visibility store lists it (search attributes, so closed ones are listed too). */
export interface EscalatedOperation {
  operationId: string;
  reason: EscalationReason | null;
  provider: string | null;
  jobId: string | null;
  /** Temporal's execution status: `RUNNING` while a decision can still arrive. */
  executionStatus: string;
}

/** An operation as Temporal describes it: no query, so it works without a worker and for closed ones. */
export interface OperationDescription {
  operationId: string;
  runId: string;
  /** Temporal's execution status (`RUNNING`, `COMPLETED`, `FAILED`, `TERMINATED`, ...). */
  executionStatus: string;
  startedAt: string;
  closedAt: string | null;
  /** From the search attributes the workflow keeps current. */
  localState: LocalState | null;
  provider: string | null;
  jobId: string | null;
  escalationReason: EscalationReason | null;
  resultDeadlineAt: string | null;
  /** From the memo written at start (I2). */
  requestFingerprint: string | null;
  traceId: string | null;
}

/** Options of the query methods. */
export interface QueryOptions {
  /** How long to wait for a worker to answer (default 30 000 ms). */
  timeoutMs?: number;
}

const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/** Options for {@link AsyncJobClient.listEscalated}. */
export interface ListEscalatedOptions {
  reason?: EscalationReason;
  /** At most this many (default 100). */
  limit?: number;
}

/**
 * A started (or joined) operation. `joined` is true when the operation already existed with the same request
 * (nothing new was started); `traceId` is then the existing operation's.
 */
export class OperationHandle {
  constructor(
    private readonly client: AsyncJobClient,
    readonly operationId: string,
    readonly runId: string,
    readonly joined: boolean,
    readonly requestFingerprint: string,
    readonly traceId: string,
    /** The underlying Temporal handle, for anything this class does not cover. */
    readonly workflow: WorkflowHandle<typeof AsyncJobWorkflow>,
  ) {}

  /** Waits for the operation's final summary. */
  result(): Promise<OperationSummary> {
    return this.client.result(this.operationId);
  }

  /** The operation's current record (a query; no provider call). */
  state(): Promise<OperationRecord> {
    return this.client.get(this.operationId);
  }

  /** The open escalation, or null. */
  escalation(): Promise<EscalationView | null> {
    return this.client.escalation(this.operationId);
  }

  /** Asks for cancellation at the provider (see {@link AsyncJobClient.cancel}). */
  cancel(request: CancelRequest): Promise<MessageAnswer & { accepted: true }> {
    return this.client.cancel(this.operationId, request);
  }

  /** Answers the open escalation (see {@link AsyncJobClient.decide}). */
  decide(decision: Decision): Promise<MessageAnswer & { accepted: true }> {
    return this.client.decide(this.operationId, decision);
  }
}

function zodIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): InputIssue[] {
  return issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/** gRPC status codes that mean "we could not talk to the server as ourselves". */
const CONNECTION_GRPC_CODES = new Set([14 /* UNAVAILABLE */, 16 /* UNAUTHENTICATED */, 7 /* PERMISSION_DENIED */]);

function isConnectionFailure(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e) && CONNECTION_GRPC_CODES.has(e.code)) return true;
  }
  return false;
}

function memoString(description: WorkflowExecutionDescription, key: string): string | null {
  const value = description.memo?.[key];
  return typeof value === 'string' ? value : null;
}

/** A fresh W3C trace ID: 32 lowercase hex, never all zeros (T1). */
function newTraceId(): string {
  for (;;) {
    const id = randomBytes(16).toString('hex');
    if (!/^0+$/.test(id)) return id;
  }
}

/** Starts, observes and controls operations. Safe to share; every method is one or two Temporal calls. */
export class AsyncJobClient {
  private readonly client: Client;
  private readonly taskQueue: string;
  private readonly ownedConnection: Connection | undefined;
  /** The namespace the operations live in. */
  readonly namespace: string;

  constructor(options: AsyncJobClientOptions) {
    this.client = options.client;
    this.taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
    this.namespace = options.namespace ?? options.client.options.namespace;
    this.ownedConnection = options.ownedConnection;
  }

  /**
   * Connects using Temporal's environment conventions (see `src/client/connection.ts`). Throws `ConfigError`
   * for a bad environment, `TlsFileError` for an unreadable TLS file and {@link AsyncJobConnectionError} when the
   * server cannot be reached. Call {@link close} when done.
   */
  static async connect(options: AsyncJobConnectOptions = {}): Promise<AsyncJobClient> {
    const config = loadConfig(options.env ?? process.env);
    const settings = temporalConnectionSettings(config);
    let connection: Connection;
    try {
      connection = await Connection.connect({
        address: settings.address,
        connectTimeout: options.connectTimeoutMs ?? 10_000,
        ...(settings.tls ? { tls: settings.tls } : {}),
        ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
      });
    } catch (err) {
      throw new AsyncJobConnectionError(settings.address, { cause: err });
    }
    return new AsyncJobClient({
      client: new Client({ connection, namespace: settings.namespace }),
      taskQueue: options.taskQueue ?? config.ASYNCJOB_TASK_QUEUE,
      namespace: settings.namespace,
      ownedConnection: connection,
    });
  }

  /** Closes the connection made by {@link connect}; a client given from outside is left open. */
  async close(): Promise<void> {
    await this.ownedConnection?.close();
  }

  /**
   * Starts an operation, or joins it when it already exists with the same request (idempotent per operation ID).
   *
   * Validates `request` first (throws {@link AsyncJobInputError} naming every bad field; nothing is started).
   * The workflow ID is the operation ID; the memo holds the request fingerprint and trace ID. If a workflow with
   * this ID exists (running or closed) with a different fingerprint or provider, throws
   * {@link FingerprintMismatchError} (I2) and leaves it as it is.
   */
  async start(request: StartRequest, options: StartOptions = {}): Promise<OperationHandle> {
    const parsed = startRequestSchema.safeParse(request);
    const issues = parsed.success ? [] : zodIssues(parsed.error.issues);
    // Absolute deadlines in the past are caught here so the caller hears of them before anything starts.
    const nowMs = Date.now();
    for (const field of ['createDeadline', 'resultDeadline'] as const) {
      const deadline = parsed.success ? parsed.data[field] : undefined;
      if (deadline && 'atMs' in deadline && deadline.atMs <= nowMs) issues.push({ path: `${field}.atMs`, message: 'must be in the future' });
    }
    if (!parsed.success || issues.length > 0) throw new AsyncJobInputError(issues);
    const req = parsed.data;

    const fingerprint = requestFingerprint(req.payload);
    const token = newIdempotencyToken(randomBytes(32));
    if (token.kind !== 'ok') throw new Error(token.message);
    const traceId = newTraceId();
    const input: AsyncJobWorkflowInput = {
      request: req,
      idempotencyToken: token.token,
      traceId,
      ...(options.historyEventLimit !== undefined ? { historyEventLimit: options.historyEventLimit } : {}),
      storeCalls: 'local',
    };

    let handle: WorkflowHandle<typeof AsyncJobWorkflow>;
    try {
      handle = await this.client.workflow.start<typeof AsyncJobWorkflow>(WORKFLOW_TYPE, {
        workflowId: req.operationId,
        taskQueue: this.taskQueue,
        args: [input],
        // A running operation with this ID is joined (and checked below); a closed one is never restarted.
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        memo: { requestFingerprint: fingerprint, traceId },
        typedSearchAttributes: [
          { key: stateKey, value: 'create_pending' },
          { key: providerKey, value: req.provider },
          // A relative deadline as the client sees it; the workflow publishes its exact one with the next state.
          { key: resultDeadlineKey, value: new Date('atMs' in req.resultDeadline ? req.resultDeadline.atMs : nowMs + req.resultDeadline.afterMs) },
        ],
        staticSummary: `asyncjob ${req.provider} ${req.operationId}`,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw this.translate(err, req.operationId);
      handle = this.client.workflow.getHandle<typeof AsyncJobWorkflow>(req.operationId);
    }

    const description = await this.describeRaw(req.operationId, handle);
    const existingFingerprint = memoString(description, 'requestFingerprint') ?? '(none recorded)';
    const existingProvider = description.typedSearchAttributes.get(providerKey);
    if (existingFingerprint !== fingerprint) throw new FingerprintMismatchError(req.operationId, existingFingerprint, fingerprint);
    if (existingProvider !== undefined && existingProvider !== req.provider) {
      throw new FingerprintMismatchError(req.operationId, `provider ${existingProvider}`, `provider ${req.provider}`);
    }
    const existingTrace = memoString(description, 'traceId') ?? traceId;
    return new OperationHandle(this, req.operationId, description.runId, existingTrace !== traceId, fingerprint, existingTrace, handle);
  }

  /**
   * The operation's current record: local and remote state, counters, budgets, schedule. A query: needs a worker;
   * throws {@link AsyncJobQueryTimeout} when none answers within `timeoutMs` (default 30 000).
   */
  async get(operationId: string, options: QueryOptions = {}): Promise<OperationRecord> {
    return this.query(operationId, options, () => this.handle(operationId).query(stateQuery));
  }

  /** The open escalation with its text and offered options, or null (a query, see {@link get}). */
  async escalation(operationId: string, options: QueryOptions = {}): Promise<EscalationView | null> {
    return this.query(operationId, options, () => this.handle(operationId).query(escalationQuery));
  }

  /** The transitions kept in the record, oldest first (the full journal is in the store). A query, see {@link get}. */
  async history(operationId: string, options: QueryOptions = {}): Promise<RecordedTransition[]> {
    return this.query(operationId, options, () => this.handle(operationId).query(historyQuery));
  }

  /**
   * Asks for cancellation at the provider (X1) and waits for the workflow's answer (the `cancelOperation`
   * update). Throws {@link AsyncJobInputError} for a bad request and {@link AsyncJobRequestRefused} when the
   * workflow refuses (e.g. `ASYNCJOB_ERR_CANCEL_UNSUPPORTED`). Accepted means the intent is recorded; the
   * provider's confirmation comes later (`cancelled`, or `succeeded`/`failed` if the job ended first, X2).
   */
  async cancel(operationId: string, request: CancelRequest): Promise<MessageAnswer & { accepted: true }> {
    const parsed = cancelRequestSchema.safeParse(request);
    if (!parsed.success) throw new AsyncJobInputError(zodIssues(parsed.error.issues));
    return this.update(operationId, () => this.handle(operationId).executeUpdate(cancelUpdate, { args: [parsed.data] }));
  }

  /**
   * Answers the open escalation (A2) and waits for the workflow's answer (the `decideOperation` update).
   * Throws {@link AsyncJobInputError} for an incomplete decision and {@link AsyncJobRequestRefused} when the
   * workflow refuses it (`ASYNCJOB_ERR_OPTION_NOT_OFFERED`, `..._OUT_OF_BOUNDS`, `..._TOO_LATE`, ...).
   */
  async decide(operationId: string, decision: Decision): Promise<MessageAnswer & { accepted: true }> {
    const parsed = decisionSchema.safeParse(decision);
    if (!parsed.success) throw new AsyncJobInputError(zodIssues(parsed.error.issues));
    return this.update(operationId, () => this.handle(operationId).executeUpdate(decideUpdate, { args: [parsed.data] }));
  }

  /** Forwards a webhook hint (W1): the workflow reads the status now. Fire and forget; safe to repeat. */
  async signalWebhook(operationId: string, hint: WebhookHint): Promise<void> {
    const parsed = webhookHintSchema.safeParse(hint);
    if (!parsed.success) throw new AsyncJobInputError(zodIssues(parsed.error.issues));
    await this.call(operationId, () => this.handle(operationId).signal(webhookSignal, parsed.data));
  }

  /**
   * Waits for the operation to end and returns its summary (never the result body; that is in artifact storage).
   * Follows continue-as-new. Throws {@link OperationFailedError} if the workflow itself failed or was terminated.
   */
  async result(operationId: string): Promise<OperationSummary> {
    return this.call(operationId, async () => {
      try {
        return await this.handle(operationId).result();
      } catch (err) {
        if (err instanceof WorkflowFailedError) throw new OperationFailedError(operationId, err.cause?.message ?? err.message, { cause: err });
        throw err;
      }
    });
  }

  /**
   * Lists escalated operations from the visibility store (`AsyncJobState = "escalated"`, optionally one
   * reason), newest first. Search attributes, not queries: closed operations are listed too and no worker is
   * needed. Visibility is eventually consistent (a second or so behind).
   */
  async listEscalated(options: ListEscalatedOptions = {}): Promise<EscalatedOperation[]> {
    const issues: InputIssue[] = [];
    if (options.reason !== undefined && !escalationReasonSchema.safeParse(options.reason).success) {
      issues.push({ path: 'reason', message: `must be one of ${escalationReasonSchema.options.join(', ')}` });
    }
    const limit = options.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) issues.push({ path: 'limit', message: 'must be an integer from 1 to 10000' });
    if (issues.length > 0) throw new AsyncJobInputError(issues);
    // Values are checked against closed enums above, so they are safe to put in the query text.
    const query = [
      `WorkflowType = "${WORKFLOW_TYPE}"`,
      `${stateKey.name} = "escalated"`,
      ...(options.reason !== undefined ? [`${escalationReasonKey.name} = "${options.reason}"`] : []),
    ].join(' AND ');
    const out: EscalatedOperation[] = [];
    try {
      for await (const info of this.client.workflow.list({ query, pageSize: Math.min(limit, 1000) })) {
        out.push({
          operationId: info.workflowId,
          reason: (info.typedSearchAttributes.get(escalationReasonKey) as EscalationReason | undefined) ?? null,
          provider: info.typedSearchAttributes.get(providerKey) ?? null,
          jobId: info.typedSearchAttributes.get(providerJobIdKey) ?? null,
          executionStatus: info.status.name,
        });
        if (out.length >= limit) break;
      }
    } catch (err) {
      throw this.translate(err, '(list)');
    }
    return out;
  }

  /** Describes the operation from Temporal's records (execution status, search attributes, memo): no worker needed. */
  async describeOperation(operationId: string): Promise<OperationDescription> {
    const d = await this.describeRaw(operationId, this.handle(operationId));
    const sa = d.typedSearchAttributes;
    return {
      operationId: d.workflowId,
      runId: d.runId,
      executionStatus: d.status.name,
      startedAt: d.startTime.toISOString(),
      closedAt: d.closeTime ? d.closeTime.toISOString() : null,
      localState: (sa.get(stateKey) as LocalState | undefined) ?? null,
      provider: sa.get(providerKey) ?? null,
      jobId: sa.get(providerJobIdKey) ?? null,
      escalationReason: (sa.get(escalationReasonKey) as EscalationReason | undefined) ?? null,
      resultDeadlineAt: sa.get(resultDeadlineKey)?.toISOString() ?? null,
      requestFingerprint: memoString(d, 'requestFingerprint'),
      traceId: memoString(d, 'traceId'),
    };
  }

  private handle(operationId: string): WorkflowHandle<typeof AsyncJobWorkflow> {
    return this.client.workflow.getHandle<typeof AsyncJobWorkflow>(operationId);
  }

  private describeRaw(operationId: string, handle: WorkflowHandle<typeof AsyncJobWorkflow>): Promise<WorkflowExecutionDescription> {
    return this.call(operationId, () => handle.describe());
  }

  private async call<T>(operationId: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.translate(err, operationId);
    }
  }

  private async query<T>(operationId: string, options: QueryOptions, fn: () => Promise<T>): Promise<T> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    try {
      return await this.client.withDeadline(Date.now() + timeoutMs, fn);
    } catch (err) {
      if (isGrpcDeadlineError(err)) throw new AsyncJobQueryTimeout(operationId, timeoutMs, { cause: err });
      throw this.translate(err, operationId);
    }
  }

  private async update(operationId: string, fn: () => Promise<MessageAnswer>): Promise<MessageAnswer & { accepted: true }> {
    let answer: MessageAnswer;
    try {
      answer = await fn();
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        const refusal = parseRefusal(err.cause?.message ?? err.message);
        throw new AsyncJobRequestRefused(operationId, refusal.code, refusal.message);
      }
      throw this.translate(err, operationId);
    }
    if (!answer.accepted) throw new AsyncJobRequestRefused(operationId, answer.code, answer.message);
    return answer;
  }

  /** Maps the SDK's errors to ours where a caller acts differently on them; anything else passes through. */
  private translate(err: unknown, operationId: string): unknown {
    if (err instanceof WorkflowNotFoundError) return new OperationNotFoundError(operationId);
    if (isConnectionFailure(err)) {
      const connection = this.client.connection;
      return new AsyncJobConnectionError(connection instanceof Connection ? connection.options.address : 'the configured address', { cause: err });
    }
    if (err instanceof ServiceError && /not found/i.test(err.message) && /workflow/i.test(err.message)) return new OperationNotFoundError(operationId);
    return err;
  }
}
