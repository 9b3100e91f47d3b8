/**
 * What every provider-calling activity shares: the dependencies, the step context, sending one built request
 * through the provider's HTTP client (trace headers on every call, T1; the credential added by the client for
 * the provider's origin only), and turning the exchange into the adapter's `ProviderAnswer` or, when no answer
 * arrived, into an observation that says how the exchange ended.
 *
 * Every provider request passes here (`sendOnce`, and `withProviderSession` + `decorateForOperation` for the
 * result download), so two contract-wide rules hold for every action:
 * - decoration: the contract's `headers` and `query` are added to the built request (`providers/decorate.ts`);
 * - V3: with `cookies: true`, the operation's provider session (a cookie jar) is loaded from the store before
 *   the call, given to the HTTP client for that one call, and saved back when it changed. It lives only in the
 *   activity and the store's `provider_sessions` table: never in the record, the journal, an observation, a
 *   log line or anything returned to the workflow (the exchange carries `cookie`/`set-cookie` redacted).
 */
import type { DeciderPolicyInForce } from '../core/decider-policy';
import { hostname } from 'node:os';
import { type Logger } from '@temporalio/common';
import {
  ProviderSession,
  type HttpClient,
  type HttpExchange,
  type HttpMethod,
  type HttpSession,
} from '../adapters/http';
import {
  type ProviderAdapter,
  type ProviderAnswer,
  type ProviderRequest,
  type BuildResult,
  type RequestFacts,
} from '../adapters/providers';
import { answerSignal } from '../adapters/providers/answer-signal';
import { decorateBuilt, type OperationFacts } from '../adapters/providers/decorate';
import { type ProviderRegistry, type RegisteredProvider } from '../adapters/providers/registry';
import { type ArtifactStore } from '../adapters/artifacts/artifact-store';
import { type OperationStore } from '../adapters/store/operation-store';
import { type Action } from '../core/journal';
import { type Observation } from '../core/observation';
import { type OperationRecord } from '../core/operation';
import { DEFAULT_POLL_LOOP_LIMITS, type PollLoopLimits } from '../core/poll-loop';
import { type StepContext } from '../core/step';
import { whileHeartbeating } from './heartbeat';
import { withRequestSlot } from './request-pacer';

/** Temporal's `Logger`, narrowed to what activities call; `meta` never holds a secret (URLs and headers come redacted). */
export type ActivityLogger = Pick<Logger, 'info' | 'warn'>;

/** The dependencies of the activities. */
export interface ActivityDependencies {
  store: OperationStore;
  providers: ProviderRegistry;
  artifacts: ArtifactStore;
  /** Epoch ms; defaults to `Date.now`. */
  clock?: () => number;
  logger?: ActivityLogger;
  /** Results up to this size are parsed to count records and batch items (R3); larger ones are not. Default 8 MiB. */
  maxParseBytes?: number;
  /**
   * Status reads a short wait apart stay in one activity (`pollStatus`, `core/poll-loop.ts`); `false`: one
   * activity and one durable timer per read. Given to workflows through `describeProvider`. Default
   * `DEFAULT_POLL_LOOP_LIMITS`.
   */
  pollLoop?: PollLoopLimits | false;
  /** The decider policy (D2) each operation started here keeps; absent: none (anyone G2 does not refuse decides). */
  deciders?: DeciderPolicyInForce;
}

/** Dependencies with defaults applied. */
export interface ActivityContext {
  store: OperationStore;
  providers: ProviderRegistry;
  artifacts: ArtifactStore;
  clock: () => number;
  logger: ActivityLogger;
  maxParseBytes: number;
  actor: string;
  pollLoop?: PollLoopLimits;
  deciders?: DeciderPolicyInForce;
}

const SILENT: ActivityLogger = { info: () => undefined, warn: () => undefined };

/** Applies the defaults. */
export function activityContext(deps: ActivityDependencies): ActivityContext {
  return {
    store: deps.store,
    providers: deps.providers,
    artifacts: deps.artifacts,
    clock: deps.clock ?? (() => Date.now()),
    logger: deps.logger ?? SILENT,
    maxParseBytes: deps.maxParseBytes ?? 8 * 1024 * 1024,
    actor: `worker:${hostname()}`.slice(0, 200),
    ...(deps.pollLoop !== false ? { pollLoop: deps.pollLoop ?? DEFAULT_POLL_LOOP_LIMITS } : {}),
    ...(deps.deciders !== undefined ? { deciders: deps.deciders } : {}),
  };
}

/** The step context of one activity call. */
export function stepContext(ctx: ActivityContext, provider: RegisteredProvider, random: number): StepContext {
  return {
    nowMs: ctx.clock(),
    random,
    actor: ctx.actor,
    capabilities: provider.facts.capabilities,
    reconciliation: provider.facts.reconciliation,
  };
}

