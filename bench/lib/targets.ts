/** The shape of `results.json`'s `targets`: the targets with their measured figures and conditions. */
import type { BenchTarget } from '../phases/throughput';

/** A target with, where a condition bounds it, what was measured about that condition. */
export interface Target extends BenchTarget {
  /** The condition the figure was measured under, as measured (e.g. whether the server was saturated). */
  conditions?: string;
}
