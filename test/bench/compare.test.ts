import { describe, expect, it } from 'vitest';
import { compareRuns, keyOf } from '../../bench/compare';
import type { BenchResults } from '../../bench/lib/report';

const writes = (policy: string, reads: number, baseline: number) =>
  `the server's persisted writes per status read at the ${policy} policy, ${reads}-read operation (amortised), against Temporal's recommended pattern (the cheaper of a heartbeating activity, ${baseline}, and activity retries, 5.56, in this run)`;

const run = (figures: Record<string, number>, missed: string[] = []): BenchResults =>
  ({
    targets: Object.entries(figures).map(([name, measured]) => ({
      name,
      target: '<= 1',
      measured,
      unit: 'writes',
      met: !missed.includes(name),
    })),
  }) as BenchResults;

describe('comparing two bench runs', () => {
  it('keeps the policy and the read count in a target key, and masks what a run measured', () => {
    expect(keyOf(writes('1s', 20, 0.67))).not.toBe(keyOf(writes('60s', 3, 0.67)));
    expect(keyOf(writes('5s', 3, 4.56))).not.toBe(keyOf(writes('20s', 3, 4.56)));
    expect(keyOf(writes('60s', 3, 5.11))).toBe(keyOf(writes('60s', 3, 5)));
    expect(keyOf('worker RSS with 19,994 operations waiting, highest sample over 240.2 s')).toBe(
      keyOf('worker RSS with 20,000 operations waiting, highest sample over 240.1 s'),
    );
    expect(keyOf('history events per status read at a 1 s policy')).not.toBe(
      keyOf('history events per status read at a 5 s policy'),
    );
  });

  it('pairs each target with the same target of the other run', () => {
    const a = run({ [writes('1s', 20, 0.67)]: 0.63, [writes('60s', 3, 5.11)]: 5.89 });
    const b = run({ [writes('1s', 20, 0.66)]: 0.62, [writes('60s', 3, 5)]: 5.89 });
    expect(compareRuns(a, b).map((f) => [f.runA, f.runB])).toEqual([
      [0.63, 0.62],
      [5.89, 5.89],
    ]);
  });

  it("carries each run's own verdict of a target, so a pair meets it only when both runs did", () => {
    const throughput =
      'asyncjob / bare Temporal throughput at the 1 s policy, lowest over concurrency 1, 10 (ratio of medians)';
    const a = run({ [throughput]: 1.096, [writes('60s', 3, 5.11)]: 5.89 }, [writes('60s', 3, 5.11)]);
    const b = run({ [throughput]: 0.989, [writes('60s', 3, 5)]: 5.89 }, [throughput, writes('60s', 3, 5)]);
    expect(compareRuns(a, b).map((f) => f.met)).toEqual([
      { runA: true, runB: false },
      { runA: false, runB: false },
    ]);
  });
});