/** The HTTP request of a built provider request, carrying the operation's trace ID (T1) and, for V3, its session. */
export function httpRequestOf(
  request: ProviderRequest,
  traceId: string,
  session?: HttpSession,
): {
  method: HttpMethod;
  url: string;
  headers: Record<string, string>;
  json?: unknown;
  body?: string;
  traceId: string;
  session?: HttpSession;
} {
  return {
    method: request.method as HttpMethod,
    url: request.url,
    headers: request.headers,
    ...(request.json !== undefined ? { json: request.json } : {}),
    ...(request.body !== undefined ? { body: request.body } : {}),
    traceId,
    ...(session !== undefined ? { session } : {}),
  };
}

/** The facts of an operation a contract-wide header may carry (`providers/decorate.ts`). */
function operationFacts(record: OperationRecord, nowMs: number): OperationFacts {
  return {
    operationId: record.operationId,
    traceId: record.traceId,
    clientReference: record.clientReference ?? record.operationId,
    token: record.idempotencyToken,
    nowMs,
    firstSentAtMs: record.createdAtMs,
  };
}

/**
 * What a call's request template may name of the operation (`{token}`, `{operationId}`...), for the builders: with
 * the operation variables as recorded (`{version}`, `{+scope}`; defaults applied, C5). Every builder call of every
 * activity (create, reconcile, status, cancel, result, token paging) takes its facts from here.
 */
export function requestFactsOf(record: OperationRecord, nowMs: number): RequestFacts {
  const facts = operationFacts(record, nowMs);
  return record.variables !== undefined ? { ...facts, variables: record.variables } : facts;
}

/**
 * A built request with the contract's `headers` and `query` added (every action, every URL, including poll and
 * result URLs read from answers). A refusal stays a refusal; decoration may refuse too (a header value with a
 * line break), and then nothing is sent.
 */
export function decorateForOperation(
  ctx: ActivityContext,
  adapter: ProviderAdapter,
  record: OperationRecord,
  built: BuildResult,
): BuildResult {
  return decorateBuilt(adapter.contract, built, operationFacts(record, ctx.clock()));
}

/**
 * V3: runs one provider call with the operation's provider session when the contract keeps cookies
 * (`cookies: true`); otherwise with none. The session is read from the store before the call and written back
 * after it (also when the call throws) only when it changed: a read that only sends cookies writes nothing.
 *
 * A session that cannot be saved (over the store's size limit, a store fault) is logged, by code only, and the
 * call's outcome stands: failing the activity would send the request again (a second cancel, a second counted
 * status read), which is worse than a provider asking for a new session.
 */
export async function withProviderSession<T>(
  ctx: ActivityContext,
  adapter: ProviderAdapter,
  record: OperationRecord,
  call: (session: HttpSession | undefined) => Promise<T>,
): Promise<T> {
  if (adapter.contract?.cookies !== true) return call(undefined);
  const stored = await ctx.store.loadProviderSession(record.operationId);
  const session = ProviderSession.fromJSON(stored?.json, adapter.baseUrl, { nowMs: ctx.clock });
  const before = session.toJSON();
  try {
    return await call(session);
  } finally {
    const after = session.toJSON();
    if (after !== before) {
      try {
        await ctx.store.saveProviderSession(record.operationId, after);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        ctx.logger.warn('provider session not saved', {
          operationId: record.operationId,
          provider: record.provider,
          error: typeof code === 'string' ? code : 'store_error',
        });
      }
    }
  }
}

/** The adapter's view of an exchange that ended with a response. */
function answerOf(exchange: HttpExchange): ProviderAnswer {
  const answer: ProviderAnswer = {
    status: exchange.status ?? 0,
    headers: exchange.headers,
    receivedAtMs: exchange.receivedAtMs,
    durationMs: exchange.durationMs,
  };
  if (exchange.bodyJson !== undefined) answer.bodyJson = exchange.bodyJson;
  if (exchange.bodyText !== undefined) answer.bodyText = exchange.bodyText;
  if (exchange.bodyParseError !== undefined) answer.bodyParseError = exchange.bodyParseError;
  if (exchange.providerRequestId !== undefined) answer.providerRequestId = exchange.providerRequestId;
  return answer;
}

/**
 * T4, B2: what a request resent once after its credential was renewed adds to its observation: both requests
 * counted, and the first answer (the provider's refusal of the credential) kept. Nothing for a request sent once.
 */
export function renewalOf(exchange: HttpExchange): Pick<Observation, 'requestsSent' | 'credentialRenewed'> {
  const first = exchange.rejectedAttempt;
  if (first === undefined) return {};
  const requestId = first.providerRequestId?.slice(0, 500);
  return {
    requestsSent: 2,
    credentialRenewed: {
      httpStatus: first.status,
      ...(requestId !== undefined ? { providerRequestId: requestId } : {}),
    },
  };
}

/**
 * T4: whether sending this call twice cannot act twice at the provider, so a 401 may renew the credential and
 * resend it once: reads and lookups, a create the provider recognises by its token (or an idempotent method), an
 * idempotent cancel.
 */
