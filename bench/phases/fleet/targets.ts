/** The target that figure 4 measures, `met` computed from the figure and its conditions. */
import type { Target } from '../../lib/targets';
import { describeAccount } from './drain';
import type { FleetResult } from './result';

const TARGET_PEAK_OVER_MEAN = 1.2;

/**
 * The fleet target: the requests per second a provider sees from a herd started together, peak / mean, on the
 * configuration the product gives a provider that cannot take a herd (its rate limit, docs/configuration.md). Met
 * only when no second went over the limit either: a pacer that bursts past its limit, or idles between bursts,
 * misses it.
 *
 * The unlimited herds are reported beside it and are not held to 1.2, because rule P2 puts their floor at 1.5:
 * every operation's first read falls 0.5-1 s after its create, so a herd whose creates land within 0.5 s has all
 * its first reads in the first 1-second bucket (peak >= the herd's size), and the four reads of each operation
 * span at least 5 s (waits of at least 0.5 x 1, 2, 4 and 4 s), so the reads cover at least 6 buckets (mean <= 4/6
 * of the herd's size). Only a pacer gets below that; jitter of any shape inside the policy's delays cannot.
 */
export function fleetTargets(f: FleetResult | undefined): Target[] {
  const limited = f?.limited;
  if (!f || !limited) return [];
  const measured = limited.all.peakOverMean;
  const herd = f.sizes[0];
  const unlimited = herd
    ? `; beside it, unlimited herds of ${herd.operations} (status reads, median): asyncjob ${herd.statusReadsPeakOverMean.asyncjob.median}, naive loop ${herd.statusReadsPeakOverMean.naive.median}, held to no target (rule P2's floor is 1.5)`
    : '';
  return [
    {
      name: `fleet: the provider's requests per second, peak / mean (1-second buckets), a herd of ${limited.operations} operations started together on a provider limited to ${limited.maxRequestsPerSecond}/s`,
      target: `<= ${TARGET_PEAK_OVER_MEAN}, no second over the limit`,
      measured,
      unit: 'ratio',
      met: measured <= TARGET_PEAK_OVER_MEAN && limited.withinLimit,
      conditions: `peak ${limited.all.peakPerSecond} per 1-second bucket (${limited.all.peakSlidingPerSecond} in any sliding second) over a mean of ${limited.all.meanPerSecond} across ${limited.all.seconds} s${limited.account ? `; ${describeAccount(limited.account)}` : ''}${unlimited}`,
    },
  ];
}
