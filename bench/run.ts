/**
 * `npx tsx bench/run.ts [--quick] [--only a,b] [--out DIR]`: the asyncjob benchmark in one run. Starts its own
 * Temporal dev server, worker process and simulator processes, measures the seven figures of bench/README.md,
 * prints a markdown table and writes `bench/results.json` and `bench/results.md` (or under `--out`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { codeVersion } from './lib/code-version';
import { createContext, deploy, type BenchContext } from './lib/context';
import { machineInfo, startPhaseLoad, type MachineInfo, type PhaseLoad } from './lib/machine';
import { localPostgresqlPid } from './lib/postgres-server';
import { renderMarkdown } from './lib/report';
import { round, rssMiB } from './lib/stats';
import type { Target } from './lib/targets';
import { fleetTargets, measureFleet, type FleetResult } from './phases/fleet';
import { measureReaction, reactionTargets, type ReactionResult } from './phases/reaction';
import { measureSimulator } from './phases/simulator';
import { measureStore, type StoreResult } from './phases/store';
import { measurePerPoll, measureThroughput, throughputTargets } from './phases/throughput';
import {
  measureWaiting,
  WAITING_SCALES,
  waitingTargets,
  type WaitingResult,
  type WaitingScaleName,
} from './phases/waiting';

const PHASES = ['simulator', 'store', 'throughput', 'per-poll', 'fleet', 'reaction', 'waiting'] as const;
type Phase = (typeof PHASES)[number];

function log(line: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

/** The targets this run measured, each `met` computed from the figures (never written by hand). */
function benchTargets(results: Record<string, unknown>): Target[] {
  const targets: Target[] = throughputTargets(
    results.throughput as Parameters<typeof throughputTargets>[0],
    results.perPoll as Parameters<typeof throughputTargets>[1],
  );
  type SqliteStep = { stepP99Ms: number; targetP99Ms: number; met: boolean; fill: { journalEntries: number } };
  const sqlite = (results.store as { sqlite?: SqliteStep } | undefined)?.sqlite;
  if (sqlite)
    targets.push({
      // The quick run fills fewer entries: the name says how many this figure had.
      name: `one provider step's store writes at ${sqlite.fill.journalEntries.toLocaleString('en')} journal entries, SQLite, p99`,
      target: `<= ${sqlite.targetP99Ms}`,
      measured: sqlite.stepP99Ms,
      unit: 'ms',
      met: sqlite.met,
    });
  targets.push(
    ...waitingTargets(results.waiting as WaitingResult | undefined),
    ...fleetTargets(results.fleet as FleetResult | undefined),
    ...reactionTargets(results.reaction as ReactionResult | undefined),
  );
  return targets;
}

/** An error's message with its causes' (a workflow's failure says why only in its cause chain). */
function withCauses(err: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = err; e !== undefined && messages.length < 5; e = e instanceof Error ? e.cause : undefined)
    messages.push(e instanceof Error ? e.message : String(e));
  return messages.join(': ');
}

