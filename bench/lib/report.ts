/**
 * Renders a bench run's results as a markdown table: every figure with its unit and, where the issue sets one,
 * its target and whether it was met.
 */
import type { FleetResult } from '../phases/fleet';
import type { ReactionResult } from '../phases/reaction';
import type { SimulatorResult } from '../phases/simulator';
import type { StoreEngineResult, StoreResult } from '../phases/store';
import type { PerPollResult, ThroughputResult } from '../phases/throughput';
import type { WaitingResult } from '../phases/waiting';
import type { CodeVersion } from './code-version';
import type { MachineInfo, PhaseLoad } from './machine';
import { fleetLines, reactionLines, waitingLines } from './report-sections';
import type { Target } from './targets';

/** What `bench/run.ts` collects. */
export interface BenchResults {
  mode?: string;
  startedAt?: string;
  /** The commit measured (absent in results written before it was recorded). */
  code?: CodeVersion;
  durationSeconds?: number;
  machine?: MachineInfo;
  temporal?: { serverVersion: string; server?: string; serverRssAtEndMiB?: number };
  load?: PhaseLoad[];
  warnings?: string[];
  failures?: string[];
  targets?: Target[];
  throughput?: ThroughputResult;
  perPoll?: PerPollResult;
  waiting?: WaitingResult;
  fleet?: FleetResult;
  reaction?: ReactionResult;
  store?: StoreResult;
  simulator?: SimulatorResult;
}

/** The measured commit as the report's heading names it. */
const codeText = (code: CodeVersion | undefined): string =>
  code === undefined ? 'not recorded' : `${code.commit.slice(0, 12)}${code.changed ? ' with local changes' : ''}`;

type Row = [figure: string, value: string | number, unit: string, target?: string, met?: boolean];

