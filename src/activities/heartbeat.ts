/**
 * The one way an activity heartbeats while it waits on something outside: a provider call in flight, a result
 * streaming in, a turn in the request pacer's queue. A worker that dies mid-wait is then noticed within the
 * heartbeat timeout rather than the call's whole time limit, and the workflow plans the call again (B2, F2).
 */
import { Context } from '@temporalio/activity';

/**
 * How often an activity with no heartbeat timeout heartbeats in its process, ms: the beats then only carry Temporal's
 * cancellation and the activity's details (sent on as {@link HEARTBEAT_SEND_MS} allows).
 */
const UNTIMED_BEAT_MS = 2_000;

/**
 * The margin a beat keeps before the heartbeat timeout, ms: a worker starved of CPU sends late, and a live activity
 * timed out is a call of unknown fate.
 */
const BEAT_MARGIN_MS = 20_000;

/**
 * How often an activity heartbeats, ms: its heartbeat timeout less {@link BEAT_MARGIN_MS}, or a third of the timeout
 * when that is longer (timeouts under 30 s). Only often enough to beat the timeout, since each beat sent is a
 * persisted write at the server: every 10 s for a provider call (30 s), every 40 s for a status loop at a slow
 * policy (60 s, `statusHeartbeatTimeoutMs`). It also bounds how long Temporal's cancellation takes to reach an
 * activity in another worker process that no wake reached; one in the workflow's own process, or in any worker on a
 * PostgreSQL store, is woken at once (`loop-wake.ts`).
 */
export function beatEveryMs(heartbeatTimeoutMs: number | undefined): number {
  if (heartbeatTimeoutMs === undefined || heartbeatTimeoutMs <= 0) return UNTIMED_BEAT_MS;
  return Math.max(heartbeatTimeoutMs / 3, heartbeatTimeoutMs - BEAT_MARGIN_MS);
}

/**
 * The most often the worker sends an activity's heartbeats to the server, ms (the SDK's
 * `maxHeartbeatThrottleInterval`: the first at once, then the latest details at most this often): a third of a
 * provider call's 30 s timeout, so beats on progress (a result streaming in) cost no more than the timed ones.
 */
export const HEARTBEAT_SEND_MS = 10_000;

/** Options of {@link whileHeartbeating}. */
export interface HeartbeatOptions {
  /** The activity to heartbeat for; the current one when absent (none outside an activity: then no heartbeats). */
  readonly context?: Context;
  /** The details of each heartbeat (progress), read at each beat. */
  readonly details?: () => unknown;
}

function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/**
 * When each activity last heartbeat, or first waited here: an activity that waits many times (a status loop: a read,
 * a wait, a read) beats on its cadence over all of them, not once per wait.
 */
const lastBeatAtMs = new WeakMap<Context, number>();

/**
 * Where each activity's heartbeat details come from, as its latest wait gave them: a beat during a call without
 * details of its own (a provider call in flight) reads them too, since the server keeps only the latest (the status
 * loop's last answer, shown on the pending activity).
 */
const detailsOf = new WeakMap<Context, () => unknown>();

/**
 * Runs `work`, heartbeating on the activity's cadence ({@link beatEveryMs}) until it settles; the first beat comes
 * that long after the activity first waited here (the heartbeat timeout runs from its start, and each beat sent is a
 * write at the server, so a call that ends sooner sends none). `work` gets a `beat` to heartbeat on progress as well.
 * The context is captured here, at the start: callbacks of streams and sockets run in their own async context, not
 * the activity's. Returns or throws what `work` does.
 */
export async function whileHeartbeating<T>(
  work: (beat: () => void) => Promise<T>,
  options: HeartbeatOptions = {},
): Promise<T> {
  const context = options.context ?? currentContext();
  if (context === undefined) return work(() => undefined);
  const everyMs = beatEveryMs(context.info.heartbeatTimeoutMs);
  if (options.details !== undefined) detailsOf.set(context, options.details);
  const beat = () => {
    lastBeatAtMs.set(context, Date.now());
    context.heartbeat(detailsOf.get(context)?.());
  };
  if (!lastBeatAtMs.has(context)) lastBeatAtMs.set(context, Date.now());
  let timer: ReturnType<typeof setTimeout> | undefined;
  const beatWhenDue = () => {
    const dueInMs = lastBeatAtMs.get(context)! + everyMs - Date.now();
    if (dueInMs <= 0) beat();
    timer = setTimeout(beatWhenDue, dueInMs <= 0 ? everyMs : dueInMs);
  };
  beatWhenDue();
  try {
    return await work(beat);
  } finally {
    clearTimeout(timer);
  }
}
