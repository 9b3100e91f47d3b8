/**
 * Status polling inside one activity (P4, B2): while the planned wait between status reads is short, the
 * status-polling activity keeps the operation and reads again itself, instead of returning to the workflow for a
 * durable timer and a new activity every read. Temporal's guidance for frequent polling is exactly this: the
 * reads stay in a heartbeating activity; for infrequent polling, long waits are retries of the same activity
 * (`retryDelayAfter`), recorded nowhere in history. Every read is still reserved and stored
 * before it is sent and every decision is still the core's (`onWake`, `afterStatus`): this module only says
 * whether the loop keeps the operation or hands it back. Pure.
 */
import { z } from 'zod';
import { lazySchema } from './lazy-schema';
import { delaySourceSchema } from './journal';
import { remoteStateCategorySchema } from './observation';
import { type OperationRecord } from './operation';
import { nextCommand } from './step-next';
import { webhookMayBringReadForward } from './wait-planner';

/** How long the activity may keep an operation. Read by the workflow from the provider's facts. */
export const pollLoopLimitsSchema = lazySchema(() =>
  z
    .object({
      /** A planned wait longer than this ends the loop (a retry of its activity, or a durable timer); 0 turns it off. */
      maxWaitMs: z
        .number()
        .int()
        .min(0)
        .max(10 * 60_000),
      /** The loop hands the operation back after this long, so one activity never outlives its time limit. */
      maxLoopMs: z
        .number()
        .int()
        .min(1_000)
        .max(9 * 60_000),
      /**
       * Longer waits are retries of the status activity (`retryDelayAfter`), not durable timers. Recorded with the
       * provider's facts in every operation's history, so an operation started without it keeps its timers.
       */
      retryWaits: z.boolean().optional(),
      /**
       * The create's own activity reads on for its first {@link CREATE_READS_ON_MS} (`readOnAfterCreateLimits`).
       * Recorded with the provider's facts, as `retryWaits`: an operation started without it makes the create alone.
       */
      createReadsOn: z.boolean().optional(),
    })
    .strict(),
);
/** The poll loop's limits. */
export type PollLoopLimits = z.infer<typeof pollLoopLimitsSchema>;

/**
 * The defaults: waits up to 30 s stay in the activity, which keeps an operation at most 2 minutes (it holds an
 * activity slot meanwhile, so other operations' reads are not kept waiting for long when slots run short).
 */
export const DEFAULT_POLL_LOOP_LIMITS: PollLoopLimits = {
  maxWaitMs: 30_000,
  maxLoopMs: 2 * 60_000,
  retryWaits: true,
  createReadsOn: true,
};

/**
 * How often the workflow's copy of a running job is refreshed while the status activity keeps it (P8): its
 * progress, the provider's word for its state, and `accepted` to `observing` (the first readable answer). A move
 * goes back once the copy is at least {@link SHOWN_COPY_REFRESH_READS} status reads and
 * {@link SHOWN_COPY_REFRESH_MS} old. A refresh is a workflow round trip (seven history events: an activity, a workflow
 * task and a search-attribute write), so this bounds its cost at a quarter of an event per read, at any poll
 * interval. The store records every answer at once, and the pending status activity carries the last one (its
 * heartbeat details, or the last attempt's failure in a retry-driven wait), which the Web UI shows. A change of local
 * state that ends polling goes back at once.
 */
export const SHOWN_COPY_REFRESH_READS = 30;

/** The youngest copy a refresh replaces (see {@link SHOWN_COPY_REFRESH_READS}): at fast policies, reads are cheap. */
export const SHOWN_COPY_REFRESH_MS = 15_000;

/** Why the loop handed the operation back to the workflow. */
export type LoopExit =
  /** The operation left the polling states (a result to collect, a failure, an escalation, a cancel to send). */
  | 'state_changed'
  /** The next read is planned further away than `maxWaitMs`: a retry of the activity, or a durable timer, waits for it. */
  | 'long_wait'
  /** The loop has kept the operation for `maxLoopMs`. */
  | 'loop_time_spent'
  /**
   * What the workflow shows of a running job moved (`accepted` to `observing`, the provider's word, its progress)
   * and its copy is due for a refresh (P8, {@link SHOWN_COPY_REFRESH_READS}).
   */
  | 'refresh_due'
  /** The workflow asked for the operation back (a message arrived). */
  | 'cancelled'
  /** Another writer moved the operation on in the store (this activity was timed out and replaced). */
  | 'superseded';

/**
 * One status activity's hold on an operation: when it began keeping it (this attempt), when the workflow's copy was
 * made (the activity's scheduling, the same for all its attempts; the loop's start when not given), and that copy.
 */
