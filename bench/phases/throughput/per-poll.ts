/**
 * Figure 2: per policy, the histories of single asyncjob and bare operations (and asyncjob's store entries), per
 * operation and per status read, and the cost of one more read; from 1 s on, beside Temporal's two recommended
 * polling patterns (a heartbeating activity, activity retries).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import type { BenchContext, Deployment } from '../../lib/context';
import { plainCalls } from '../../lib/provider-calls';
import { countsBetween, readServerCounts, type ServerCounts } from '../../lib/server-counts';
import { median, nowMs, round, runPool, sleepMs } from '../../lib/stats';
import { historyCost, type HistoryCost } from './history';
import { PER_POLL_POLICIES, type BenchPolicy, type PolicyName } from './policies';
import type {
  MarginalRead,
  PerPollAnchor,
  PerPollOperation,
  PerPollPolicy,
  PerPollResult,
  PerPollSystem,
} from './result';
import { recommendedPatterns, systems, type RunOne } from './systems';

/** The longest operation of figure 2, at 1 s: the target's "amortised over a 20-poll operation". */
const LONG_READS = 20;

/**
 * What figure 2 runs per policy: the read counts, the samples of each, and whether samples run side by side. From
 * 5 s on, nine 3-read operations of each system share a window: the server's matching service persists a task it
 * cannot hand to a waiting poller at once (a write, for every system alike, about one in one to three operations,
 * at random), and at three operations a window that noise moved a system's writes by a whole write an operation
 * between runs of the same code. Side by side, nine take no longer than three.
 */
function perPollPlan(policy: PolicyName, quick: boolean): { reads: number[]; samples: number; sideBySide: boolean } {
  if (policy === 'short') return { reads: [3, 6], samples: quick ? 3 : 7, sideBySide: false };
  if (policy === '1s') return { reads: [3, LONG_READS], samples: quick ? 2 : 3, sideBySide: true };
  return { reads: [3], samples: quick ? 2 : 9, sideBySide: true };
}

/** The systems figure 2 runs at a policy: the recommended patterns from 1 s on (the short policy is no polling). */
function systemsAt(policy: PolicyName): PerPollSystem[] {
  return policy === 'short' ? ['asyncjob', 'bare'] : ['asyncjob', 'bare', 'bare-heartbeat', 'bare-retry'];
}

/** What figure 2 runs operations with: the systems, and asyncjob's store read beside its worker. */
interface Probe {
  ctx: BenchContext;
  run: Record<PerPollSystem | 'naive', RunOne>;
  /** The namespace each system runs in (each its own: the server's counts per namespace are its). */
  namespaces: Record<PerPollSystem, string>;
  /** An asyncjob operation's journal entries and its snapshot's version (one write per version). */
  journalEntries(operationId: string): number;
  snapshotVersion(operationId: string): number;
}

/** One operation that took exactly its script's reads: its latency, its history's cost, asyncjob's store figures. */
interface Sample {
  ms: number;
  cost: HistoryCost;
  entries?: number;
  version?: number;
}

/** One kind of operation's runs: its clean samples, and every operation run and status read made (clean or not). */
interface Samples {
  clean: Sample[];
  operations: number;
  reads: number;
}

/**
 * Runs `system` operations of `reads` reads under `policy` until `samples` took exactly `reads` (one at a time, or
 * side by side), reading each one's history (and asyncjob's store).
 */
async function cleanSamples(
  probe: Probe,
  system: PerPollSystem,
  policy: BenchPolicy,
  reads: number,
  samples: number,
  sideBySide: boolean,
): Promise<Samples> {
  const out: Samples = { clean: [], operations: 0, reads: 0 };
  for (let tries = 0; out.clean.length < samples; tries++) {
    if (tries >= samples * 3)
      throw new Error(`per-poll: fewer than ${samples} ${system} operations with exactly ${reads} reads`);
    const batch = sideBySide ? samples - out.clean.length : 1;
    await runPool(batch, batch, async () => {
      const t = nowMs();
      const done = await probe.run[system]({ script: `reads${reads}`, reads, policy });
      const ms = nowMs() - t;
      out.operations += 1;
      out.reads += done.statusReads;
      // A read lost to a timeout under load is sent again: such a sample is not a clean `reads`-read operation.
      if (done.statusReads !== reads) return;
      const cost = await historyCost(probe.ctx, done.id, done.namespace);
      out.clean.push(
        system === 'asyncjob'
          ? { ms, cost, entries: probe.journalEntries(done.id), version: probe.snapshotVersion(done.id) }
          : { ms, cost },
      );
    });
  }
  return out;
}

/**
 * One kind of operation's figures: medians over its clean samples, and the server's writes and heartbeats in its
 * namespace over the window it ran in (`server`), per operation run and per status read made there.
 */
