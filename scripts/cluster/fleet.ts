/**
 * A fleet of `asyncjob worker` processes, as an operator runs them (the CLI, configured by environment only), that
 * a chaos run can SIGKILL and restart. Each incarnation's output goes to its own log file. A worker is ready when
 * the Temporal server lists it (by its pid, the SDK's default identity is `pid@host`) among the pollers of every
 * queue it serves: what the server sees, whatever the worker's log level.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** One worker process. */
interface Incarnation {
  child: ChildProcess;
  ready: boolean;
  spawnedAtMs: number;
  readyAtMs?: number;
  /** SIGKILLed by the chaos run (any other exit is a crash). */
  killed: boolean;
  logFile: string;
  exited: Promise<void>;
}

/** What a fleet did, for the report. */
export interface FleetStats {
  /** Processes started, first ones included. */
  started: number;
  /** SIGKILLs sent. */
  killed: number;
  /** Exits nobody asked for (a crash): each is restarted too, and named here with its log file. */
  unexpectedExits: string[];
  /** Exits with code 5, "cannot reach Temporal": when (epoch ms), the slot and the log file; restarted like the others. */
  unreachableExits: { atMs: number; slot: number; logFile: string }[];
  /** Time from spawn to the server seeing the worker poll every queue, ms, per start. */
  bootMs: number[];
}

/** `size` worker processes kept running: one that exits, killed or not, is started again until {@link stop}. */
export class WorkerFleet {
  private readonly slots: (Incarnation | undefined)[];
  private stopping = false;
  private readinessTimer: NodeJS.Timeout | undefined;
  readonly stats: FleetStats = {
    started: 0,
    killed: 0,
    unexpectedExits: [],
    unreachableExits: [],
    bootMs: [],
  };

  constructor(
    readonly size: number,
    private readonly env: Record<string, string>,
    private readonly logDir: string,
    /** Whether the server lists process `pid` among the pollers of every queue the fleet serves. */
    private readonly isPolling: (pid: number) => Promise<boolean>,
    /** The command that runs slot N's worker on its own host (`ip netns exec …`); none runs it here. */
    private readonly hostPrefix: (slot: number) => string[] = () => [],
  ) {
    this.slots = Array.from({ length: size }, () => undefined);
  }

  start(): void {
    for (let slot = 0; slot < this.size; slot++) this.spawn(slot);
    this.readinessTimer = setInterval(() => void this.checkReadiness(), 250);
  }

  /** How many workers poll every queue and have not exited. */
  readyCount(): number {
    return this.slots.filter((w) => w?.ready).length;
  }

  /** The pid of slot `slot`'s worker now (the SDK names a worker `pid@host`), or undefined while none runs. */
  pidOf(slot: number): number | undefined {
    const worker = this.slots[slot];
    return worker && worker.child.exitCode === null ? worker.child.pid : undefined;
  }

  /** SIGKILLs the worker that has been ready longest, sparing the slots in `spare`; false when none is ready. */
  killOldest(spare: ReadonlySet<number> = new Set()): boolean {
    const ready = this.slots
      .map((worker, slot) => ({ worker, slot }))
      .filter((x) => x.worker?.ready && !spare.has(x.slot))
      .sort((a, b) => a.worker!.readyAtMs! - b.worker!.readyAtMs!);
    const oldest = ready[0];
    if (!oldest) return false;
    this.stats.killed++;
    oldest.worker!.ready = false;
    oldest.worker!.killed = true;
    oldest.worker!.child.kill('SIGKILL');
    return true;
  }

  /** Stops every worker (SIGTERM, then SIGKILL after `graceMs`) and starts no more. */
  async stop(graceMs = 15_000): Promise<void> {
    this.stopping = true;
    clearInterval(this.readinessTimer);
    const running = this.slots.filter((w): w is Incarnation => w !== undefined);
    for (const worker of running) worker.child.kill('SIGTERM');
    const timer = setTimeout(() => running.forEach((w) => w.child.kill('SIGKILL')), graceMs);
    await Promise.all(running.map((w) => w.exited));
    clearTimeout(timer);
  }

  private async checkReadiness(): Promise<void> {
    for (const worker of this.slots) {
      if (!worker || worker.readyAtMs !== undefined || worker.child.exitCode !== null || worker.killed) continue;
      if (!(await this.isPolling(worker.child.pid!).catch(() => false))) continue;
      worker.ready = true;
      worker.readyAtMs = Date.now();
      this.stats.bootMs.push(worker.readyAtMs - worker.spawnedAtMs);
    }
  }

  private spawn(slot: number): void {
    const spawnedAtMs = Date.now();
    const number = ++this.stats.started;
    const logFile = path.join(this.logDir, `worker-${slot}-${number}.log`);
    const log = createWriteStream(logFile);
    // `ip netns exec` execs the worker in place: the child's pid is the worker's.
    const [command, ...args] = [
      ...this.hostPrefix(slot),
      process.execPath,
      path.join(ROOT, 'bin', 'asyncjob'),
      'worker',
    ];
    const child = spawn(command!, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const incarnation: Incarnation = {
      child,
      spawnedAtMs,
      ready: false,
      killed: false,
      logFile,
      exited: new Promise((resolve) => child.once('exit', () => resolve())),
    };
    const take = (chunk: Buffer): void => void log.write(chunk);
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    child.once('exit', (code, signal) => {
      log.end();
      incarnation.ready = false;
      if (this.stopping) return;
      if (!incarnation.killed && code === 5) this.stats.unreachableExits.push({ atMs: Date.now(), slot, logFile });
      else if (!incarnation.killed) this.stats.unexpectedExits.push(`${signal ?? `code ${code}`}: ${logFile}`);
      this.spawn(slot);
    });
    this.slots[slot] = incarnation;
  }
}