export interface LoopHold {
  startedAtMs: number;
  copiedAtMs?: number;
  entered: OperationRecord;
}

/** What the loop does next. */
export type LoopStep = { kind: 'wait'; untilMs: number } | { kind: 'read' } | { kind: 'exit'; reason: LoopExit };

const POLLING = new Set<OperationRecord['localState']>(['accepted', 'observing']);

/** Whether the status activity may hold the operation: the job still polled (`accepted` or `observing`). */
export function isPolling(record: OperationRecord): boolean {
  return POLLING.has(record.localState);
}

/**
 * The loop's next step for a record at `nowMs`, in a loop begun at `loop.startedAtMs` with the record
 * `loop.entered`: read now, wait a short while, or hand the operation back. Only `accepted` and `observing` stay
 * in the loop (the job still running, whatever the provider calls it); anything else needs the workflow at once
 * (a result to collect, a failure, an escalation, and `cancelling`, whose messages the workflow handles). A read
 * is never planned at or after the deadline.
 */
export function nextLoopStep(record: OperationRecord, nowMs: number, loop: LoopHold, limits: PollLoopLimits): LoopStep {
  if (!isPolling(record) || record.schedule.reservedAtMs !== undefined)
    return { kind: 'exit', reason: 'state_changed' };
  const command = nextCommand(record, nowMs);
  if (command.kind !== 'read_status' && command.kind !== 'wait') return { kind: 'exit', reason: 'state_changed' };
  const untilMs = command.kind === 'wait' ? command.untilMs : nowMs;
  // Checked before the long wait and the loop's time, so a copy due for a refresh goes back rather than on as a retry.
  if (copyRefreshDue(loop, record, untilMs)) return { kind: 'exit', reason: 'refresh_due' };
  if (untilMs - nowMs > limits.maxWaitMs) return { kind: 'exit', reason: 'long_wait' };
  if (untilMs - loop.startedAtMs > limits.maxLoopMs) return { kind: 'exit', reason: 'loop_time_spent' };
  return untilMs <= nowMs ? { kind: 'read' } : { kind: 'wait', untilMs };
}

/**
 * Whether the workflow's copy of a running job is due for a refresh by the loop's next step at `untilMs` (P8): what
 * it shows moved since the copy was made (`accepted` to `observing`, the provider's word for the job's state, or its
 * progress) and the copy is {@link SHOWN_COPY_REFRESH_READS} reads and {@link SHOWN_COPY_REFRESH_MS} old by then.
 * None of these moves changes what the workflow does next (the job is still running and still polled, and the store
 * holds every answer and transition), so none is worth a round trip of its own. Counters show the copy's values.
 */
function copyRefreshDue(loop: LoopHold, now: OperationRecord, untilMs: number): boolean {
  const { entered } = loop;
  const moved =
    now.localState !== entered.localState ||
    now.remote.state !== entered.remote.state ||
    now.remote.category !== entered.remote.category ||
    now.remote.progress !== entered.remote.progress;
  return (
    moved &&
    now.used.statusRequests - entered.used.statusRequests >= SHOWN_COPY_REFRESH_READS &&
    untilMs - (loop.copiedAtMs ?? loop.startedAtMs) >= SHOWN_COPY_REFRESH_MS
  );
}

/**
 * W1 inside the loop: whether a webhook that just arrived for this operation moves its next read to now, by the
 * same rules as the workflow's ({@link webhookMayBringReadForward}). The workflow records the hint itself when its
 * signal is handled.
 */
export function webhookMovesReadToNow(record: OperationRecord, nowMs: number): boolean {
  return isPolling(record) && webhookMayBringReadForward(record, nowMs);
}

/** The record with its next read moved to now by a webhook (see {@link webhookMovesReadToNow}). */
export function readNowForWebhook(record: OperationRecord, nowMs: number): OperationRecord {
  return { ...record, schedule: { nextPollAtMs: nowMs, delaySource: 'webhook_hint' } };
}

/**
 * Whether the workflow hands a short wait to a status loop instead of a durable timer: a polling operation whose
 * next read is due within `maxWaitMs`, nothing reserved. The activity then waits, reserves and reads itself.
 */
export function loopTakesWait(record: OperationRecord, nowMs: number, limits: PollLoopLimits): boolean {
  if (limits.maxWaitMs === 0) return false;
  return nextLoopStep(record, nowMs, { startedAtMs: nowMs, entered: record }, limits).kind === 'wait';
}

/**
 * Whether the workflow hands a long wait to a retry-driven status activity instead of a durable timer: a polling
 * operation whose next read is planned further away than the loop keeps (`long_wait`), nothing reserved. The
 * activity's attempts are then the reads: an attempt that finds the read not due fails with the wait as its retry
 * delay ({@link retryDelayAfter}), which Temporal does not record in history.
 */
