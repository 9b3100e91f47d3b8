/**
 * The one way an activity heartbeats while it waits on something outside: a provider call in flight, a result
 * streaming in, a turn in the request pacer's queue. A worker that dies mid-wait is then noticed within the
 * heartbeat timeout rather than the call's whole time limit, and the workflow plans the call again (B2, F2).
 */
import { Context } from '@temporalio/activity';

/** How often a waiting activity heartbeats in its process, ms (sent on as {@link HEARTBEAT_SEND_MS} allows). */
const HEARTBEAT_INTERVAL_MS = 2_000;

/**
 * The most often the worker sends an activity's heartbeats to the server, ms (the SDK's
 * `maxHeartbeatThrottleInterval`: the first at once, then the latest details at most this often). Each one sent is a
 * persisted write at the server, so this only has to beat the 30 s heartbeat timeout with a wide margin (20 s: a
 * worker starved of CPU sends late, and a live activity timed out is a call of unknown fate). It also bounds how long
 * Temporal's cancellation takes to reach an activity in another worker process that no wake reached; one in the
 * workflow's own process, or in any worker on a PostgreSQL store, is woken at once (`loop-wake.ts`).
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
 * a wait, a read) beats every {@link HEARTBEAT_INTERVAL_MS} or so over all of them, not once per wait.
 */
const lastBeatAtMs = new WeakMap<Context, number>();

/**
 * The details each activity last heartbeat with: a beat without details of its own (a provider call in flight)
 * repeats them, since the server keeps only the latest (the status loop's last answer, shown on the pending activity).
 */
const lastDetails = new WeakMap<Context, unknown>();

/**
 * Runs `work`, heartbeating every {@link HEARTBEAT_INTERVAL_MS} until it settles, and at its start when the activity
 * has not beaten for that long; never at an activity's first wait (the heartbeat timeout runs from its start, and each
 * beat sent is a write at the server, so a call that ends sooner sends none). `work` gets a `beat` to heartbeat on
 * progress as well. The context is captured here, at the start: callbacks of streams and sockets run in their own
 * async context, not the activity's. Returns or throws what `work` does.
 */
export async function whileHeartbeating<T>(
  work: (beat: () => void) => Promise<T>,
  options: HeartbeatOptions = {},
): Promise<T> {
  const context = options.context ?? currentContext();
  if (context === undefined) return work(() => undefined);
  const beat = () => {
    lastBeatAtMs.set(context, Date.now());
    if (options.details !== undefined) lastDetails.set(context, options.details());
    context.heartbeat(lastDetails.get(context));
  };
  const last = lastBeatAtMs.get(context);
  if (last === undefined) lastBeatAtMs.set(context, Date.now());
  else if (Date.now() - last >= HEARTBEAT_INTERVAL_MS) beat();
  const beating = setInterval(beat, HEARTBEAT_INTERVAL_MS);
  try {
    return await work(beat);
  } finally {
    clearInterval(beating);
  }
}
