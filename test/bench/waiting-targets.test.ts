import { describe, expect, it } from 'vitest';
import { waitingTargets, WAITING_SCALES, type WaitingResult } from '../../bench/phases/waiting';
import type { WaitingLevel } from '../../bench/phases/waiting/result';

const level = (waiting: number, peak: number, settled: number): WaitingLevel =>
  ({
    waiting,
    started: waiting,
    windowSeconds: 240,
    workerRssPeakMiB: peak,
    workerRssSettledMiB: settled,
  }) as WaitingLevel;

const result = (scale: keyof typeof WAITING_SCALES, levels: WaitingLevel[]): WaitingResult =>
  ({
    scale: WAITING_SCALES[scale],
    maxCachedWorkflows: 128,
    levels,
    settledGrowthRatio: levels.length < 2 ? null : levels[1]!.workerRssSettledMiB / levels[0]!.workerRssSettledMiB,
  }) as WaitingResult;

describe("figure 3's targets", () => {
  it('judges the full scale at 20,000 waiting against 1 GiB and its growth', () => {
    const targets = waitingTargets(result('full', [level(2_000, 400, 380), level(20_000, 560, 400)]));
    expect(targets.map((t) => [t.target, t.met])).toEqual([
      ['< 1024', true],
      ['<= 1.15', true],
    ]);
    expect(targets[0]!.name).toContain('20,000 operations waiting');
  });

  it('judges the large scale at 100,000 waiting against 2 GiB, with no growth target', () => {
    const targets = waitingTargets(result('large', [level(20_000, 560, 400), level(100_000, 1_500, 900)]));
    expect(targets.map((t) => [t.target, t.measured, t.met])).toEqual([['< 2048', 1_500, true]]);
    expect(waitingTargets(result('large', [level(20_000, 560, 400), level(100_000, 2_100, 900)]))[0]!.met).toBe(false);
  });

  it('shows a fill stopped short of the second level without meeting the target', () => {
    const [peak] = waitingTargets(result('large', [level(20_000, 560, 400), level(81_234, 1_200, 800)]));
    expect(peak!.met).toBe(false);
    expect(peak!.name).toContain('81,234 operations waiting');
    expect(peak!.target).toBe('< 2048 at 100,000 (not reached)');
  });
});
