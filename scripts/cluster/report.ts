/** A cluster run's report: what ran, what the chaos did, what the providers and the checks saw. */
import type { Dialect } from '../load/plan';
import { formatRows, percentile, type LoadViolation, type ProviderTotals } from '../load/verify';
import type { ChaosEvent } from './chaos';
import type { FleetStats } from './fleet';
import type { PartitionReport } from './partition';
import type { ReadBack } from './results';
import type { FleetRate } from './rate';

export interface ClusterReport {
  runId: string;
  count: number;
  workers: number;
  durationMs: number;
  outcomes: Record<string, number>;
  totals: ProviderTotals;
  faultsPlanned: Record<string, number>;
  fleet: FleetStats;
  chaos: ChaosEvent[];
  /** Client calls retried while the cluster was briefly away, by error. */
  transientRetries: Record<string, number>;
  /** The configured limit, requests per second per provider (ASYNCJOB_PROVIDER_RATE_LIMIT on every worker). */
  ratePerSecond: number;
  /** Per provider, the requests it saw; those the partition's network held are reported, not counted. */
  rates: Record<Dialect, FleetRate>;
  audit: string;
  /** Where the processes ran and where results were kept. */
  placement: string;
  /**
   * The operations planned to escalate for a human review, and those whose review the chaos made moot: the
   * provider's answer was lost before it was recorded, and the next read found the job finished.
   */
  reviews: { planned: number; lostBeforeRecord: string[] };
  /** Results read back on the client's host (with an object store). */
  readBack?: ReadBack;
  /** What the partition did (with separate hosts). */
  partition?: Omit<PartitionReport, 'problems'>;
  violations: LoadViolation[];
  /** Failed checks that are not about one operation (visibility, audit, a worker crash, a restart not done). */
  problems: string[];
}

const sum = (values: Record<string, number>): number => Object.values(values).reduce((a, b) => a + b, 0);

export function formatClusterReport(report: ClusterReport): string {
  const boot = [...report.fleet.bootMs].sort((a, b) => a - b);
  const rows: [string, string][] = [
    ['operations / workers', `${report.count} / ${report.workers}`],
    ['placement', report.placement],
    ['duration', `${Math.round(report.durationMs / 1000)} s`],
    ...Object.entries(report.outcomes)
      .sort()
      .map(([outcome, n]): [string, string] => [`outcome ${outcome}`, String(n)]),
    ['provider requests', String(report.totals.requests)],
    ['faults planned / applied', `${sum(report.faultsPlanned)} / ${sum(report.totals.faultsApplied)}`],
    ['max provider jobs per token', String(report.totals.maxJobsPerToken)],
    ['workers started / SIGKILLed', `${report.fleet.started} / ${report.fleet.killed}`],
    ['workers that exited 5 (Temporal unreachable)', String(report.fleet.unreachableExits.length)],
    ['worker boot p50 / max', `${percentile(boot, 50)} / ${boot.at(-1) ?? 0} ms`],
    ['client calls retried', JSON.stringify(report.transientRetries)],
    [
      'reviews planned / answered',
      `${report.reviews.planned} / ${report.reviews.planned - report.reviews.lostBeforeRecord.length}` +
        (report.reviews.lostBeforeRecord.length > 0
          ? ` (the answer that asked for one was lost before its record, and the job read again had finished: ${report.reviews.lostBeforeRecord.join(', ')})`
          : ''),
    ],
    ...report.chaos
      .filter((event) => event.tookMs !== undefined)
      .map((event): [string, string] => [event.what, `at ${Math.round(event.atMs / 1000)} s, took ${event.tookMs} ms`]),
    ...Object.entries(report.rates).map(([dialect, rate]): [string, string] => [
      `rate ${dialect} (limit ${report.ratePerSecond}/s)`,
      `max ${rate.maxInWindow} in any 1 s, mean ${rate.meanPerSecond}/s, ${rate.windowsOverLimit} windows over` +
        (rate.heldThroughPartition > 0
          ? `; ${rate.heldThroughPartition} held by the partition's network, not counted`
          : ''),
    ]),
    ...(report.partition
      ? [
          [
            'partition',
            `worker pid ${report.partition.pid} cut off for ${Math.round(report.partition.cutForMs / 1000)} s holding ${report.partition.held} provider calls: ${report.partition.resumedElsewhere} resumed by other workers, ${report.partition.finishedAfterRestore} finished by it after it was joined again` +
              (report.partition.briefCuts > 0
                ? ` (after ${report.partition.briefCuts} brief cuts that found it holding none)`
                : ''),
          ] as [string, string],
        ]
      : []),
    ...(report.readBack
      ? [
          [
            'results read back on the client host',
            `${report.readBack.viaLibrary} by AsyncJobClient.readResult, ${report.readBack.viaCli} by asyncjob result --out, ${report.readBack.problems.length} failed`,
          ] as [string, string],
        ]
      : []),
    ['audit verify --with-temporal', report.audit],
    ['violations / problems', `${report.violations.length} / ${report.problems.length}`],
  ];
  const lines = formatRows(rows);
  for (const v of report.violations.slice(0, 50)) lines.push(`  VIOLATION ${v.kind} ${v.operationId}: ${v.detail}`);
  for (const problem of report.problems) lines.push(`  PROBLEM ${problem}`);
  return lines.join('\n');
}
