import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fleetTargets, type FleetResult } from '../../bench/phases/fleet';
import { FLEET_POLICY } from '../../bench/phases/fleet/herd';
import { pressure } from '../../bench/phases/fleet/pressure';
import { pollPolicySchema } from '../../src/core/policy';
import { jitterMs, rawBackoffMs } from '../../src/core/wait-time';
import type { RequestRecord } from '../../src/simulator';

/** Requests at the given offsets (ms) from one instant. */
const requests = (offsetsMs: number[]): RequestRecord[] =>
  offsetsMs.map((atMs) => ({ atMs: 1_000_000 + atMs, action: 'status' }) as RequestRecord);

/** `perSecond[i]` requests spread evenly inside second i. */
const shaped = (perSecond: number[]): RequestRecord[] =>
  requests(perSecond.flatMap((n, s) => Array.from({ length: n }, (_, i) => s * 1_000 + Math.floor((i * 1_000) / n))));

const result = (records: RequestRecord[], limit: number): FleetResult =>
  ({
    policy: { baseDelayMs: 1_000, maxDelayMs: 4_000 },
    rounds: [],
    sizes: [
      {
        operations: 20,
        statusReadsPeakOverMean: {
          asyncjob: { min: 2.2, median: 2.4, max: 2.6 },
          naive: { min: 2.5, median: 2.7, max: 2.9 },
        },
        saturated: false,
        evidence: [],
      },
    ],
    limited: {
      operations: 150,
      statusReadsPerOperation: 2,
      maxRequestsPerSecond: limit,
      completeSeconds: 30,
      all: pressure(records),
      bucketsPerSecond: [],
      withinLimit: pressure(records).peakPerSecond <= limit,
    },
  }) as unknown as FleetResult;

describe("figure 4's target", () => {
  it('is met by a herd the pacer levels under its limit', () => {
    const [target] = fleetTargets(result(shaped([17, 19, 18, 19, 19, 18, 12]), 20));
    expect(target!.met).toBe(true);
    expect(target!.measured).toBeLessThanOrEqual(1.2);
    expect(target!.conditions).toContain('asyncjob 2.4, naive loop 2.7');
  });

  it('is missed by a pacer that sends in bursts, even under its limit', () => {
    const [target] = fleetTargets(result(shaped([20, 4, 20, 4, 20, 4]), 20));
    expect(target!.measured).toBeGreaterThan(1.2);
    expect(target!.met).toBe(false);
  });

  it('is missed when a second went over the limit, however level the rest', () => {
    const [target] = fleetTargets(result(shaped([21, 20, 20, 20, 20]), 20));
    expect(target!.measured).toBeLessThanOrEqual(1.2);
    expect(target!.met).toBe(false);
  });
});

describe("the unlimited herd's floor under rule P2", () => {
  const policy = pollPolicySchema.parse(FLEET_POLICY);
  const READS = 4;

  it('keeps peak / mean at 1.5 or more for any draws when the creates land within 0.5 s', () => {
    const herd = fc.array(
      fc.record({
        createdAtMs: fc.integer({ min: 0, max: 500 }),
        draws: fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
          minLength: READS,
          maxLength: READS,
        }),
        answerMs: fc.array(fc.integer({ min: 0, max: 50 }), { minLength: READS, maxLength: READS }),
      }),
      { minLength: 20, maxLength: 20 },
    );
    fc.assert(
      fc.property(herd, (operations) => {
        const reads = operations.flatMap(({ createdAtMs, draws, answerMs }) => {
          let answeredAtMs = createdAtMs;
          return draws.map((random, attempt) => {
            const sentAtMs = answeredAtMs + jitterMs(rawBackoffMs(policy, attempt), policy, random);
            answeredAtMs = sentAtMs + answerMs[attempt]!;
            return sentAtMs;
          });
        });
        expect(pressure(requests(reads)).peakOverMean).toBeGreaterThanOrEqual(1.5);
      }),
      { numRuns: 500 },
    );
  });
});
