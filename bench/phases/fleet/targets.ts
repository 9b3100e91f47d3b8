/** The target that figure 4 measures, `met` computed from the figure and its condition. */
import type { Target } from '../../lib/targets';
import type { FleetResult } from './result';

/**
 * The target: status reads' peak / mean of a herd, with the server not saturated. The plan alone (the naive loop)
 * measures about 2.6: every operation's first reads fall within its first delays, so no jitter inside the policy's
 * delays reaches this; the figure says how far the herd is from it.
 */
const TARGET_PEAK_OVER_MEAN = 1.2;

/**
 * The fleet target: the median over asyncjob's herds of the smallest size. A saturated server smears a herd and
 * lowers the ratio, so it is met only when no round of that size saturated the server.
 */
export function fleetTargets(f: FleetResult | undefined): Target[] {
  const size = f?.sizes[0];
  if (!f || !size) return [];
  const measured = size.statusReadsPeakOverMean.asyncjob.median;
  const rounds = f.rounds.filter((r) => r.system === 'asyncjob' && r.operations === size.operations).length;
  return [
    {
      name: `fleet: status reads' peak / mean per second, herds of ${size.operations} operations started together (median of ${rounds}; naive loop, same plan: ${size.statusReadsPeakOverMean.naive.median}), server ${size.saturated ? 'SATURATED' : 'not saturated'}`,
      target: `<= ${TARGET_PEAK_OVER_MEAN}`,
      measured,
      unit: 'ratio',
      met: measured <= TARGET_PEAK_OVER_MEAN && !size.saturated,
      conditions: size.evidence.map((e, i) => `asyncjob herd ${i + 1}: ${e}`).join('; '),
    },
  ];
}
