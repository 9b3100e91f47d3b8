/**
 * The chaos of a cluster run: a worker SIGKILLed every few seconds (the one up longest, and only while the whole
 * fleet is up, so the run never waits on a fleet that is only booting), the Temporal server restarted once when
 * about 30% of the operations have finished, PostgreSQL once at about 60%. Progress is read from the providers'
 * side (results fetched), not from the client's waits, so "the middle" is the middle of the real work.
 */
import type { WorkerFleet } from './fleet';
import { RetryCount } from './retry';

/** The two restarts, as the cluster script does them, and the partition when workers run on hosts of their own. */
export interface ChaosActions {
  restartServer(): Promise<void>;
  restartPostgres(): Promise<void>;
  /** Cuts worker slot {@link PARTITIONED_SLOT} off the network, waits, joins it again; resolves once joined. */
  partition?: () => Promise<void>;
}

/** The worker slot a partition cuts off; the chaos never SIGKILLs it while it is cut off. */
export const PARTITIONED_SLOT = 0;

/** One thing the chaos did: when (ms since start), what, and how long it took. */
export interface ChaosEvent {
  atMs: number;
  what: string;
  tookMs?: number;
}

const SERVER_RESTART_AT = 0.3;
const POSTGRES_RESTART_AT = 0.6;
const PARTITION_AT = 0.45;

export class Chaos {
  readonly retries = new RetryCount();
  readonly events: ChaosEvent[] = [];
  private readonly began = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private readonly restarts: Promise<void>[] = [];
  private failWith: (error: Error) => void = () => undefined;
  private failedWith: Error | undefined;
  /**
   * Rejects when an action fails (a restart refused, a partition not made): the run races its waits against it, so
   * it stops at once and its teardown still stops what it started. An action's rejection left to `stop()` would go
   * unhandled meanwhile, which ends the process with everything it started still running. A failure after the
   * waits is one of {@link missed}.
   */
  readonly failure = new Promise<never>((_resolve, reject) => (this.failWith = reject));
  private serverRestarted = false;
  private postgresRestarted = false;
  private partitioned = false;
  private partitionInProgress = false;
  /** One restart at a time: PostgreSQL waits until the server is back. */
  private restarting = false;

  constructor(
    private readonly fleet: WorkerFleet,
    /** The share of the run's work done, 0 to 1. */
    private readonly progress: () => number,
    private readonly killEveryMs: number,
    private readonly actions: ChaosActions,
  ) {
    void this.failure.catch(() => undefined);
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.killEveryMs);
  }

  /** Stops killing and waits for a restart in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.restarts);
  }

  /**
   * Whether epoch instant `atMs` fell while the Temporal server was down for its restart (or within `graceMs`
   * after it answered again): a worker booting then cannot connect and exits 5, as every command does, and the
   * fleet starts it again, as a supervisor would.
   */
  serverWasRestarting(atMs: number, graceMs = 5_000): boolean {
    return this.events.some(
      (e) =>
        e.what === 'restart the Temporal server' &&
        atMs >= this.began + e.atMs &&
        atMs <= this.began + e.atMs + (e.tookMs ?? 0) + graceMs,
    );
  }

  /**
   * Whether a worker of slot `slot` exiting at epoch instant `atMs` was cut off by the partition (or within
   * `graceMs` after it was joined again, while its connections recover).
   */
  wasPartitioned(slot: number, atMs: number, graceMs = 60_000): boolean {
    return (
      slot === PARTITIONED_SLOT &&
      this.events.some(
        (e) =>
          e.what === 'partition a worker' &&
          atMs >= this.began + e.atMs &&
          atMs <= this.began + e.atMs + (e.tookMs ?? 0) + graceMs,
      )
    );
  }

  /** What the run was meant to do and did not (the run ended before that point, or the action failed). */
  missed(): string[] {
    return [
      ...(this.failedWith ? [this.failedWith.message] : []),
      ...(this.actions.partition && !this.partitioned ? ['no worker was ever partitioned'] : []),
      ...(this.serverRestarted ? [] : ['the Temporal server was never restarted']),
      ...(this.postgresRestarted ? [] : ['PostgreSQL was never restarted']),
      ...(this.events.some((e) => e.what === 'SIGKILL a worker') ? [] : ['no worker was ever killed']),
    ];
  }

  private tick(): void {
    const spare = new Set(this.partitionInProgress ? [PARTITIONED_SLOT] : []);
    if (this.fleet.readyCount() === this.fleet.size && this.fleet.killOldest(spare)) this.record('SIGKILL a worker');
    const done = this.progress();
    const partition = this.actions.partition;
    if (partition && !this.partitioned && done >= PARTITION_AT) {
      // Beside the restarts, not one of them: a partition and a restart may overlap, as they would in production.
      this.partitioned = true;
      this.partitionInProgress = true;
      const cut = this.timed('partition a worker', partition, false).finally(() => (this.partitionInProgress = false));
      this.restarts.push(cut);
    }
    if (this.restarting) return;
    if (!this.serverRestarted && done >= SERVER_RESTART_AT) {
      this.serverRestarted = true;
      this.restarts.push(this.timed('restart the Temporal server', this.actions.restartServer));
    }
    if (!this.postgresRestarted && done >= POSTGRES_RESTART_AT) {
      this.postgresRestarted = true;
      this.restarts.push(this.timed('restart PostgreSQL', this.actions.restartPostgres));
    }
  }

  private async timed(what: string, action: () => Promise<void>, isRestart = true): Promise<void> {
    if (isRestart) this.restarting = true;
    const startedAt = Date.now();
    try {
      await action();
      this.record(what, Date.now() - startedAt, startedAt);
    } catch (error) {
      this.failedWith ??= new Error(`${what} failed: ${error instanceof Error ? error.message : String(error)}`);
      this.failWith(this.failedWith);
    } finally {
      if (isRestart) this.restarting = false;
    }
  }

  private record(what: string, tookMs?: number, atMs = Date.now()): void {
    this.events.push({ atMs: atMs - this.began, what, ...(tookMs !== undefined ? { tookMs } : {}) });
  }
}