const pct = (share: number): string => `${Math.round(share * 100)}%`;

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
    lines.push(
      '### 1. Throughput, start to verified result (ops/s, min / median / max over rounds; 3 status reads per operation)',
      '',
      `Rounds alternate asyncjob (A) and bare Temporal (B); the naive loop runs three rounds per point after them. asyncjob / bare is the ratio of the medians, with the lowest and highest ratio of a pair of rounds. Timers and history events per operation are medians over up to 3 operations of each round, read from their histories. Warm-up ${t.warmUpSeconds} s; figure 1 took ${t.seconds} s; asyncjob re-sent ${t.asyncjobExtraStatusReads} status reads lost under load.`,
      '',
    );
    const mmm = (s: { min: number; median: number; max: number }): string => `${s.min} / **${s.median}** / ${s.max}`;
    for (const policy of t.policies) {
      const delays =
        policy.baseDelayMs === policy.maxDelayMs
          ? `${policy.baseDelayMs} ms`
          : `${policy.baseDelayMs}-${policy.maxDelayMs} ms`;
      lines.push(`#### Policy ${policy.name} (${delays}, bounded jitter), ${policy.seconds} s`, '');
      lines.push(
        '| concurrency | ops / round | rounds | asyncjob | bare Temporal | naive loop | asyncjob / bare (pairs min-max) | asyncjob / naive | timers / op A / B | history events / op A / B | asyncjob p50 / p99 latency (ms) | worker CPU ms/op A / B | server CPU ms/op A / B |',
        '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      );
      for (const x of policy.points) {
        const a = x.asyncjob;
        const b = x.bare;
        lines.push(
          `| ${x.concurrency} | ${x.operationsPerRound}${x.naiveOperationsPerRound !== x.operationsPerRound ? ` (naive ${x.naiveOperationsPerRound})` : ''} | ${x.order} | ${mmm(a.opsPerSecond)} | ${mmm(b.opsPerSecond)} | ${x.naive.opsPerSecond.median} | **${x.asyncjobOverBare.ofMedians}** (${x.asyncjobOverBare.pairMin}-${x.asyncjobOverBare.pairMax}) | ${x.asyncjobOverNaive} | ${a.timersPerOperation ?? '?'} / ${b.timersPerOperation ?? '?'} | ${a.historyEventsPerOperation ?? '?'} / ${b.historyEventsPerOperation ?? '?'} | ${a.latencyP50Ms} / ${a.latencyP99Ms} | ${a.workerCpuMsPerOperation} / ${b.workerCpuMsPerOperation} | ${a.serverCpuMsPerOperation} / ${b.serverCpuMsPerOperation} |`,
        );
      }
      lines.push('');
      const top = policy.points[policy.points.length - 1];
      if (top)
        rows.push([
          `asyncjob / naive loop throughput, policy ${policy.name}, concurrency ${top.concurrency}`,
          top.asyncjobOverNaive,
          'ratio',
        ]);
    }
    for (const note of t.notes) lines.push(`Note: ${note}.`, '');
  }
  if (r.perPoll) {
    const p = r.perPoll;
    const at1s = p.eventsPerReadAt1s;
    rows.push([
      `history events per status read at 1 s, ${at1s.statusReads}-read operation (amortised), bare Temporal`,
      at1s.bare,
      'events',
    ]);
    for (const policy of p.policies) {
      for (const m of policy.marginal) {
        rows.push([
          `${m.system}: history events / bytes per extra status read, policy ${policy.name} (${m.fromReads} -> ${m.toReads} reads)`,
          `${m.eventsPerRead} / ${m.bytesPerRead}`,
          'events / bytes',
        ]);
        if (m.journalEntriesPerRead !== undefined)
          rows.push([
            `${m.system}: journal entries / snapshot writes per extra status read, policy ${policy.name}`,
            `${m.journalEntriesPerRead} / ${m.snapshotWritesPerRead ?? '?'}`,
            'entries / writes',
          ]);
      }
    }
    const added = p.addedLatencyPerReadMs;
    rows.push([
      'added latency per status read over the naive loop, short policy: asyncjob / bare' +
        (added.asyncjob < 0 || added.bare < 0
          ? ' (below zero is no gain: the difference of two medians is within their rounds’ spread)'
          : ''),
      `${added.asyncjob} / ${added.bare}`,
      'ms',
    ]);
    lines.push(
      "### 2. Per-poll cost (medians per operation; concurrency 1 at the short policy, a few side by side from 1 s on; bare-heartbeat and bare-retry are Temporal's recommended polling patterns)",
      '',
      '| policy | system | status reads | samples | history events | events / read | history bytes | bytes / read | timers | server writes / read | heartbeats / read | journal entries | snapshot writes | latency (ms) |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const policy of p.policies)
      for (const o of policy.operations)
        lines.push(
          `| ${policy.name} | ${o.system} | ${o.statusReads} | ${o.samples} | ${o.historyEvents} | ${o.eventsPerRead} | ${o.historyBytes} | ${o.bytesPerRead} | ${o.timersStarted} | ${o.serverWritesPerRead} | ${o.heartbeatsPerRead} | ${o.journalEntries ?? ''} | ${o.snapshotWrites ?? ''} | ${o.latencyMs} |`,
        );
    lines.push(
      '',
      `Short policy, one at a time, whole-operation latency (ms) for 3 / 6 reads: asyncjob ${p.latencyMs.asyncjob.reads3} / ${p.latencyMs.asyncjob.reads6}, bare ${p.latencyMs.bare.reads3} / ${p.latencyMs.bare.reads6}, naive ${p.latencyMs.naive.reads3} / ${p.latencyMs.naive.reads6}. Figure 2 took ${p.seconds} s (${p.policies.map((x) => `${x.name} ${x.seconds} s`).join(', ')}).`,
      '',
    );
  }
  if (r.waiting) lines.push(...waitingLines(r.waiting));
  if (r.fleet) lines.push(...fleetLines(r.fleet));
  if (r.reaction) lines.push(...reactionLines(r.reaction));
  if (r.store) {
    const engines: StoreEngineResult[] = [
      r.store.sqlite,
      ...('engine' in r.store.postgresql ? [r.store.postgresql] : []),
    ];
    for (const e of engines) {
      rows.push([
        `${e.engine}: one provider step's store writes at ${e.fill.journalEntries} entries (as pollStatus makes them, HMAC), p50 / p99 / max`,
        `${e.stepP50Ms} / ${e.stepP99Ms} / ${e.stepMaxMs}`,
        'ms',
      ]);
      rows.push([
        `${e.engine}: first read of an activity (head read + commit) / read of its loop (reservation + commit), p50; p99`,
        `${e.firstReadStepP50Ms} / ${e.loopReadStepP50Ms}; ${e.firstReadStepP99Ms} / ${e.loopReadStepP99Ms}`,
        'ms',
      ]);
      if (e.inCommitCheckpoints)
        rows.push([
          `${e.engine}, same run, SQLite's own checkpoints inside commits (the engine's default): p50 / p99 / max`,
          `${e.inCommitCheckpoints.stepP50Ms} / ${e.inCommitCheckpoints.stepP99Ms} / ${e.inCommitCheckpoints.stepMaxMs}`,
          'ms',
        ]);
      rows.push([
        `${e.engine}: provider steps per second, one at a time / ${e.concurrentOperations} operations side by side`,
        `${e.sequentialStepsPerSecond} / ${e.concurrentStepsPerSecond}`,
        'steps/s',
      ]);
      rows.push([
        `${e.engine}: database size at ${e.fill.journalEntries} entries`,
        Math.round((e.databaseBytes / 2 ** 20) * 10) / 10,
        'MiB',
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
  const targets = r.targets ?? [];
  const head = [
    `## asyncjob benchmark (${r.mode ?? 'full'} run, ${r.startedAt ?? ''}, ${r.durationSeconds ?? '?'} s, code ${codeText(r.code)})`,
    '',
    r.machine
      ? `Machine: ${r.machine.cpus} x ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, ${r.machine.platform}, Node.js ${r.machine.node}; ${r.temporal?.server ?? 'Temporal dev server'}, version ${r.temporal?.serverVersion ?? '?'}; load average ${r.machine.loadAverageAtStart} at start, ${r.machine.loadAverageAtEnd ?? '?'} at end.`
      : '',
    '',
    ...(r.failures && r.failures.length > 0
      ? ['**Phases that failed (no figures):**', '', ...r.failures.map((f) => `- ${f}`), '']
      : []),
    ...(r.warnings && r.warnings.length > 0
      ? ['**The machine was too busy to trust some figures:**', '', ...r.warnings.map((w) => `- ${w}`), '']
      : []),
    ...(targets.length > 0
      ? [
          '### Targets',
          '',
          '| target | measured | unit | target | | measured conditions |',
          '|---|---|---|---|---|---|',
          ...targets.map(
            (t) =>
              `| ${t.name} | ${t.measured} | ${t.unit} | ${t.target} | ${verdict(t.met)} | ${t.conditions ?? ''} |`,
          ),
          '',
        ]
      : []),
    ...(rows.length > 0
      ? [
          '### Figures',
          '',
          '| figure | value | unit | target | |',
          '|---|---|---|---|---|',
          ...rows.map(
            ([figure, value, unit, target, met]) =>
              `| ${figure} | ${value} | ${unit} | ${target ?? ''} | ${verdict(met)} |`,
          ),
          '',
        ]
      : []),
  ];
  if (r.load && r.load.length > 0) {
    lines.push(
      '### The machine during each phase',
      '',
      '| phase | s | load / core at start, mean, max | machine CPU busy | bench | dev server / PostgreSQL (cores) | other work | stolen | warnings |',
      '|---|---|---|---|---|---|---|---|---|',
      ...r.load.map(
        (l) =>
          `| ${l.phase} | ${l.seconds} | ${l.loadPerCore.atStart}, ${l.loadPerCore.mean}, ${l.loadPerCore.max} | ${pct(l.machineBusyShare)} | ${pct(l.benchShare)} | ${l.serverCores ?? ''}${l.postgresqlCores !== undefined ? `PostgreSQL ${l.postgresqlCores}` : ''} | ${pct(l.otherWorkShare)} | ${pct(l.stealShare)} | ${l.warnings.join('; ')} |`,
      ),
      '',
    );
  }
  return `${[...head, ...lines].join('\n')}\n`;
}
