/**
 * Temporal's history as a second witness (`audit verify --with-temporal`), while it is retained.
 * Every activity the workflow completed returned the state the store held after the step (the journal reached
 * `journal.nextSequence - 1`) and the step's entries (the provider calls it made, with their transitions). So the store must still reach that sequence and hold those entries unchanged.
 * Runs are followed back through continue-as-new. Workflows in Temporal with no rows in the store are found
 * by listing the `AsyncJobWorkflow` executions of `ASYNCJOB_TASK_QUEUE` (whole-operation removal).
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { defaultPayloadConverter, type PayloadCodec } from '@temporalio/common';
import { type History, type Payload } from '@temporalio/common/lib/proto-utils';
import { connectFromEnvironment } from '../client/connection';
import { AsyncJobError } from '../core/errors';

/** An entry the workflow saw recorded. */
interface WitnessedEntry {
  readonly sequence: number;
  readonly at: string;
  readonly actor: string;
  readonly body: unknown;
}

/** What the history of one operation shows was recorded. */
export interface WitnessedOperation {
  /** The highest sequence the store held after a completed step. */
  reached: number;
  readonly entries: Map<number, WitnessedEntry>;
}

/**
 * A witness: the operations it knows, and what it saw of each (null when its history is no longer retained: past
 * the namespace's retention, or deleted). Any other failure to read (unreachable, denied, overloaded) is
 * `ASYNCJOB_ERR_WITNESS_UNAVAILABLE`.
 */
export interface TemporalWitness {
  operationIds(): Promise<string[]>;
  witness(operationId: string): Promise<WitnessedOperation | null>;
}

/** gRPC's NOT_FOUND, which the server answers for a history it no longer holds (the SDK does not always type it). */
const GRPC_NOT_FOUND = 5;

/** Whether `error` says the history is gone: retention passed, or the execution was deleted. */
export function historyGone(error: unknown): boolean {
  if (error instanceof WorkflowNotFoundError) return true;
  const e = error as { name?: unknown; code?: unknown; cause?: unknown };
  if (e?.name === 'NotFoundError' || e?.code === GRPC_NOT_FOUND) return true;
  return e?.cause !== undefined && e.cause !== error && historyGone(e.cause);
}

/** The one-line reason an error gives, for the report. */
function reasonOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

interface TailEntry {
  sequence: number;
  atMs: number;
  actor: string;
  body: unknown;
}

function isTailEntry(v: unknown): v is TailEntry {
  const e = v as TailEntry;
  return (
    typeof e === 'object' &&
    e !== null &&
    Number.isInteger(e.sequence) &&
    Number.isFinite(e.atMs) &&
    typeof e.actor === 'string' &&
    typeof e.body === 'object'
  );
}

function decode(payload: Payload | null | undefined): unknown {
  if (payload === null || payload === undefined) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(payload);
  } catch {
    return undefined;
  }
}

function witnessEntry(entry: TailEntry): WitnessedEntry {
  return { sequence: entry.sequence, at: new Date(entry.atMs).toISOString(), actor: entry.actor, body: entry.body };
}

/** What one activity result shows: `{state, entries}`, the state the store held after the step and the step's entries. */
function collectOutcome(value: unknown, operationId: string, into: WitnessedOperation): void {
  const outcome = value as {
    state?: { operationId?: unknown; journal?: { nextSequence?: unknown } };
    entries?: unknown;
  };
  if (typeof outcome !== 'object' || outcome === null) return;
  const { state, entries } = outcome;
  if (state?.operationId !== operationId || typeof state.journal?.nextSequence !== 'number') return;
  const nextSequence = state.journal.nextSequence;
  into.reached = Math.max(into.reached, nextSequence - 1);
  if (!Array.isArray(entries)) return;
  for (const entry of entries)
    if (isTailEntry(entry) && entry.sequence < nextSequence) into.entries.set(entry.sequence, witnessEntry(entry));
}

