/**
 * Renders a bench run's results as a markdown table: every figure with its unit and, where the issue sets one,
 * its target and whether it was met.
 */
import type { FleetResult } from '../phases/fleet';
import type { ReactionResult } from '../phases/reaction';
import type { SimulatorResult } from '../phases/simulator';
import type { StoreEngineResult, StoreResult } from '../phases/store';
import type { PerPollResult, ThroughputResult } from '../phases/throughput';
import { workflowHeapUsedMiB, type WaitingResult } from '../phases/waiting';

/** What `bench/run.ts` collects. */
export interface BenchResults {
  mode?: string;
  startedAt?: string;
  durationSeconds?: number;
  machine?: {
    cpus: number;
    cpuModel: string;
    memoryGiB: number;
    platform: string;
    node: string;
    loadAverageAtStart?: number;
    loadAverageAtEnd?: number;
  };
  temporal?: { serverVersion: string };
  throughput?: ThroughputResult;
  perPoll?: PerPollResult;
  waiting?: WaitingResult;
  fleet?: FleetResult;
  reaction?: ReactionResult;
  store?: StoreResult;
  simulator?: SimulatorResult;
}

type Row = [figure: string, value: string | number, unit: string, target?: string, met?: boolean];

function verdict(met: boolean | undefined): string {
  return met === undefined ? '' : met ? 'met' : '**missed**';
}

