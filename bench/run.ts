/**
 * `npx tsx bench/run.ts [--quick] [--only a,b] [--out DIR]`: the asyncjob benchmark in one run. Starts its own
 * Temporal dev server, worker process and simulator processes, measures the seven figures of bench/README.md,
 * prints a markdown table and writes `bench/results.json` and `bench/results.md` (or under `--out`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createContext, deploy, type BenchContext } from './lib/context';
import { renderMarkdown } from './lib/report';
import { measureFleet } from './phases/fleet';
import { measureReaction } from './phases/reaction';
import { measureSimulator } from './phases/simulator';
import { measureStore } from './phases/store';
import { measurePerPoll, measureThroughput, throughputTargets, type BenchTarget } from './phases/throughput';
import { measureWaiting } from './phases/waiting';

const PHASES = ['simulator', 'store', 'throughput', 'fleet', 'reaction', 'waiting'] as const;
type Phase = (typeof PHASES)[number];

function log(line: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

/** Issue 16's targets this run measured, each `met` computed from the figures (never written by hand). */
function benchTargets(results: Record<string, unknown>): BenchTarget[] {
  const targets = throughputTargets(
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
  return targets;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      out: { type: 'string' },
      keep: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const only = values.only?.split(',').map((s) => s.trim()) ?? [...PHASES];
  for (const name of only)
    if (!(PHASES as readonly string[]).includes(name))
      throw new Error(`--only: unknown phase "${name}" (known: ${PHASES.join(', ')})`);
  const wanted = (p: Phase): boolean => only.includes(p);
  const quick = values.quick ?? false;
  const outDir = values.out ?? __dirname;
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const startedAt = new Date();
  const t0 = performance.now();
  const root = mkdtempSync(path.join(os.tmpdir(), 'asyncjob-bench-'));
  const results: Record<string, unknown> = {
    mode: quick ? 'quick' : 'full',
    startedAt: startedAt.toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
      pgUrlSet: process.env.ASYNCJOB_TEST_PG_URL !== undefined,
      /** Other work on the machine changes absolute figures: the 1-minute load average at the start. */
      loadAverageAtStart: Math.round(os.loadavg()[0]! * 100) / 100,
    },
  };
  let ctx: BenchContext | undefined;
  try {
    // Phases that need no Temporal first.
    if (wanted('simulator')) {
      log('simulator capacity');
      results.simulator = await measureSimulator(quick, log);
    }
    if (wanted('store')) {
      log("store: one provider step's writes");
      results.store = await measureStore(root, quick, log);
    }
    if (PHASES.some((p) => p !== 'simulator' && p !== 'store' && wanted(p))) {
      log('starting the dev server and bundling workflows');
      ctx = await createContext(root, quick);
      results.temporal = { serverVersion: ctx.server.serverVersion };
    }
    if (ctx && wanted('throughput')) {
      log('throughput and per-poll cost');
      const dep = await deploy(ctx, 'tp', { providers: { main: {} }, bareOn: 'main' });
      try {
        results.throughput = await measureThroughput(ctx, dep, log);
        results.perPoll = await measurePerPoll(ctx, dep);
      } finally {
        await dep.stop();
      }
    }
    if (ctx && wanted('fleet')) {
      log('fleet pressure');
      results.fleet = await measureFleet(ctx, log);
    }
    if (ctx && wanted('reaction')) {
      log('reaction: polling and webhooks');
      results.reaction = await measureReaction(ctx, log);
    }
    if (ctx && wanted('waiting')) {
      log('scale of waiting');
      results.waiting = await measureWaiting(ctx, log);
    }
  } finally {
    if (ctx) {
      await ctx.connection.close();
      await ctx.server.stop();
    }
    if (!values.keep) rmSync(root, { recursive: true, force: true });
  }
  results.targets = benchTargets(results);
  results.durationSeconds = Math.round((performance.now() - t0) / 1000);
  (results.machine as Record<string, unknown>).loadAverageAtEnd = Math.round(os.loadavg()[0]! * 100) / 100;
  const markdown = renderMarkdown(results);
  writeFileSync(path.join(outDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(outDir, 'results.md'), markdown);
  process.stdout.write(markdown);
  log(`done in ${results.durationSeconds as number} s; wrote ${path.join(outDir, 'results.json')} and results.md`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('bench failed:', err);
    process.exit(1);
  },
);
