/**
 * The core of `asyncjob replay-check`: replays workflow histories against one workflow code (this install's, or a
 * bundle written by `asyncjob bundle`) and says of each whether that code still makes the commands the history
 * recorded. A change that does not (a nondeterministic one) would fail the operations running now mid-flight, at
 * their next workflow task after the upgrade. Histories in, one outcome per history out; nothing is printed.
 */
import type { PayloadCodec } from '@temporalio/common';
import { workerDataConverter } from '../codec/data-converter';
import { DefaultLogger, type History, type Logger, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';

/** One history to replay, and where it came from. */
export interface ReplayHistory {
  /** The workflow ID to replay it under: the workflow checks that it is its operation ID. */
  workflowId: string;
  /** The run's ID, when known. */
  runId: string | null;
  /** The history file it was read from; null for a history read from Temporal. */
  file: string | null;
  history: History;
}

/** Why a history did not replay: the code made other commands than it recorded, or the replay failed otherwise. */
export interface ReplayFailure {
  kind: 'nondeterminism' | 'failure';
  /** The first line of the error's own details. */
  message: string;
}

/** What became of one history. */
export interface ReplayOutcome {
  workflowId: string;
  runId: string | null;
  file: string | null;
  /** Null when it replayed. */
  failure: ReplayFailure | null;
}

/** The workflow code to replay against, as a worker takes it. */
export type ReplayWorkflowCode = NonNullable<WorkerOptions['workflowBundle']>;

/** The SDK's preamble before the details ("Replay failed with a nondeterminism error. ... Details: "). */
const SDK_PREAMBLE = /^Replay failed.*?Details: /s;

/** The core's failure as Rust prints it (`Failure { failure: Some(Failure { message: "..."`): its message. */
const CORE_FAILURE_MESSAGE = /^Workflow activation completion failed: .*?\bmessage: "((?:[^"\\]|\\.)*)"/s;

/** The kind and first line of a replay error: the core's own message, without the SDK's wrapping around it. */
export function replayFailureOf(error: unknown): ReplayFailure {
  const name = error instanceof Error ? error.name : '';
  const text = error instanceof Error ? error.message : String(error);
  const details = text.replace(SDK_PREAMBLE, '');
  const core = CORE_FAILURE_MESSAGE.exec(details)?.[1]?.replace(/\\(.)/g, '$1');
  const message = (core ?? details).split('\n')[0]!.trim() || text.split('\n')[0]!.trim();
  return { kind: name === 'DeterminismViolationError' ? 'nondeterminism' : 'failure', message };
}

/** A logger that drops everything: the replay's failures are reported as outcomes, not as log lines. */
function silentLogger(): Logger {
  const drop = (): void => undefined;
  return { log: drop, trace: drop, debug: drop, info: drop, warn: drop, error: drop };
}

/**
 * Installs the Temporal runtime a replay runs in, quiet (its warnings on stderr with `verbose`): the SDK's own
 * logs and the native core's, forwarded to the same logger. Kept when this process installed one already.
 */
export function installReplayRuntime(verbose: boolean): void {
  try {
    Runtime.install({
      logger: verbose ? new DefaultLogger('WARN') : silentLogger(),
      telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
    });
  } catch {
    // Installed already in this process (a test, or a command that ran before): keep it.
  }
}

/**
 * Replays each history in turn against `code` (one replay worker for all) and returns one outcome per history,
 * in order. Throws only when the replay worker itself cannot run (a bundle Temporal cannot load).
 */
export async function replayHistories(
  histories: readonly ReplayHistory[],
  code: ReplayWorkflowCode,
  payloadCodecs: PayloadCodec[] = [],
): Promise<ReplayOutcome[]> {
  if (histories.length === 0) return [];
  const outcomes: ReplayOutcome[] = [];
  const replay = Worker.runReplayHistories(
    // The payload keys decode what the histories hold encrypted (ASYNCJOB_PAYLOAD_KEYS), as the workers do.
    { workflowBundle: code, replayName: 'asyncjob-replay-check', dataConverter: workerDataConverter(payloadCodecs) },
    histories.map(({ workflowId, history }) => ({ workflowId, history })),
  );
  // The SDK replays one history at a time and yields in the order given.
  for await (const result of replay) {
    const given = histories[outcomes.length]!;
    outcomes.push({
      workflowId: given.workflowId,
      runId: given.runId ?? (result.runId || null),
      file: given.file,
      failure: result.error ? replayFailureOf(result.error) : null,
    });
  }
  return outcomes;
}
