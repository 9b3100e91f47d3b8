/** The targets that figure 3 measures, each `met` computed from the figures. */
import type { BenchTarget } from '../throughput';
import type { WaitingResult } from './result';

const counted = (n: number): string => n.toLocaleString('en');

/**
 * Worker RSS at the second level, and its growth from the first (the names say the counts measured). A run whose
 * fill stopped short of the scale's second level has not measured its target: the peak is shown, not met.
 */
export function waitingTargets(w: WaitingResult | undefined): BenchTarget[] {
  if (!w || w.levels.length === 0) return [];
  const [first, last] = [w.levels[0]!, w.levels[w.levels.length - 1]!];
  const { targetRssMiB, targetGrowthRatio } = w.scale;
  const reached = last.waiting >= w.scale.levels[1];
  const churn = `${w.scale.wakers} of them waking every ${w.scale.wakerDelayMs / 2_000}-${w.scale.wakerDelayMs / 1_000} s, workflow cache ${w.maxCachedWorkflows}`;
  const peak: BenchTarget = {
    name: `worker RSS with ${counted(last.waiting)} operations waiting (${churn}), highest sample over ${last.windowSeconds} s`,
    target: `< ${targetRssMiB}${reached ? '' : ` at ${counted(w.scale.levels[1])} (not reached)`}`,
    measured: last.workerRssPeakMiB,
    unit: 'MiB',
    met: reached && last.workerRssPeakMiB < targetRssMiB,
  };
  // With one level held (the budget ran out first) there is no growth to measure: that target is absent.
  if (targetGrowthRatio === undefined || w.levels.length < 2 || w.settledGrowthRatio === null) return [peak];
  return [
    peak,
    {
      name: `worker RSS growth from ${counted(first.waiting)} to ${counted(last.waiting)} operations waiting, settled (median of each window's last three quarters)`,
      target: `<= ${targetGrowthRatio}`,
      measured: w.settledGrowthRatio,
      unit: 'ratio',
      met: w.settledGrowthRatio <= targetGrowthRatio,
    },
  ];
}