export function retryTakesWait(record: OperationRecord, nowMs: number, limits: PollLoopLimits): boolean {
  if (limits.maxWaitMs === 0 || limits.retryWaits !== true) return false;
  const step = nextLoopStep(record, nowMs, { startedAtMs: nowMs, entered: record }, limits);
  return step.kind === 'exit' && step.reason === 'long_wait';
}

/**
 * What the status activity receives beside the operation: the loop's limits as every version of the activity reads
 * them (a strict schema, so `retryWaits` is not among them), and `retryWaits` beside them, which a worker of an
 * earlier version ignores: it then runs the loop as before, handing long waits back (see {@link handedBackUnread}).
 */
export function statusActivityLimits(limits: PollLoopLimits): {
  loop: PollLoopLimits;
  retryWaits?: true;
} {
  const loop = { maxWaitMs: limits.maxWaitMs, maxLoopMs: limits.maxLoopMs };
  return limits.retryWaits === true ? { loop, retryWaits: true } : { loop };
}

/**
 * How long the create's own activity reads on after a create that was accepted, ms: the reads due within this of the
 * create are made there (a job done by then costs one activity, no workflow task between its create and its
 * result), and the workflow shows the created job within it otherwise (P8).
 */
export const CREATE_READS_ON_MS = 2_000;

/**
 * What the create's activity is given to read on after the create (`createJob`'s `loop`): the loop's limits with its
 * time held to {@link CREATE_READS_ON_MS}; waits past them go back to the workflow, never retries of the create.
 */
export function readOnAfterCreateLimits(limits: PollLoopLimits): { loop: PollLoopLimits } {
  return { loop: { maxWaitMs: limits.maxWaitMs, maxLoopMs: Math.min(limits.maxLoopMs, CREATE_READS_ON_MS) } };
}

/** The heartbeat timeout of provider calls, ms (F2): a dead worker is noticed within it. */
export const PROVIDER_CALL_HEARTBEAT_TIMEOUT_MS = 30_000;

/**
 * The status activity's heartbeat timeout, ms: the longest wait its loop keeps for this operation (the policy's
 * `maxDelayMs`, at most the loop's `maxWaitMs` and 30 s) plus a provider call's 30 s, as Temporal's sample for a
 * heartbeating poll sets "the interval + 30 s". A lost worker is noticed within it, so the read its loop was waiting
 * to make is still at most about 30 s late, and a loop at a slow policy heartbeats up to four times less often than
 * a provider call (`activities/heartbeat.ts`: each beat sent is a write at the server).
 */
export function statusHeartbeatTimeoutMs(record: OperationRecord, limits: PollLoopLimits): number {
  const longestWaitMs = Math.min(record.policy.maxDelayMs, limits.maxWaitMs, PROVIDER_CALL_HEARTBEAT_TIMEOUT_MS);
  return longestWaitMs + PROVIDER_CALL_HEARTBEAT_TIMEOUT_MS;
}

/**
 * After a status activity asked for retry waits returned: the instant of a long wait it handed back without
 * recording anything, which only a worker of an earlier version does (it ignores `retryWaits`), or `undefined`. The
 * workflow then waits on a durable timer, as that version's workflow did, instead of handing the same wait to the
 * activity again at once.
 */
export function handedBackUnread(
  before: OperationRecord,
  after: OperationRecord,
  nowMs: number,
  limits: PollLoopLimits,
): number | undefined {
  if (after.journal.nextSequence !== before.journal.nextSequence || !retryTakesWait(after, nowMs, limits))
    return undefined;
  const command = nextCommand(after, nowMs);
  return command.kind === 'wait' ? command.untilMs : undefined;
}

/** The failure type of an attempt of a retry-driven wait that ends to wait: benign, not an error. */
export const STATUS_WAIT_FAILURE_TYPE = 'AsyncJobStatusWait';

/**
 * In a retry-driven wait: how long until the activity's next attempt when the loop ended with `exit` at `nowMs`, or
 * `undefined` when the operation goes back to the workflow. Only a wait goes on as a retry (`long_wait`, or a
 * `loop_time_spent` that ends one attempt's time); a copy due for a refresh went back already (`refresh_due`, P8).
 * Never less than 1 ms: a zero delay would leave the retry to Temporal's backoff.
 */
export function retryDelayAfter(exit: LoopExit, record: OperationRecord, nowMs: number): number | undefined {
  if (exit !== 'long_wait' && exit !== 'loop_time_spent') return undefined;
  const command = nextCommand(record, nowMs);
  if (command.kind === 'read_status') return 1;
  if (command.kind !== 'wait') return undefined;
  return Math.max(1, command.untilMs - nowMs);
}

