/**
 * The load-with-faults run (scripts/soak.ts) at a reduced count on the shared dev server: every operation ends in
 * a final state or a bounded escalation, no provider job is duplicated, no result is lost; prints its table.
 */
import { describe, expect, inject, it } from 'vitest';
import { formatSoakReport, runSoak } from '../../../scripts/soak';

describe('load with faults (reduced)', () => {
  it('F1, F7, I1, R2: 60 operations with 5% of provider calls faulted: all end, zero duplicate jobs, zero lost results', async () => {
    const report = await runSoak({
      count: 60,
      seed: 9,
      faultRate: 0.05,
      createDeadlineMs: 15_000,
      temporalAddress: inject('temporalAddress'),
      log: () => {},
    });
    console.log(formatSoakReport(report));
    expect(report.violations).toEqual([]);
    expect(report.maxJobsPerToken).toBe(1);
    expect(Object.values(report.outcomes).reduce((a, b) => a + b, 0)).toBe(60);
    // The faults were real: the simulators applied some, and most operations still succeeded.
    expect(Object.values(report.faultsApplied).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(report.outcomes.succeeded ?? 0).toBeGreaterThanOrEqual(50);
  }, 240_000);
});