function operationOf(
  system: PerPollSystem,
  reads: number,
  { clean, ...ran }: Samples,
  server: ServerCounts,
): PerPollOperation {
  const events = median(clean.map((c) => c.cost.events));
  const bytes = median(clean.map((c) => c.cost.bytes));
  return {
    system,
    statusReads: reads,
    samples: clean.length,
    historyEvents: events,
    historyBytes: bytes,
    timersStarted: median(clean.map((c) => c.cost.timers)),
    eventsPerRead: round(events / reads, 2),
    bytesPerRead: round(bytes / reads, 0),
    ...(system === 'asyncjob'
      ? {
          journalEntries: median(clean.map((c) => c.entries ?? Number.NaN)),
          snapshotWrites: median(clean.map((c) => c.version ?? Number.NaN)),
        }
      : {}),
    serverWrites: round(server.writes / ran.operations, 1),
    serverWritesPerRead: round(server.writes / ran.reads, 2),
    heartbeats: round(server.heartbeats / ran.operations, 1),
    heartbeatsPerRead: round(server.heartbeats / ran.reads, 2),
    latencyMs: round(median(clean.map((c) => c.ms)), 1),
  };
}

/** After the last operation of a window: the server's writes that follow a workflow's close (task completions). */
const WINDOW_SETTLE_MS = 2_000;

/**
 * Runs `kinds` (side by side, or one after another) in one window of the server's counts; each kind is one system's,
 * so its namespace's counts over the window are its own.
 */
async function countedWindow(
  probe: Probe,
  kinds: readonly PerPollSystem[],
  reads: number,
  measure: (system: PerPollSystem) => Promise<Samples>,
  sideBySide: boolean,
): Promise<PerPollOperation[]> {
  const { metricsPort } = probe.ctx.server;
  const namespaces = kinds.map((system) => probe.namespaces[system]);
  const before = await readServerCounts(metricsPort, namespaces);
  const ran: Samples[] = [];
  if (sideBySide) ran.push(...(await Promise.all(kinds.map(measure))));
  else for (const system of kinds) ran.push(await measure(system));
  await sleepMs(WINDOW_SETTLE_MS);
  const counts = countsBetween(before, await readServerCounts(metricsPort, namespaces));
  return kinds.map((system, i) => operationOf(system, reads, ran[i]!, counts[probe.namespaces[system]]!));
}

/** The naive loop's latency (median of `samples`, one at a time) per read count, ms. */
async function naiveLatencies(
  probe: Probe,
  policy: BenchPolicy,
  reads: readonly number[],
  samples: number,
): Promise<Record<number, number>> {
  const out: Record<number, number> = {};
  for (const n of reads) {
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      const t = nowMs();
      await probe.run.naive({ script: `reads${n}`, reads: n, policy });
      latencies.push(nowMs() - t);
    }
    out[n] = median(latencies);
  }
  return out;
}

/** Figure 2 at one policy; at the short policy also the naive loop's latencies (into `naiveLatency`). */
async function measurePolicy(
  probe: Probe,
  policy: BenchPolicy,
  naiveLatency: Record<number, number>,
): Promise<PerPollPolicy> {
  const p0 = nowMs();
  const { reads, samples, sideBySide } = perPollPlan(policy.name, probe.ctx.quick);
  const operations: PerPollOperation[] = [];
  // One window per read count; from 1 s on its systems run side by side (a light load at these delays), so the
  // window lasts one operation.
  for (const n of reads) {
    const measure = (system: PerPollSystem) => cleanSamples(probe, system, policy, n, samples, sideBySide);
    operations.push(...(await countedWindow(probe, systemsAt(policy.name), n, measure, sideBySide)));
  }
  if (policy.name === 'short') Object.assign(naiveLatency, await naiveLatencies(probe, policy, reads, samples));
  return { ...policy, operations, marginal: marginalReads(operations), seconds: round((nowMs() - p0) / 1000, 1) };
}

