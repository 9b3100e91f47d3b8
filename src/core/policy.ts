/**
 * The poll policy (P2, B1, H1, H3, X3): every duration in milliseconds, every bound explicit. Defaults follow
 * docs/rules.md#p2 (base 5 s, max 120 s, bounded jitter 50%-100%). Millisecond values are allowed so tests run
 * fast.
 */
import { z } from 'zod';
import { lazySchema } from './lazy-schema';

const durationMs = z
  .number()
  .int()
  .min(1)
  .max(366 * 24 * 3600 * 1000);

/** The poll policy schema; every field has a default, so `pollPolicySchema.parse({})` is the default policy. */
export const pollPolicySchema = lazySchema(() =>
  z
    .object({
      /** P2: the first backoff delay. */
      baseDelayMs: durationMs.default(5_000),
      /** P2: the cap of the raw backoff delay. */
      maxDelayMs: durationMs.default(120_000),
      /** P2: `bounded` draws uniformly in [minJitterRatio, 1] x raw; `full` draws in [0, 1] x raw (never below 1 ms). */
      jitter: z.enum(['bounded', 'full']).default('bounded'),
      /** P2: the lower bound of bounded jitter, as a fraction of the raw delay. */
      minJitterRatio: z.number().min(0).max(1).default(0.5),
      /** B1: the most status requests the operation may send. */
      maxStatusRequests: z.number().int().min(1).max(1_000_000).default(100),
      /** B1, H5, S5: transport failures (5xx, network errors) allowed before stopping. */
      maxTransportFailures: z.number().int().min(1).max(100_000).default(10),
      /** H1: consecutive 429 answers before escalating `rate_limited`. */
      maxRateLimited: z.number().int().min(1).max(100_000).default(5),
      /** H1: the backoff multiplier applied per consecutive 429 without Retry-After. */
      rateLimitMultiplier: z.number().min(1).max(1_000).default(4),
      /** H3: after acceptance, a 404 inside this window means "not visible yet": wait. */
      notFoundWindowMs: z
        .number()
        .int()
        .min(0)
        .max(24 * 3600 * 1000)
        .default(30_000),
      /** P3: a provider hint or Retry-After further away than this is absurd and rejected. */
      maxHintMs: durationMs.default(6 * 3600 * 1000),
      /** X3: how long after the cancel request a provider confirmation may take before `cancellation_unconfirmed`. */
      cancelDeadlineMs: durationMs.default(10 * 60 * 1000),
      /** E2: how long a human has to answer an escalation, for the message and the decision check. */
      decisionDeadlineMs: durationMs.default(7 * 24 * 3600 * 1000),
      /** E2: the time one "extend" option offers. */
      extensionMs: durationMs.default(15 * 60 * 1000),
      /** E2: the status requests one "extend" option offers. */
      extensionStatusRequests: z.number().int().min(1).max(100_000).default(4),
    })
    .strict()
    .refine((p) => p.baseDelayMs <= p.maxDelayMs, {
      message: 'baseDelayMs must not exceed maxDelayMs',
      path: ['baseDelayMs'],
    }),
);

/** A validated poll policy. */
export type PollPolicy = z.infer<typeof pollPolicySchema>;
/** Policy overrides as a caller gives them (every field optional). */
export type PollPolicyInput = z.input<typeof pollPolicySchema>;

/** The default policy (a function, so importing this module builds no schema: see `lazy-schema.ts`). */
export function defaultPollPolicy(): PollPolicy {
  return pollPolicySchema.parse({});
}
