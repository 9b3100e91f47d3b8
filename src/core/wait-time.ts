/**
 * When the next outside call goes out (P2, P3, H1): the backoff with its jitter, a provider's Retry-After as a
 * minimum, a valid provider hint used, and the phase's deadline as the limit. Pure: the time and the random number
 * are the caller's. The wait planner (status reads) and the create phase (create, reconcile) both plan with it.
 */
import { type DelaySource } from './journal';
import { type Observation } from './observation';
import { type PollPolicy } from './policy';
import { parseNextCheckAt, parsePollAfterSeconds, parseRetryAfter } from './retry-after';
import { type StepContext } from './step-draft';

/** P2: the capped raw backoff delay for `attempt` (0-based): `min(maxDelayMs, baseDelayMs * 2^attempt)`. */
export function rawBackoffMs(policy: PollPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt, 60));
}

/**
 * P2: the jittered delay for a raw delay. Bounded (default): uniform in [minJitterRatio x raw, raw]; full:
 * uniform in [0, raw], at least 1 ms. Integer ms, never above `rawMs`. `random` must be in [0, 1).
 */
export function jitterMs(rawMs: number, policy: PollPolicy, random: number): number {
  const unit = Math.min(Math.max(random, 0), 1);
  const lowRatio = policy.jitter === 'full' ? 0 : policy.minJitterRatio;
  const delay = Math.ceil(rawMs * (lowRatio + (1 - lowRatio) * unit));
  return Math.min(rawMs, Math.max(1, delay));
}

/** What {@link planWait} needs to plan the next outside call. */
export interface WaitInput {
  /** The answer just received: its Retry-After and hints (P3). */
  observation: Observation;
  policy: PollPolicy;
  /** Nothing is planned at or after this instant (epoch ms): the deadline of the phase (create, result, cancel). */
  deadlineMs: number;
  /** The 0-based backoff attempt (P2). */
  backoffAttempt: number;
  /** HTTP 429 answers in a row, counting this one; 0 when this answer is not a 429 (H1). */
  rateLimitedInARow: number;
}

/** The result of {@link planWait}; `rawMs` is the capped raw backoff before jitter. */
export type WaitPlan =
  | { kind: 'poll'; atMs: number; source: DelaySource; hintRejected?: string; rawMs: number }
  | {
      kind: 'deadline_wait';
      atMs: number;
      source: 'deadline';
      /** What planned the call past the deadline: our own backoff, or the provider (Retry-After, a hint). */
      plannedBy: DelaySource;
      hintRejected?: string;
      rawMs: number;
    };

/**
 * Computes the next call's time (P2, P3, H1): backoff with jitter, Retry-After as a minimum, a valid hint used,
 * the deadline as the limit. Pure; `ctx.random` in [0, 1).
 */
export function planWait(input: WaitInput, ctx: Pick<StepContext, 'nowMs' | 'random'>): WaitPlan {
  const { observation, policy, deadlineMs } = input;
  const rejected: string[] = [];
  let retryAfterMs: number | undefined;
  if (observation.retryAfter !== undefined) {
    const retryAfter = parseRetryAfter(observation.retryAfter, observation.receivedAtMs, policy.maxHintMs);
    if (retryAfter.kind === 'ok') retryAfterMs = retryAfter.atMs;
    else rejected.push(`${retryAfter.reason}: ${retryAfter.detail}`);
  }
  let rawMs = rawBackoffMs(policy, input.backoffAttempt);
  if (input.rateLimitedInARow > 0 && retryAfterMs === undefined) {
    // H1: a 429 without a usable Retry-After increases the delay sharply, per 429 in a row.
    rawMs = Math.min(
      policy.maxDelayMs * policy.rateLimitMultiplier,
      rawMs * policy.rateLimitMultiplier ** Math.min(input.rateLimitedInARow, 20),
    );
  }
  // P2: the delay is a wait after the answer, so a slow answer never shortens the gap the provider sees.
  const answeredAtMs = Math.max(ctx.nowMs, observation.receivedAtMs);
  let atMs = answeredAtMs + jitterMs(rawMs, policy, ctx.random);
  let source: DelaySource = 'local_backoff';
  let hintMs: number | undefined;
  const { hints } = observation;
  const limits = { receivedAtMs: observation.receivedAtMs, maxHintMs: policy.maxHintMs, deadlineMs };
  for (const parsed of [
    hints?.pollAfterSeconds !== undefined ? parsePollAfterSeconds(hints.pollAfterSeconds, limits) : undefined,
    hints?.nextCheckAt !== undefined ? parseNextCheckAt(hints.nextCheckAt, limits) : undefined,
  ]) {
    if (parsed?.kind === 'ok') hintMs = Math.max(hintMs ?? 0, parsed.atMs);
    else if (parsed !== undefined) rejected.push(`${parsed.reason}: ${parsed.detail}`);
  }
  if (hintMs !== undefined) {
    atMs = hintMs;
    source = 'provider_poll_hint';
  }
  // P3: Retry-After is a minimum: never before it, whatever the backoff or the hint says.
  if (retryAfterMs !== undefined && retryAfterMs >= atMs) {
    atMs = retryAfterMs;
    source = 'provider_retry_after';
  }
  atMs = Math.max(atMs, answeredAtMs);
  const hint = rejected.length > 0 ? { hintRejected: rejected.join('; ').slice(0, 2000) } : {};
  if (atMs >= deadlineMs)
    return { kind: 'deadline_wait', atMs: deadlineMs, source: 'deadline', plannedBy: source, rawMs, ...hint };
  return { kind: 'poll', atMs, source, rawMs, ...hint };
}
