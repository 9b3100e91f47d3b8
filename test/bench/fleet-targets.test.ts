import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fleetTargets, type FleetResult } from '../../bench/phases/fleet';
import { FLEET_POLICY } from '../../bench/phases/fleet/herd';
import { describeAccount, herdAccount } from '../../bench/phases/fleet/drain';
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

describe("the rate-limited herd's account", () => {
  /** One operation's requests: its create, two reads and its collect, at the given offsets (ms), all answered 200. */
  const operation = (jobId: string, atMs: number[]): RequestRecord[] =>
    (['create', 'status', 'status', 'result'] as const).map(
      (action, i) => ({ atMs: 1_000_000 + atMs[i]!, action, jobId, status: 200 }) as RequestRecord,
    );

  it('says a herd made its plan and ended with its pace', () => {
    const records = [operation('a', [0, 100, 200, 300]), operation('b', [50, 150, 250, 350])].flat();
    const account = herdAccount(records, 2, 2, 2);
    expect(account).toMatchObject({ plannedRequests: 8, beyondPlan: {}, notSucceeded: {}, afterPace: [] });
    expect(describeAccount(account)).toBe('requests against the plan of 8: as planned; none after the pace ended');
  });

  it('names a request beyond the plan, a failed answer and the stragglers after the pace', () => {
    const paced = Array.from({ length: 10 }, (_, i) =>
      operation(`j${i}`, [i * 100, i * 100 + 1_000, i * 100 + 1_050, i * 100 + 1_080]),
    );
    const late = operation('late', [500, 4_200, 5_300, 5_400]);
    const resent = { ...late[1]!, atMs: late[1]!.atMs - 3_000, status: 503 } as RequestRecord;
    const account = herdAccount([...paced.flat(), ...late, resent], 11, 2, 20);
    expect(account.beyondPlan).toEqual({ status: 1 });
    expect(account.notSucceeded).toEqual({ '503': 1 });
    expect(account.paceEndedAtSeconds).toBe(2);
    expect(account.afterPace.map((r) => [r.action, r.atSeconds, r.jobSeenAtSeconds])).toEqual([
      ['status', 4.2, 0.5],
      ['status', 5.3, 0.5],
      ['result', 5.4, 0.5],
    ]);
    expect(describeAccount(account)).toBe(
      'requests against the plan of 44: +1 status; 1 answered 503; 3 after the pace ended at 2 s (status at 4.2 s, status at 5.3 s, result at 5.4 s)',
    );
  });
});