/** Adds what one run's history shows to `into`; returns the run it continued from, if any. Pure. */
export function witnessFromHistory(
  history: History,
  operationId: string,
  into: WitnessedOperation,
): string | undefined {
  let previousRun: string | undefined;
  for (const event of history.events ?? []) {
    const started = event.workflowExecutionStartedEventAttributes;
    if (started?.continuedExecutionRunId) previousRun = started.continuedExecutionRunId;
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) collectOutcome(decode(completed.result?.payloads?.[0]), operationId, into);
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const result = decode(marker.details?.result?.payloads?.[0]);
      collectOutcome(result, operationId, into);
      // The provider lookup's answer holds the intent it recorded for the start (`recorded.outcome`).
      collectOutcome(
        (result as { recorded?: { outcome?: unknown } } | undefined)?.recorded?.outcome,
        operationId,
        into,
      );
    }
  }
  return previousRun;
}

/** Decodes payloads with `codecs` (the last applied first, as the SDK does). */
async function decodePayloads(codecs: readonly PayloadCodec[], payloads: Payload[]): Promise<Payload[]> {
  let decoded = payloads;
  for (const codec of [...codecs].reverse()) decoded = await codec.decode(decoded);
  return decoded;
}

/**
 * The history with the payloads the witness reads (activity results, local activity markers) decoded by the
 * client's codecs, so an encrypted history (ASYNCJOB_PAYLOAD_KEYS) witnesses as a plain one. Throws the codec's
 * error (`ASYNCJOB_ERR_PAYLOAD_KEY_UNKNOWN`) for a payload under a key not held.
 */
async function decodedHistory(history: History, codecs: readonly PayloadCodec[]): Promise<History> {
  if (codecs.length === 0) return history;
  for (const event of history.events ?? []) {
    const result =
      event.activityTaskCompletedEventAttributes?.result ?? event.markerRecordedEventAttributes?.details?.result;
    if (result?.payloads) result.payloads = await decodePayloads(codecs, result.payloads as Payload[]);
  }
  return history;
}

/** A new, empty witnessed operation. */
export function emptyWitness(): WitnessedOperation {
  return { reached: 0, entries: new Map() };
}

/** The witness over a Temporal client (every run of each workflow, newest first) for the workflows of one task queue. */
function clientWitness(client: Client, taskQueue: string, maxRuns = 1000): TemporalWitness {
  return {
    async operationIds() {
      const ids = new Set<string>();
      const query = `WorkflowType = 'AsyncJobWorkflow' AND TaskQueue = '${taskQueue.replace(/'/g, "\\'")}'`;
      try {
        for await (const execution of client.workflow.list({ query })) ids.add(execution.workflowId);
      } catch (err) {
        throw new AsyncJobError(
          'ASYNCJOB_ERR_WITNESS_UNAVAILABLE',
          `cannot list the workflows of ${taskQueue}: ${reasonOf(err)}`,
          {
            cause: err,
          },
        );
      }
      return [...ids];
    },
    async witness(operationId) {
      const seen = emptyWitness();
      let runId: string | undefined;
      for (let run = 0; run < maxRuns; run++) {
        let history: History;
        try {
          history = await client.workflow.getHandle(operationId, runId).fetchHistory();
        } catch (err) {
          if (historyGone(err)) return run === 0 ? null : seen;
          throw new AsyncJobError(
            'ASYNCJOB_ERR_WITNESS_UNAVAILABLE',
            `cannot read the history of ${operationId}: ${reasonOf(err)}`,
            {
              cause: err,
            },
          );
        }
        const codecs = client.options.loadedDataConverter.payloadCodecs;
        runId = witnessFromHistory(await decodedHistory(history, codecs), operationId, seen);
        if (runId === undefined) break;
      }
      return seen;
    },
  };
}

/** Connects to Temporal as the worker and client do (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS, API key, payload keys). */
export async function connectTemporalWitness(
  env: NodeJS.ProcessEnv,
): Promise<TemporalWitness & { close(): Promise<void> }> {
  const { client, connection, config } = await connectFromEnvironment(env);
  return { ...clientWitness(client, config.ASYNCJOB_TASK_QUEUE), close: () => connection.close() };
}