/** Figure 2's headline figures, from its policies and the naive loop's latencies at the short policy. */
function perPollResult(policies: PerPollPolicy[], naiveLatency: Record<number, number>, t0: number): PerPollResult {
  const find = (name: PolicyName, system: PerPollSystem, reads: number) =>
    policies.find((p) => p.name === name)!.operations.find((o) => o.system === system && o.statusReads === reads)!;
  const added = (system: 'asyncjob' | 'bare') =>
    round(
      (find('short', system, 6).latencyMs -
        find('short', system, 3).latencyMs -
        (naiveLatency[6]! - naiveLatency[3]!)) /
        3,
      1,
    );
  return {
    policies,
    eventsPerReadAt1s: {
      statusReads: LONG_READS,
      asyncjob: find('1s', 'asyncjob', LONG_READS).eventsPerRead,
      bare: find('1s', 'bare', LONG_READS).eventsPerRead,
    },
    anchors: policies.filter((p) => p.name !== 'short').map(anchorOf),
    addedLatencyPerReadMs: { asyncjob: added('asyncjob'), bare: added('bare') },
    latencyMs: {
      asyncjob: { reads3: find('short', 'asyncjob', 3).latencyMs, reads6: find('short', 'asyncjob', 6).latencyMs },
      bare: { reads3: find('short', 'bare', 3).latencyMs, reads6: find('short', 'bare', 6).latencyMs },
      naive: { reads3: round(naiveLatency[3]!, 1), reads6: round(naiveLatency[6]!, 1) },
    },
    seconds: round((nowMs() - t0) / 1000, 1),
  };
}

/** Measures figure 2: per policy, asyncjob's and bare's histories (and asyncjob's store) per operation. */
export async function measurePerPoll(ctx: BenchContext, dep: Deployment): Promise<PerPollResult> {
  const t0 = nowMs();
  const calls = plainCalls({ baseUrl: dep.sims['main']!.url, token: ctx.token });
  const db = new Database(path.join(dep.dataDir, 'asyncjob.db'), { readonly: true, fileMustExist: true });
  const journalEntries = db.prepare('SELECT count(*) FROM journal WHERE operation_id = ?').pluck();
  const version = db.prepare('SELECT version FROM operations WHERE operation_id = ?').pluck();
  const patterns = recommendedPatterns(ctx, dep);
  const probe: Probe = {
    ctx,
    run: { ...systems(ctx, dep, calls), 'bare-heartbeat': patterns.heartbeat, 'bare-retry': patterns.retry },
    namespaces: {
      asyncjob: ctx.server.namespace,
      bare: dep.bareNamespace('bare'),
      'bare-heartbeat': dep.bareNamespace('bare-heartbeat'),
      'bare-retry': dep.bareNamespace('bare-retry'),
    },
    journalEntries: (id) => journalEntries.get(id) as number,
    snapshotVersion: (id) => version.get(id) as number,
  };
  try {
    const policies: PerPollPolicy[] = [];
    const naiveLatency: Record<number, number> = {};
    for (const policy of PER_POLL_POLICIES) policies.push(await measurePolicy(probe, policy, naiveLatency));
    return perPollResult(policies, naiveLatency, t0);
  } finally {
    db.close();
    await calls.close();
  }
}

/** Per system, the cost of one more read between its shortest and longest operation (none with one length). */
function marginalReads(operations: readonly PerPollOperation[]): MarginalRead[] {
  const out: MarginalRead[] = [];
  for (const system of ['asyncjob', 'bare', 'bare-heartbeat', 'bare-retry'] as const) {
    const mine = operations.filter((o) => o.system === system).sort((a, b) => a.statusReads - b.statusReads);
    const first = mine[0];
    const last = mine[mine.length - 1];
    if (!first || !last || first === last) continue;
    const n = last.statusReads - first.statusReads;
    out.push({
      system,
      fromReads: first.statusReads,
      toReads: last.statusReads,
      eventsPerRead: round((last.historyEvents - first.historyEvents) / n, 2),
      bytesPerRead: round((last.historyBytes - first.historyBytes) / n, 0),
      ...(first.journalEntries !== undefined && last.journalEntries !== undefined
        ? { journalEntriesPerRead: round((last.journalEntries - first.journalEntries) / n, 2) }
        : {}),
      ...(first.snapshotWrites !== undefined && last.snapshotWrites !== undefined
        ? { snapshotWritesPerRead: round((last.snapshotWrites - first.snapshotWrites) / n, 2) }
        : {}),
    });
  }
  return out;
}

/** asyncjob's events per read beside the recommended patterns', for a policy's longest operation. */
function anchorOf(policy: PerPollPolicy): PerPollAnchor {
  const statusReads = Math.max(...policy.operations.map((o) => o.statusReads));
  const of = (system: PerPollSystem) =>
    policy.operations.find((o) => o.system === system && o.statusReads === statusReads)!.eventsPerRead;
  const writes = (system: PerPollSystem) =>
    policy.operations.find((o) => o.system === system && o.statusReads === statusReads)!.serverWritesPerRead;
  return {
    policy: policy.name,
    statusReads,
    asyncjob: of('asyncjob'),
    heartbeat: of('bare-heartbeat'),
    retry: of('bare-retry'),
    writesPerRead: { asyncjob: writes('asyncjob'), heartbeat: writes('bare-heartbeat'), retry: writes('bare-retry') },
  };
}
