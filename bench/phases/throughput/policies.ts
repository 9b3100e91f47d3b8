/**
 * The poll policies figures 1 and 2 compare, the systems that run them, and the check that the baselines' copy of
 * asyncjob's delay rule (bench/bare/poll-plan.ts) still agrees with the product's planner.
 */
import { pollPolicySchema } from '../../../src/core/policy';
import { jitterMs, rawBackoffMs } from '../../../src/core/wait-time';
import { jitteredMs, rawDelayMs, type PollDelays } from '../../bare/poll-plan';

/** The policies compared (the product's default, 20 s and 60 s in figure 2 only). */
export type PolicyName = 'short' | '1s' | '5s' | 'default' | '20s' | '60s';

/** A poll policy of the bench: its name and delays (bounded jitter 50-100%, asyncjob's default). */
export interface BenchPolicy extends PollDelays {
  name: PolicyName;
}

/** The short policy of the earlier figures, and production-like 1 s and 5 s (base = max: a fixed interval). */
export const POLICIES: readonly BenchPolicy[] = [
  { name: 'short', baseDelayMs: 5, maxDelayMs: 20 },
  { name: '1s', baseDelayMs: 1_000, maxDelayMs: 1_000 },
  { name: '5s', baseDelayMs: 5_000, maxDelayMs: 5_000 },
];

/**
 * Figure 2's policies: figure 1's; the product's default (5 s doubling to 120 s: a 3-read job is read 2.5-5 s, then
 * 2.5-5 s, then 5-10 s apart); and 20 s and 60 s, where waits pass the status loop's 30 s (retries of the status
 * activity) and Temporal recommends activity retries over a heartbeating loop.
 */
export const PER_POLL_POLICIES: readonly BenchPolicy[] = [
  ...POLICIES,
  { name: 'default', baseDelayMs: 5_000, maxDelayMs: 120_000 },
  { name: '20s', baseDelayMs: 20_000, maxDelayMs: 20_000 },
  { name: '60s', baseDelayMs: 60_000, maxDelayMs: 60_000 },
];

/** The three systems. */
export type SystemName = 'asyncjob' | 'bare' | 'naive';

/** A policy as a start request and the bare workflow take it (the jitter stays asyncjob's default). */
export const delaysOf = (p: BenchPolicy): { baseDelayMs: number; maxDelayMs: number } => ({
  baseDelayMs: p.baseDelayMs,
  maxDelayMs: p.maxDelayMs,
});

/**
 * The bare baseline and the naive loop copy asyncjob's delay formula (they cannot import the product's planner
 * into a minimal workflow bundle); this fails the run when the copy and the product disagree.
 */
export function assertSameDelayRule(): void {
  for (const p of PER_POLL_POLICIES) {
    const policy = pollPolicySchema.parse(delaysOf(p));
    for (let attempt = 0; attempt <= 8; attempt++) {
      for (const random of [0, 0.1, 0.37, 0.5, 0.81, 0.999]) {
        const product = jitterMs(rawBackoffMs(policy, attempt), policy, random);
        const copy = jitteredMs(rawDelayMs(p, attempt), p, random);
        if (product !== copy)
          throw new Error(
            `bench/bare/poll-plan.ts differs from the planner: ${p.name}, attempt ${attempt}: ${copy} vs ${product}`,
          );
      }
    }
  }
}