/** Figures a run measured only in part, which a run meant to be full must not hide (run C skipped PostgreSQL). */
function skippedFigures(measured: Record<string, unknown>): string[] {
  const store = measured.store as StoreResult | undefined;
  if (store === undefined || !('skipped' in store.postgresql)) return [];
  return [`store: PostgreSQL was not measured (${store.postgresql.skipped}): figure 6 has SQLite only`];
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      out: { type: 'string' },
      keep: { type: 'boolean', default: false },
      waiting: { type: 'string' },
    },
    strict: true,
  });
  const only = values.only?.split(',').map((s) => s.trim()) ?? [...PHASES];
  for (const name of only)
    if (!(PHASES as readonly string[]).includes(name))
      throw new Error(`--only: unknown phase "${name}" (known: ${PHASES.join(', ')})`);
  const wanted = (p: Phase): boolean => only.includes(p);
  const quick = values.quick ?? false;
  const waitingScale = (values.waiting ?? (quick ? 'quick' : 'full')) as WaitingScaleName;
  if (!Object.hasOwn(WAITING_SCALES, waitingScale))
    throw new Error(`--waiting: unknown scale "${waitingScale}" (known: ${Object.keys(WAITING_SCALES).join(', ')})`);
  const outDir = values.out ?? __dirname;
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const startedAt = new Date();
  const t0 = performance.now();
  const root = mkdtempSync(path.join(os.tmpdir(), 'asyncjob-bench-'));
  const machine: MachineInfo = machineInfo();
  const loads: PhaseLoad[] = [];
  const results: Record<string, unknown> = {
    mode: quick ? 'quick' : 'full',
    waitingScale,
    startedAt: startedAt.toISOString(),
    code: codeVersion(),
    machine,
    // How busy the machine was during each phase (bench/lib/machine.ts), with warnings.
    load: loads,
  };
  const failures: string[] = [];
  /**
   * Runs one phase with its load measured and its duration logged. A phase that fails is recorded (`failures`,
   * and the phase's result says why) and the others still run and are written: a long run keeps what it measured.
   */
  const phase = async <T>(
    name: string,
    what: string,
    run: () => Promise<T>,
    postgresqlPid?: number,
  ): Promise<T | { failed: string }> => {
    log(what);
    const load = startPhaseLoad(name, { serverPid: ctx?.server.pid, postgresqlPid });
    try {
      return await run();
    } catch (err) {
      log(`  ${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      failures.push(`${name}: ${withCauses(err)}`);
      return { failed: withCauses(err) };
    } finally {
      const measured = load.stop();
      loads.push(measured);
      log(
        `  ${name}: ${measured.seconds} s; load ${measured.loadPerCore.mean} per core, machine ${Math.round(measured.machineBusyShare * 100)}% busy (bench ${Math.round(measured.benchShare * 100)}%${measured.serverCores !== undefined ? `, the dev server ${measured.serverCores} cores` : ''}${measured.postgresqlCores !== undefined ? `, PostgreSQL ${measured.postgresqlCores} cores` : ''}; other work ${Math.round(measured.otherWorkShare * 100)}%)`,
      );
      for (const warning of measured.warnings) log(`  WARNING (${name}): ${warning}`);
    }
  };
  let ctx: BenchContext | undefined;
  try {
    // Phases that need no Temporal first.
    if (wanted('simulator'))
      results.simulator = await phase('simulator', 'simulator capacity', () => measureSimulator(quick, log));
    if (wanted('store')) {
      // PostgreSQL's CPU is the measured system's here, not other work (bench/lib/postgres-server.ts).
      const pgUrl = process.env.ASYNCJOB_TEST_PG_URL;
      const postgresqlPid = pgUrl === undefined ? undefined : await localPostgresqlPid(pgUrl);
      results.store = await phase(
        'store',
        "store: one provider step's writes",
        () => measureStore(root, quick, log),
        postgresqlPid,
      );
    }
    if (PHASES.some((p) => p !== 'simulator' && p !== 'store' && wanted(p))) {
      log('starting the dev server and bundling workflows');
      ctx = await createContext(root, quick);
      results.temporal = {
        serverVersion: ctx.server.serverVersion,
        server: 'Temporal CLI dev server (start-dev, headless), a SQLite file, on this machine beside the bench',
        address: ctx.server.address,
      };
    }
    const c = ctx;
    if (c && wanted('throughput'))
      await phase('throughput', 'throughput', async () => {
        const dep = await deploy(c, 'tp', { providers: { main: {} }, bareOn: 'main' });
        try {
          results.throughput = await measureThroughput(c, dep, log);
        } finally {
          await dep.stop();
        }
      });
    if (c && wanted('per-poll'))
      await phase('per-poll', 'per-poll cost', async () => {
        const dep = await deploy(c, 'pp', { providers: { main: {} }, bareOn: 'main', baselineNamespaces: true });
        try {
          results.perPoll = await measurePerPoll(c, dep);
        } finally {
          await dep.stop();
        }
      });
    if (c && wanted('fleet')) results.fleet = await phase('fleet', 'fleet pressure', () => measureFleet(c, log));
    if (c && wanted('reaction'))
      results.reaction = await phase('reaction', 'reaction: webhooks, and polling beside them', () =>
        measureReaction(c, log),
      );
    if (c && wanted('waiting'))
      results.waiting = await phase('waiting', 'scale of waiting', () => measureWaiting(c, waitingScale, log));
  } finally {
    if (ctx) {
      (results.temporal as Record<string, unknown>).serverRssAtEndMiB = round(rssMiB(ctx.server.pid), 1);
      await ctx.connection.close();
      await ctx.server.stop();
    }
    if (!values.keep) rmSync(root, { recursive: true, force: true });
  }
  results.failures = failures;
  // A failed phase's result is `{ failed }`: no figure and no target of it.
  const measured = Object.fromEntries(
    Object.entries(results).filter(([, v]) => !(typeof v === 'object' && v !== null && 'failed' in v)),
  );
  results.targets = benchTargets(measured);
  results.warnings = [...loads.flatMap((l) => l.warnings.map((w) => `${l.phase}: ${w}`)), ...skippedFigures(measured)];
  results.durationSeconds = Math.round((performance.now() - t0) / 1000);
  machine.loadAverageAtEnd = round(os.loadavg()[0]!, 2);
  const markdown = renderMarkdown({
    ...measured,
    targets: results.targets,
    warnings: results.warnings,
    durationSeconds: results.durationSeconds,
  });
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(outDir, 'results.md'), markdown);
  process.stdout.write(markdown);
  log(`done in ${results.durationSeconds as number} s; wrote ${path.join(outDir, 'results.json')} and results.md`);
  return failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('bench failed:', err);
    process.exit(1);
  },
);