/** The markdown of one run. */
export function renderMarkdown(input: Record<string, unknown>): string {
  const r = input as BenchResults;
  const rows: Row[] = [];
  const lines: string[] = [];
  if (r.throughput) {
    const t = r.throughput;
    lines.push('### 1. Throughput, start to verified result (ops/s; 3 status reads per operation)', '');
    lines.push(
      '| concurrency | asyncjob | bare Temporal | naive loop | asyncjob / bare | asyncjob / naive | asyncjob p50 / p99 latency (ms) | worker CPU ms/op asyncjob / bare | server CPU ms/op asyncjob / bare |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    t.systems.asyncjob.forEach((a, i) => {
      const b = t.systems.bare[i]!;
      const n = t.systems.naive[i]!;
      const ratio = t.ratios[i]!;
      lines.push(
        `| ${a.concurrency} | ${a.opsPerSecond} | ${b.opsPerSecond} | ${n.opsPerSecond} | ${ratio.asyncjobOverBare} | ${ratio.asyncjobOverNaive} | ${a.latencyP50Ms} / ${a.latencyP99Ms} | ${a.workerCpuMsPerOperation} / ${b.workerCpuMsPerOperation} | ${a.serverCpuMsPerOperation} / ${b.serverCpuMsPerOperation} |`,
      );
    });
    lines.push('');
    const worst = Math.min(...t.ratios.map((x) => x.asyncjobOverBare));
    rows.push([
      'asyncjob / bare Temporal throughput (lowest over concurrencies)',
      worst,
      'ratio',
      '>= 0.7',
      worst >= 0.7,
    ]);
    const top = t.ratios[t.ratios.length - 1]!;
    rows.push([`asyncjob / naive loop throughput at concurrency ${top.concurrency}`, top.asyncjobOverNaive, 'ratio']);
  }
  if (r.perPoll) {
    const p = r.perPoll;
    rows.push([
      'history events per status read (marginal)',
      p.historyEventsPerPoll,
      'events',
      '<= 12',
      p.historyEventsPerPoll <= 12,
    ]);
    rows.push(['history events per operation (3 reads)', p.historyEventsPerOperation, 'events']);
    rows.push(['history size per operation (3 reads)', p.historyBytesPerOperation, 'bytes']);
    rows.push(['history size per status read (marginal)', p.historyBytesPerPoll, 'bytes']);
    rows.push(['journal entries per status read (marginal)', p.journalEntriesPerPoll, 'entries']);
    rows.push(['snapshot writes per status read (marginal)', p.snapshotWritesPerPoll, 'writes']);
    rows.push(['added latency per status read over the naive loop', p.addedLatencyPerPollMs, 'ms']);
  }
  if (r.waiting) {
    const w = r.waiting;
    rows.push([
      `worker RSS with ${w.operations} operations waiting`,
      w.workerRssMiB,
      'MiB',
      w.operations >= w.targetOperations ? '< 1024' : undefined,
      w.operations >= 10_000 ? w.workerRssMiB < 1024 : undefined,
    ]);
    if (w.operations < w.targetOperations)
      rows.push([
        `worker RSS extrapolated to ${w.targetOperations} waiting`,
        w.workerRssAtTargetMiB,
        'MiB',
        '< 1024',
        w.targetOperations >= 10_000 ? w.workerRssAtTargetMiB < 1024 : undefined,
      ]);
    rows.push([
      'worker RSS per waiting operation (average; falls once the workflow cache is full)',
      w.workerRssPerOperationKiB,
      'KiB',
    ]);
    rows.push(['worker RSS growth per operation over the second half of the starts', w.workerRssLateSlopeKiB, 'KiB']);
    const loaded = w.workerMemoryLoaded.afterGc;
    const idle = w.workerMemoryIdle.afterGc;
    const cached = loaded.workflowWorker.numCachedWorkflows;
    if (cached > 0) {
      const perCached = ((workflowHeapUsedMiB(loaded) - workflowHeapUsedMiB(idle)) / cached) * 1024;
      rows.push([
        `live workflow heap per cached workflow (${cached} cached of ${loaded.workflowWorker.maxCachedWorkflows})`,
        Math.round(perCached),
        'KiB',
      ]);
    }
    rows.push([`dev server RSS with ${w.operations} operations waiting`, w.serverRssMiB, 'MiB']);
    rows.push([`time to start ${w.operations} operations until all wait`, w.startAllSeconds, 's']);
  }
  if (r.fleet) {
    const f = r.fleet;
    rows.push([
      `provider pressure, ${f.unlimited.operations} operations: peak / mean (all requests)`,
      f.unlimited.all.peakOverMean,
      'ratio',
      '< 2',
      f.unlimited.all.peakOverMean < 2,
    ]);
    rows.push([
      'provider pressure: peak / mean in the busy window (middle 95% of requests)',
      f.unlimited.all.busyPeakOverMean,
      'ratio',
      '< 2',
      f.unlimited.all.busyPeakOverMean < 2,
    ]);
    rows.push([
      'provider pressure: peak / mean (status reads only; busy window)',
      `${f.unlimited.statusReads.peakOverMean}; ${f.unlimited.statusReads.busyPeakOverMean}`,
      'ratio',
    ]);
    rows.push([
      `rate-limited peak (limit ${f.limited.maxRequestsPerSecond}/s), 1-s buckets / sliding 1 s`,
      `${f.limited.all.peakPerSecond} / ${f.limited.all.peakSlidingPerSecond}`,
      'req/s',
      `<= ${f.limited.maxRequestsPerSecond}`,
      f.limited.withinLimit ?? undefined,
    ]);
  }
  if (r.reaction) {
    const x = r.reaction;
    rows.push(['reaction by polling p50 / p99', `${x.polling.p50Ms} / ${x.polling.p99Ms}`, 'ms']);
    rows.push([
      'reaction by webhook p50 / p99',
      `${x.webhook.p50Ms} / ${x.webhook.p99Ms}`,
      'ms',
      'p99 < 500',
      x.webhook.p99Ms < 500,
    ]);
  }
  if (r.store) {
    const engines: StoreEngineResult[] = [
      r.store.sqlite,
      ...('engine' in r.store.postgresql ? [r.store.postgresql] : []),
    ];
    for (const e of engines) {
      rows.push([
        `${e.engine}: one append at ${e.storedObservations} observations, median / p99`,
        `${e.appendMedianMs} / ${e.appendP99Ms}`,
        'ms',
      ]);
      rows.push([
        `${e.engine}: appends per second, one at a time / 16 concurrent`,
        `${e.sequentialAppendsPerSecond} / ${e.concurrentAppendsPerSecond}`,
        'appends/s',
      ]);
    }
    if (!('engine' in r.store.postgresql)) rows.push(['postgresql', `skipped: ${r.store.postgresql.skipped}`, '']);
  }
  if (r.simulator) {
    rows.push([
      `simulator status reads served (${r.simulator.connections} connections)`,
      r.simulator.statusReadsPerSecond,
      'req/s',
      '>= 2000',
      r.simulator.statusReadsPerSecond >= 2000,
    ]);
  }
  const head = [
    `## asyncjob benchmark (${r.mode ?? 'full'} run, ${r.startedAt ?? ''}, ${r.durationSeconds ?? '?'} s)`,
    '',
    r.machine
      ? `Machine: ${r.machine.cpus} x ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, ${r.machine.platform}, Node.js ${r.machine.node}; Temporal ${r.temporal?.serverVersion ?? '?'} dev server (SQLite file); load average ${r.machine.loadAverageAtStart ?? '?'} at start, ${r.machine.loadAverageAtEnd ?? '?'} at end.`
      : '',
    '',
    '| figure | value | unit | target | |',
    '|---|---|---|---|---|',
    ...rows.map(
      ([figure, value, unit, target, met]) => `| ${figure} | ${value} | ${unit} | ${target ?? ''} | ${verdict(met)} |`,
    ),
    '',
  ];
  return `${[...head, ...lines].join('\n')}\n`;
}
