/**
 * Reading an operation's workflow history without a worker: following it as it grows (Temporal's long poll,
 * the same call `handle.result()` waits with), so a waiting caller wakes within moments of any change, and
 * reading the request a run was started with (for the join check).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Payload, WorkflowService } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { AsyncJobWorkflowInput, CarriedState } from '../workflows/messages';
import { stateKey } from '../workflows/search-attributes';
import { type ClientContext } from './context';
import { notFound, serverBusy } from './translate';
import { withLinkedSignal } from './wait-scope';

type HistoryResponse = Awaited<ReturnType<WorkflowService['getWorkflowExecutionHistory']>>;
/** One history event as the server sends it. */
export type HistoryEvent = NonNullable<NonNullable<HistoryResponse['history']>['events']>[number];

/** What one long poll brought. */
export interface HistoryBatch {
  /** The events (none when the server's long poll expired first). */
  events: HistoryEvent[];
  /**
   * The operation may be escalated now: the state the batch's events published last (the workflow publishes its
   * state as a search attribute, and a run starts with one) is `escalated` or could not be read, or the run
   * continued as new. A batch that published no state, or another one, cannot have escalated it.
   */
  mayHaveEscalated: boolean;
  /** The operation's workflow closed (not continued as new). */
  closed: boolean;
}

/**
 * The least time between two reads of a busy history: events that arrive meanwhile come in one batch, so a
 * follower of an operation polling every millisecond costs the server a few calls a second, not one per event.
 */
const MIN_READ_INTERVAL_MS = 250;

/** The `AsyncJobState` an event published (its upsert, or its run's start), null when unreadable, undefined when none. */
function publishedState(event: HistoryEvent): string | null | undefined {
  const attributes =
    event.upsertWorkflowSearchAttributesEventAttributes ?? event.workflowExecutionStartedEventAttributes;
  const payload = attributes?.searchAttributes?.indexedFields?.[stateKey.name];
  if (!payload) return undefined;
  try {
    const value: unknown = defaultPayloadConverter.fromPayload(payload);
    return typeof value === 'string' ? value : null;
  } catch {
    return null;
  }
}

/** Whether the state `events` published last is `escalated` or unreadable (see {@link HistoryBatch}). */
export function lastPublishedMayBeEscalated(events: readonly HistoryEvent[]): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const state = publishedState(events[i]!);
    if (state !== undefined) return state === null || state === 'escalated';
  }
  return false;
}

/** The longest pause before a long poll the server refused for load is asked again, ms. */
const MAX_BUSY_PAUSE_MS = 5_000;

/**
 * One long poll for history, asked again after a pause while the server refuses it for load (RESOURCE_EXHAUSTED:
 * the namespace's concurrent long polls are at their limit, 1,200 per frontend by default, which a caller waiting
 * on hundreds of operations at once reaches with two long polls per wait): the waits are then paced by the server,
 * none fails. The pause doubles from 100 ms to {@link MAX_BUSY_PAUSE_MS}, each drawn at random in its upper half
 * (so the refused polls do not come back together); the caller's signal ends it. Hand-written: the SDK's own retry
 * of this code gives up after a few attempts, and a wait outlives any count of them.
 */
async function longPoll(
  ctx: ClientContext,
  signal: AbortSignal,
  request: Parameters<WorkflowService['getWorkflowExecutionHistory']>[0],
): Promise<HistoryResponse> {
  const { client } = ctx;
  for (let attempt = 0; ; attempt++) {
    try {
      return await withLinkedSignal(signal, (linked) =>
        client.withAbortSignal(linked, () => client.workflowService.getWorkflowExecutionHistory(request)),
      );
    } catch (err) {
      if (notFound(err) && !signal.aborted) throw await whatIsNotFound(ctx, request.execution?.workflowId ?? '', err);
      if (!serverBusy(err) || signal.aborted) throw err;
      const ceilingMs = Math.min(MAX_BUSY_PAUSE_MS, 100 * 2 ** Math.min(attempt, 10));
      await sleep(ceilingMs / 2 + Math.random() * (ceilingMs / 2), undefined, { signal });
    }
  }
}

/**
 * The error of a history read the server answered NOT_FOUND, as the SDK's own describe tells it: an unknown
 * namespace (`NamespaceNotFoundError`, from the status details the raw call leaves undecoded) or an unknown
 * workflow (`WorkflowNotFoundError`). Asked only on that answer; the read's own error if the describe succeeds.
 */
async function whatIsNotFound(ctx: ClientContext, workflowId: string, err: unknown): Promise<unknown> {
  try {
    await ctx.client.workflow.getHandle(workflowId).describe();
  } catch (described) {
    return described;
  }
  return err;
}

/**
 * Follows the history of an operation's workflow from its first event, through continue-as-new: of run `runId`, or
 * without one of the latest run when the follower starts (the server's page token holds the run after that).
 */