function safeToResend(adapter: ProviderAdapter, action: Action): boolean {
  if (action === 'create') return adapter.capabilities.sameTokenResend === true;
  if (action === 'cancel') return adapter.cancel.supported && adapter.cancel.idempotent;
  return action === 'status' || action === 'collect' || action === 'reconcile';
}

/** The observation of an exchange that produced no usable response: its transport outcome and category, no status. */
export function transportObservation(action: Action, exchange: HttpExchange): Observation {
  return {
    action,
    transport: exchange.outcome,
    signal: answerSignal({ transport: exchange.outcome, errorCategory: exchange.errorCategory }),
    receivedAtMs: exchange.receivedAtMs,
    durationMs: exchange.durationMs,
    requestsSent: exchange.outcome === 'refused' ? 0 : 1,
    ...renewalOf(exchange),
    ...(exchange.errorCategory !== undefined ? { errorCategory: exchange.errorCategory } : {}),
    ...(exchange.providerRequestId !== undefined
      ? { providerRequestId: exchange.providerRequestId.slice(0, 500) }
      : {}),
  };
}

/** One outside call: the exchange and its observation. */
export interface CallOutcome<T> {
  exchange?: HttpExchange;
  observation: Observation;
  extra?: T;
}

/** The observation of a request not sent because its deadline had come (S3): nothing left, nothing counted. */
export function deadlinePassed(action: Action, nowMs: number): Observation {
  return {
    action,
    transport: 'refused',
    signal: 'refused',
    errorCategory: 'deadline_passed',
    receivedAtMs: nowMs,
    requestsSent: 0,
  };
}

/** Whether a request was not sent because its deadline came first ({@link deadlinePassed}). */
export function overtakenByDeadline(observation: Observation): boolean {
  return observation.transport === 'refused' && observation.errorCategory === 'deadline_passed';
}

/**
 * Sends a built request once (never retried here, B2) and interprets the answer; a refused build is recorded
 * as such and nothing is sent. The observation counts the one request it sent.
 *
 * `sendByMs` (epoch ms, the activity's clock) bounds the instant the request is written, not the instant it was
 * built: a session read, a pacer's turn, a connection or a busy event loop can pass between the two, and a
 * request the deadline has overtaken meanwhile is not written at all ({@link deadlinePassed}).
 */
export async function sendOnce(
  ctx: ActivityContext,
  http: HttpClient,
  adapter: ProviderAdapter,
  action: Action,
  built: BuildResult,
  record: OperationRecord,
  interpret: (answer: ProviderAnswer) => Observation,
  sendByMs = Number.POSITIVE_INFINITY,
): Promise<CallOutcome<never>> {
  built = decorateForOperation(ctx, adapter, record, built);
  if (built.kind === 'refused') {
    ctx.logger.warn('request refused before sending', {
      operationId: record.operationId,
      provider: record.provider,
      action,
      errorCategory: built.errorCategory,
    });
    return { observation: adapter.refusedObservation(action, built, ctx.clock()) };
  }
  // Heartbeat while the request is in flight, so a worker that dies mid-call is noticed within the heartbeat
  // timeout rather than the call's whole time limit; the workflow then plans the call again (B2). The request is
  // paced by the instant it is written (request-pacer.ts).
  const request = built.request;
  let overtaken = false;
  const exchange = await withRequestSlot((slot) =>
    whileHeartbeating(() =>
      withProviderSession(ctx, adapter, record, (session) =>
        http.send({
          ...httpRequestOf(request, record.traceId, session),
          onWritten: (writtenAtMs) => {
            overtaken = ctx.clock() >= sendByMs;
            return !overtaken && slot.written(writtenAtMs);
          },
          safeToResend: safeToResend(adapter, action),
          answerFormat: adapter.answerFormat?.(action, {
            ...(record.remote.pollReading !== undefined ? { pollReading: record.remote.pollReading } : {}),
            resend: record.reconcileBy === 'resend',
          }),
        }),
      ),
    ),
  );
  // Only a first write can be overtaken unsent; a resend after a renewed credential follows a request that left.
  if (overtaken && exchange.outcome === 'not_sent' && exchange.rejectedAttempt === undefined)
    return { observation: deadlinePassed(action, ctx.clock()) };
  const observation =
    exchange.outcome === 'response'
      ? { ...interpret(answerOf(exchange)), requestsSent: 1, ...renewalOf(exchange) }
      : transportObservation(action, exchange);
  ctx.logger.info('provider call', {
    operationId: record.operationId,
    provider: record.provider,
    action,
    method: exchange.request.method,
    url: exchange.request.url,
    transport: exchange.outcome,
    httpStatus: exchange.status,
    errorCategory: observation.errorCategory,
    providerRequestId: exchange.providerRequestId,
    durationMs: exchange.durationMs,
    ...(exchange.rejectedAttempt !== undefined ? { resentAfterStatus: exchange.rejectedAttempt.status } : {}),
  });
  return { exchange, observation };
}
