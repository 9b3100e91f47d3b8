/**
 * The machine the bench runs on and how busy it was. Per phase: the 1-minute load average over the cores
 * (sampled every 2 s), the share of the machine's CPU spent (`/proc/stat`), the share the bench's own processes
 * spent (this process, the dev server, the worker and simulator processes: its process tree, `/proc/<pid>/stat`;
 * and the local PostgreSQL server's tree while it is measured), the rest (other work on the machine) and the CPU the hypervisor stole; and a warning when the phase's figures
 * should not be trusted as those of a quiet machine.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { cpuMs, round } from './stats';

/** What the bench runs on. */
export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  platform: string;
  node: string;
  pgUrlSet: boolean;
  /** Other work on the machine changes absolute figures: the 1-minute load average at the start and end. */
  loadAverageAtStart: number;
  loadAverageAtEnd?: number;
}

/** When a phase's figures are flagged (bench/README.md, "The machine and its load"). */
const BUSY_LIMITS = {
  /** Processes outside the bench's tree used more than this share of all cores on average. */
  otherWorkShare: 0.1,
  /** The 1-minute load average exceeded this many runnable threads per core on average over the phase. */
  loadPerCore: 1.5,
  /** The hypervisor stole more than this share of all cores. */
  stealShare: 0.05,
} as const;

/** How busy the machine was during one phase. */
export interface PhaseLoad {
  phase: string;
  seconds: number;
  /** The 1-minute load average divided by the cores: at the phase's start, its mean and its highest sample. */
  loadPerCore: { atStart: number; mean: number; max: number };
  /** Share of all cores busy (user, nice, system, irq, softirq; not idle, iowait or steal), 0..1. */
  machineBusyShare: number;
  /** Share of all cores the bench's process tree used (and the PostgreSQL server's, when it was measured). */
  benchShare: number;
  /** `machineBusyShare - benchShare`: other work on the machine (never below 0). */
  otherWorkShare: number;
  /** Share of all cores the hypervisor stole. */
  stealShare: number;
  /** The dev server's CPU over the phase, in cores (1 = one core busy all the time), when it ran. */
  serverCores?: number;
  /** The local PostgreSQL server's CPU over the phase, in cores, when the phase measured it. */
  postgresqlCores?: number;
  /** Why this phase's figures may not be those of a quiet machine; empty when none. */
  warnings: string[];
}

const TICKS_PER_SECOND = 100;

/** The machine's description now. */
export function machineInfo(): MachineInfo {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    pgUrlSet: process.env.ASYNCJOB_TEST_PG_URL !== undefined,
    loadAverageAtStart: round(os.loadavg()[0]!, 2),
  };
}

/** Busy, all and stolen jiffies of all cores together since boot, from the first line of `/proc/stat`. */
export function machineTicks(): { busy: number; total: number; steal: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = user! + nice! + system! + (irq ?? 0) + (softirq ?? 0);
    const stolen = steal ?? 0;
    return { busy, steal: stolen, total: busy + idle! + (iowait ?? 0) + stolen };
  } catch {
    return { busy: Number.NaN, total: Number.NaN, steal: Number.NaN };
  }
}

/**
 * CPU jiffies of the bench's process tree: each live descendant's own and reaped children's time, and this
 * process's. A child that exits and is reaped moves its time into its parent's, so the sum stays continuous.
 */
function treeTicks(rootPid: number): number {
  const stats = new Map<number, { ppid: number; ticks: number }>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return Number.NaN;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // After the command: ppid is field 4 (index 1), utime, stime, cutime, cstime fields 14-17 (indices 11-14).
      const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      stats.set(Number(entry), { ppid: Number(fields[1]), ticks });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of stats) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  let sum = 0;
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    sum += stats.get(pid)?.ticks ?? 0;
    queue.push(...(children.get(pid) ?? []));
  }
  return sum;
}

/** The processes a phase measures besides its own tree: the dev server (a child) and a local PostgreSQL server. */
export interface MeasuredServers {
  serverPid?: number;
  postgresqlPid?: number;
}

/** Measures one phase's load until `stop()`; the dev server's and PostgreSQL's CPU too when their PIDs are given. */
export function startPhaseLoad(
  phase: string,
  { serverPid, postgresqlPid }: MeasuredServers = {},
): { stop(): PhaseLoad } {
  const cores = os.cpus().length;
  const t0 = performance.now();
  const server0 = serverPid === undefined ? Number.NaN : cpuMs(serverPid);
  const postgresqlTicks = (): number => (postgresqlPid === undefined ? 0 : treeTicks(postgresqlPid));
  const postgresql0 = postgresqlTicks();
  const machine0 = machineTicks();
  const tree0 = treeTicks(process.pid);
  const loads: number[] = [os.loadavg()[0]! / cores];
  const timer = setInterval(() => loads.push(os.loadavg()[0]! / cores), 2_000);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      loads.push(os.loadavg()[0]! / cores);
      const seconds = (performance.now() - t0) / 1000;
      const machine1 = machineTicks();
      const totalTicks = machine1.total - machine0.total;
      const machineBusyShare = (machine1.busy - machine0.busy) / totalTicks;
      // The tree's ticks are per process (all its threads), so over all cores: divide by wall time x cores.
      const postgresqlTicksUsed = postgresqlTicks() - postgresql0;
      const benchShare = (treeTicks(process.pid) - tree0 + postgresqlTicksUsed) / (seconds * TICKS_PER_SECOND * cores);
      const stealShare = (machine1.steal - machine0.steal) / totalTicks;
      const otherWorkShare = Math.max(0, machineBusyShare - benchShare);
      const loadPerCore = {
        atStart: round(loads[0]!, 2),
        mean: round(loads.reduce((a, b) => a + b, 0) / loads.length, 2),
        max: round(Math.max(...loads), 2),
      };
      const warnings: string[] = [];
      const pct = (x: number): string => `${Math.round(x * 100)}%`;
      if (otherWorkShare > BUSY_LIMITS.otherWorkShare)
        warnings.push(
          `other work used ${pct(otherWorkShare)} of the machine's CPU (the bench ${pct(benchShare)}): figures are lower than a quiet machine's`,
        );
      if (loadPerCore.mean > BUSY_LIMITS.loadPerCore)
        warnings.push(
          `load average ${loadPerCore.mean} per core on average (up to ${loadPerCore.max}): processes waited for a CPU, the bench's own included`,
        );
      if (stealShare > BUSY_LIMITS.stealShare) warnings.push(`the hypervisor stole ${pct(stealShare)} of the CPU`);
      return {
        phase,
        seconds: round(seconds, 1),
        loadPerCore,
        machineBusyShare: round(machineBusyShare, 3),
        benchShare: round(benchShare, 3),
        otherWorkShare: round(otherWorkShare, 3),
        stealShare: round(stealShare, 3),
        ...(serverPid !== undefined ? { serverCores: round((cpuMs(serverPid) - server0) / 1000 / seconds, 2) } : {}),
        ...(postgresqlPid !== undefined
          ? { postgresqlCores: round(postgresqlTicksUsed / TICKS_PER_SECOND / seconds, 2) }
          : {}),
        warnings,
      };
    },
  };
}