export class HistoryFollower {
  private token: Uint8Array | undefined;
  private closed = false;
  /** When the last read was sent (a read that waited at the server for events needs no pause after it). */
  private lastReadAtMs = 0;

  constructor(
    private readonly ctx: ClientContext,
    readonly operationId: string,
    private runId?: string,
    private readonly minIntervalMs = MIN_READ_INTERVAL_MS,
  ) {}

  /**
   * The next events of the run, waiting at the server until there are some (or its long poll expires). Errors
   * are the SDK's, untranslated: the caller knows whether it aborted the call itself.
   */
  async next(signal: AbortSignal): Promise<HistoryBatch> {
    if (this.closed) return { events: [], mayHaveEscalated: false, closed: true };
    const wait = this.lastReadAtMs + this.minIntervalMs - Date.now();
    if (wait > 0) await sleep(wait, undefined, { signal });
    this.lastReadAtMs = Date.now();
    const response = await longPoll(this.ctx, signal, {
      namespace: this.ctx.namespace,
      execution: { workflowId: this.operationId, ...(this.runId ? { runId: this.runId } : {}) },
      ...(this.token ? { nextPageToken: this.token } : {}),
      waitNewEvent: true,
      skipArchival: true,
    });
    const events = response.history?.events ?? [];
    const continued = events.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)
      ?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (continued) {
      this.runId = continued;
      this.token = undefined;
      return { events, mayHaveEscalated: true, closed: false };
    }
    if (!response.nextPageToken || response.nextPageToken.length === 0) this.closed = true;
    else this.token = response.nextPageToken;
    return { events, mayHaveEscalated: lastPublishedMayBeEscalated(events), closed: this.closed };
  }
}

/** `HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT` of temporal.api.enums.v1. */
const CLOSE_EVENT_ONLY = 2;

/**
 * Waits until the operation's workflow has closed (not continued as new) and returns its close event: Temporal's
 * long poll on the close event, as the SDK's `handle.result()` waits, but each long poll on a fresh signal. The
 * SDK's own loop hands one signal to every long poll, and each adds an abort listener it never removes: a wait of
 * some minutes piled them up (Node's MaxListenersExceededWarning in the cluster run). Errors are the SDK's,
 * untranslated.
 */
export async function waitUntilClosed(
  ctx: ClientContext,
  operationId: string,
  signal: AbortSignal,
): Promise<HistoryEvent> {
  let runId: string | undefined;
  let token: Uint8Array | undefined;
  for (;;) {
    const response = await longPoll(ctx, signal, {
      namespace: ctx.namespace,
      execution: { workflowId: operationId, ...(runId ? { runId } : {}) },
      ...(token ? { nextPageToken: token } : {}),
      waitNewEvent: true,
      skipArchival: true,
      historyEventFilterType: CLOSE_EVENT_ONLY,
    });
    const close = response.history?.events?.[0];
    if (!close) {
      // The server's long poll expired first: ask again from where it stopped.
      token = response.nextPageToken ?? undefined;
      continue;
    }
    const continued = close.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!continued) return close;
    runId = continued;
    token = undefined;
  }
}

/** A run's start: the workflow's input, the carried state (after continue-as-new) and when the run started. */
export interface RunStart {
  input: AsyncJobWorkflowInput | undefined;
  carried: CarriedState | undefined;
  startedAtMs: number;
}

/** Decodes payloads with the client's data converter (its codecs, then its payload converter). */
export async function decodePayloads(ctx: ClientContext, payloads: Payload[]): Promise<unknown[]> {
  const converter = ctx.client.options.loadedDataConverter;
  let decoded = payloads;
  for (const codec of [...converter.payloadCodecs].reverse()) decoded = await codec.decode(decoded);
  return decoded.map((p) => converter.payloadConverter.fromPayload(p));
}

/** Reads the first event of a run: what it was started with. Errors are the SDK's, untranslated. */
export async function readRunStart(ctx: ClientContext, operationId: string, runId: string): Promise<RunStart> {
  const response = await ctx.client.workflowService.getWorkflowExecutionHistory({
    namespace: ctx.namespace,
    execution: { workflowId: operationId, runId },
    maximumPageSize: 1,
    skipArchival: true,
  });
  const first = response.history?.events?.[0];
  const payloads = (first?.workflowExecutionStartedEventAttributes?.input?.payloads ?? []) as Payload[];
  const [input, carried] = await decodePayloads(ctx, payloads);
  const seconds = Number(first?.eventTime?.seconds ?? 0);
  const nanos = first?.eventTime?.nanos ?? 0;
  return {
    input: input as AsyncJobWorkflowInput | undefined,
    carried: carried as CarriedState | undefined,
    startedAtMs: seconds * 1000 + Math.floor(nanos / 1e6),
  };
}
