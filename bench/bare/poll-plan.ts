/**
 * asyncjob's poll timing for a job that keeps answering "running" (src/core/wait-planner.ts, P2), for the bare
 * baseline and the naive loop, so all three plan the same instants. No imports: the bare workflow bundle stays
 * as small as Temporal alone needs.
 *
 * asyncjob plans each read at "the previous provider call's start + a jittered backoff delay", and at its next
 * workflow task starts a timer only when that instant is still ahead (`nextCommand`: due reads run at once).
 * The backoff attempt before read n (1-based) is max(0, n - 2): the first poll after the create uses attempt 0
 * (`scheduleFirstPoll`), and so does the second (the first "running" answer plans with the attempt the create
 * left at 0); each further "running" answer adds one.
 */

/** The delays of a poll policy (asyncjob's `PollPolicy` fields that matter for a job that keeps running). */
export interface PollDelays {
  baseDelayMs: number;
  maxDelayMs: number;
  /** Bounded jitter's lower bound as a fraction of the raw delay; asyncjob's default 0.5. */
  minJitterRatio?: number;
}

/** The 0-based backoff attempt of the delay before status read `read` (1-based). */
function backoffAttemptBefore(read: number): number {
  return Math.max(0, read - 2);
}

/** P2's capped raw delay for `attempt`, as `rawBackoffMs`. */
export function rawDelayMs(delays: PollDelays, attempt: number): number {
  return Math.min(delays.maxDelayMs, delays.baseDelayMs * 2 ** Math.min(attempt, 60));
}

/** P2's bounded jitter, as `jitterMs`: uniform in [ratio x raw, raw], integer ms, at least 1. */
export function jitteredMs(rawMs: number, delays: PollDelays, random: number): number {
  const unit = Math.min(Math.max(random, 0), 1);
  const low = delays.minJitterRatio ?? 0.5;
  return Math.min(rawMs, Math.max(1, Math.ceil(rawMs * (low + (1 - low) * unit))));
}

/** The delay between the previous provider call's start and status read `read` (1-based). */
export function plannedDelayMs(read: number, delays: PollDelays, random: number): number {
  return jitteredMs(rawDelayMs(delays, backoffAttemptBefore(read)), delays, random);
}