/**
 * After an activity that holds the operation ended without handing back its outcome (a worker lost, a create that
 * failed): whether the workflow adopts the state the store holds instead of its own. The store is ahead when it
 * recorded more, or as much with a read the loop reserved there and the workflow did not (B2: that count must not be
 * lost). Otherwise the workflow's own record stands: a create that recorded nothing failed as a call fails.
 */
export function storeIsAhead(held: OperationRecord, stored: OperationRecord): boolean {
  if (stored.journal.nextSequence !== held.journal.nextSequence)
    return stored.journal.nextSequence > held.journal.nextSequence;
  return held.schedule.reservedAtMs === undefined && stored.schedule.reservedAtMs !== undefined;
}

/** What the pending status activity shows between reads (see {@link pendingReadDetails}), as a reader checks it. */
const pendingReadDetailsSchema = lazySchema(() =>
  z.object({
    localState: z.enum(['accepted', 'observing']),
    remoteState: z.string().max(500).nullable(),
    category: remoteStateCategorySchema.nullable(),
    progress: z.number().min(0).max(1).nullable(),
    observedAtMs: z.number().int().nonnegative().nullable(),
    delaySource: delaySourceSchema.nullable(),
    sequence: z.number().int().min(-1),
    statusRequestsUsed: z.number().int().nonnegative(),
    nextReadAt: z.iso.datetime(),
  }),
);

/** {@link pendingReadDetailsSchema}'s type. */
export type PendingReadDetails = z.infer<typeof pendingReadDetailsSchema>;

/**
 * What the pending status activity shows between reads (P8), at no history cost: in its heartbeat details while the
 * loop waits, and in the last attempt's failure during a retry-driven wait; the Web UI and `describe` show both, and
 * the client shows the newest over the workflow's copy ({@link withPendingRead}).
 */
export function pendingReadDetails(record: OperationRecord, nextReadAtMs: number): PendingReadDetails {
  return {
    localState: record.localState === 'accepted' ? 'accepted' : 'observing',
    remoteState: record.remote.state ?? null,
    category: record.remote.category ?? null,
    progress: record.remote.progress ?? null,
    observedAtMs: record.remote.observedAtMs ?? null,
    delaySource: record.schedule.delaySource ?? null,
    sequence: record.journal.nextSequence - 1,
    statusRequestsUsed: record.used.statusRequests,
    nextReadAt: new Date(nextReadAtMs).toISOString(),
  };
}

/**
 * The workflow's copy of a running job with the newest of the pending status activity's details over it (P8): its
 * local state (`accepted` or `observing`), the provider's word and when it was received, progress, requests used,
 * and the next read with its reason. Details that do not parse, are not newer than the copy (by journal sequence), or
 * come while the copy is not polling are ignored, so what a reader is shown is never older than the workflow's copy
 * and never leaves a state the workflow moved the operation out of. Pure.
 */
export function withPendingRead(record: OperationRecord, candidates: readonly unknown[]): OperationRecord {
  if (!isPolling(record)) return record;
  let newest: PendingReadDetails | undefined;
  for (const candidate of candidates) {
    const parsed = pendingReadDetailsSchema.safeParse(candidate);
    if (parsed.success && parsed.data.sequence > (newest?.sequence ?? record.journal.nextSequence - 1))
      newest = parsed.data;
  }
  if (newest === undefined) return record;
  const { remoteState, category, progress, observedAtMs, delaySource } = newest;
  return {
    ...record,
    localState: newest.localState,
    remote: {
      ...record.remote,
      ...(remoteState !== null ? { state: remoteState } : {}),
      ...(category !== null ? { category } : {}),
      ...(progress !== null ? { progress } : {}),
      ...(observedAtMs !== null ? { observedAtMs } : {}),
    },
    used: { ...record.used, statusRequests: Math.max(record.used.statusRequests, newest.statusRequestsUsed) },
    schedule: { nextPollAtMs: Date.parse(newest.nextReadAt), ...(delaySource !== null ? { delaySource } : {}) },
  };
}

/** {@link pendingReadDetails} in one line, for the failure message of a retry-driven wait. */
export function pendingReadSummary(record: OperationRecord, nextReadAtMs: number, nowMs: number): string {
  const { remoteState, progress } = pendingReadDetails(record, nextReadAtMs);
  const word = remoteState === null ? '' : ` (provider: ${JSON.stringify(remoteState)})`;
  const done = progress === null ? '' : `, ${Math.round(progress * 100)}% done`;
  const reads = `${record.used.statusRequests} status read${record.used.statusRequests === 1 ? '' : 's'}`;
  return `${record.localState}${word}${done} after ${reads}; the next status read is due in ${nextReadAtMs - nowMs} ms`;
}
