import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pollPolicySchema } from '../../src/core/policy';
import { planWait, rawBackoffMs } from '../../src/core/wait-time';
import { T0, obs } from './helpers';

const POLICY = pollPolicySchema.parse({});
const NOW = T0 + 1000;

describe('planWait takes the deadline, the policy and the counts it plans with (P2, P3, H1)', () => {
  it('P3, U4: a Retry-After past the deadline it is given waits for that deadline, never beyond', () => {
    const deadlineMs = NOW + 30_000;
    const observation = obs({ httpStatus: 503, retryAfter: '60', receivedAtMs: NOW });
    const plan = planWait(
      { observation, policy: POLICY, deadlineMs, backoffAttempt: 0, rateLimitedInARow: 0 },
      { nowMs: NOW, random: 0.5 },
    );
    expect(plan).toMatchObject({ kind: 'deadline_wait', atMs: deadlineMs, source: 'deadline' });
  });

  it('P2, H1: the delay follows the backoff attempt given, and a run of 429s without Retry-After lengthens it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 1, max: 5 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (backoffAttempt, rateLimitedInARow, random) => {
          const input = { policy: POLICY, deadlineMs: NOW + 86_400_000, backoffAttempt };
          const ctx = { nowMs: NOW, random };
          const plain = planWait({ ...input, observation: obs({ receivedAtMs: NOW }), rateLimitedInARow: 0 }, ctx);
          const limited = planWait(
            { ...input, observation: obs({ httpStatus: 429, receivedAtMs: NOW }), rateLimitedInARow },
            ctx,
          );
          expect(plain.rawMs).toBe(rawBackoffMs(POLICY, backoffAttempt));
          expect(limited.rawMs).toBeGreaterThan(plain.rawMs);
          expect(limited.atMs).toBeGreaterThanOrEqual(plain.atMs);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('P2: the backoff counts from the answer, so an answer that took 4 s to arrive does not shorten the next wait', () => {
    const sentAtMs = NOW;
    const answeredAtMs = NOW + 4_000;
    const observation = obs({ receivedAtMs: answeredAtMs });
    const policy = { ...POLICY, baseDelayMs: 5_000, maxDelayMs: 5_000, minJitterRatio: 1 };
    const plan = planWait(
      { observation, policy, deadlineMs: NOW + 86_400_000, backoffAttempt: 0, rateLimitedInARow: 0 },
      { nowMs: sentAtMs, random: 0.5 },
    );
    expect(plan).toMatchObject({ kind: 'poll', atMs: answeredAtMs + 5_000, source: 'local_backoff' });
  });
});
