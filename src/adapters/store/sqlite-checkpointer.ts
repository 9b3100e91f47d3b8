/**
 * The background WAL checkpointer of a SQLite connection (see `sqlite-driver.ts` for why no commit checkpoints):
 * a worker thread with a connection of its own to the same file, its counters shared with the owning thread.
 */
import { Worker } from 'node:worker_threads';

/** What the background checkpointer has done, counted since the connection opened. */
export interface SqliteWalStatus {
  /**
   * `running`: the thread checkpoints, no commit does; `waiting`: the WAL file has stayed under 1 MiB since the
   * connection opened, and SQLite's automatic checkpoint (past 1,000 pages) is on until it does not; `off`: no
   * checkpointer (interval 0, a file not in WAL mode, or the connection closed); `failed`: the thread failed and
   * SQLite's automatic checkpoint is back on.
   */
  readonly checkpointer: 'running' | 'waiting' | 'off' | 'failed';
  /** PASSIVE checkpoints run (they wait for nothing and block nobody). */
  readonly passiveCheckpoints: number;
  /** Turns taken between this process's transactions because the WAL passed `walLimitBytes`. */
  readonly turns: number;
  /**
   * Of those turns, the RESTART checkpoints that copied the whole WAL, so the next commit wrote from its
   * beginning (the others met another process's reader or writer).
   */
  readonly restarts: number;
  /** The WAL's frames (pages) at the last checkpoint, and the most seen at one. */
  readonly walFrames: number;
  readonly walFramesMax: number;
  /** Of `walFrames`, those in the database file after the last checkpoint (all when it copied the whole WAL). */
  readonly walFramesCopied: number;
  /** Checkpoints that threw (counted and retried at the next interval). */
  readonly errors: number;
}

/**
 * The checkpointer's defaults: its interval (ms), the WAL size that makes it take a turn and the WAL file size that
 * starts it (bytes).
 */
export const SQLITE_CHECKPOINTER_DEFAULTS = {
  intervalMs: 1_000,
  walLimitBytes: 64 * 2 ** 20,
  startBytes: 2 ** 20,
} as const;
/** Slots of the shared counters the checkpointer thread writes and {@link WalCheckpointer.status} reads. */
const SLOT = {
  passive: 0,
  turns: 1,
  restarts: 2,
  walFrames: 3,
  walFramesMax: 4,
  walFramesCopied: 5,
  errors: 6,
} as const;

/**
 * The checkpointer thread's source (plain CommonJS, run with `eval`, so the same text runs from `src/` through
 * tsx and from `dist/`). Every `intervalMs` it runs PASSIVE checkpoints on a connection of its own: they copy WAL
 * frames into the database file while the worker's thread keeps committing, and fsync both files, on this thread.
 * A commit restarts the WAL from its beginning when the previous checkpoint copied all of it; under writes too
 * close together for that, a checkpoint copies most but never all, so it tries again at once a few times (each
 * try has less to copy). When the WAL is still past `limitFrames` it asks for a turn: the owning thread holds
 * back this process's transactions and the thread runs a RESTART checkpoint, which takes the write lock, copies
 * the rest and fsyncs, so that the next commit writes the WAL from its beginning (waiting `busyTimeoutMs` at most
 * for other processes' readers and writers; if they keep it busy, the limit doubles until the WAL starts again).
 * RESTART, not TRUNCATE: the WAL file keeps its blocks (at most the limit and an interval's writes), so the
 * commits that follow overwrite them instead of making the filesystem allocate new ones, work that each fsync
 * of the WAL would otherwise do while the worker's thread appends to the same file.
 */
const CHECKPOINTER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driverModule);
const SLOT = workerData.slots;
const stats = new Int32Array(workerData.stats);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
db.pragma('wal_autocheckpoint = 0');
const frameBytes = db.pragma('page_size', { simple: true }) + 24;
const limitFrames = Math.max(1, Math.ceil(workerData.walLimitBytes / frameBytes));
let threshold = limitFrames;
let turnAsked = false;
const checkpoint = (mode) => db.pragma('wal_checkpoint(' + mode + ')')[0];
function noted(result) {
  if (result.log < 0) return result;
  Atomics.store(stats, SLOT.walFrames, result.log);
  Atomics.store(stats, SLOT.walFramesCopied, result.checkpointed);
  if (result.log > Atomics.load(stats, SLOT.walFramesMax)) Atomics.store(stats, SLOT.walFramesMax, result.log);
  if (result.log < limitFrames) threshold = limitFrames;
  return result;
}
function passive() {
  Atomics.add(stats, SLOT.passive, 1);
  return noted(checkpoint('PASSIVE'));
}
// A checkpoint reports the WAL as it was when it began: it copied all of it only if the next one finds the same
// WAL with nothing left to copy (no commit came in between). A try that finds no commit came while it copied
// also fsyncs the database file, here, so a turn that follows has little left to fsync.
function tick() {
  if (turnAsked) return;
  try {
    let result = passive();
    let whole = false;
    for (let retry = 0; !whole && result.busy === 0 && retry < workerData.retries; retry++) {
      const next = passive();
      whole = next.busy === 0 && next.log === result.log && next.checkpointed === next.log;
      result = next;
    }
    if (!whole && result.busy === 0 && result.log >= threshold) {
      turnAsked = true;
      parentPort.postMessage('turn');
    }
  } catch {
    Atomics.add(stats, SLOT.errors, 1);
  }
}
function restart() {
  Atomics.add(stats, SLOT.turns, 1);
  try {
    const result = noted(checkpoint('RESTART'));
    if (result.busy === 0) Atomics.add(stats, SLOT.restarts, 1);
    else threshold = Math.min(threshold * 2, 2 ** 30);
  } catch {
    Atomics.add(stats, SLOT.errors, 1);
  }
  turnAsked = false;
  parentPort.postMessage('restarted');
}
const timer = setInterval(tick, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'restart') restart();
  else if (message === 'stop') {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
parentPort.postMessage('ready');
`;

/** How long a turn's RESTART waits for another process's reader or writer, ms (it holds the write lock meanwhile). */
const TURN_BUSY_TIMEOUT_MS = 100;
/**
 * PASSIVE checkpoints run again at once, at most, after one that may not have copied the whole WAL (one that finds
 * nothing new to copy confirms the one before did).
 */
const PASSIVE_RETRIES = 3;

/**
 * The background checkpointer of one connection: a worker thread with a connection of its own to the same
 * file (see {@link CHECKPOINTER_SOURCE}). Unref'd: it never keeps the process alive. Several processes on one
 * file each run one; SQLite lets one checkpoint run at a time and the others skip their turn.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly counters = new Int32Array(new SharedArrayBuffer(4 * Object.keys(SLOT).length));
  private state: 'starting' | 'running' | 'stopped' | 'failed' = 'starting';
  private restarted: (() => void) | undefined;
  private readonly exited: Promise<unknown>;

  /**
   * Starts the thread on `file`. `takeTurn` runs work between the owning process's transactions on the file;
   * `onFailure` is called once if the thread fails.
   */
  constructor(
    file: string,
    options: { intervalMs: number; walLimitBytes: number },
    private readonly takeTurn: (work: () => Promise<void>) => Promise<void>,
    private readonly onFailure: () => void,
  ) {
    this.worker = new Worker(CHECKPOINTER_SOURCE, {
      eval: true,
      workerData: {
        driverModule: require.resolve('better-sqlite3'),
        file,
        intervalMs: options.intervalMs,
        walLimitBytes: options.walLimitBytes,
        busyTimeoutMs: TURN_BUSY_TIMEOUT_MS,
        retries: PASSIVE_RETRIES,
        slots: SLOT,
        stats: this.counters.buffer,
      },
    });
    this.worker.unref();
    // Not `once(worker, 'exit')`: it rejects on the 'error' that comes first when the thread fails.
    this.exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.worker.on('message', (message: string) => this.received(message));
    this.worker.on('error', () => this.failed());
    void this.exited.then(() => this.failed());
  }

  /** What the thread has done so far. */
  status(): Omit<SqliteWalStatus, 'checkpointer'> & { running: boolean } {
    const read = (slot: number) => Atomics.load(this.counters, slot);
    return {
      running: this.state === 'running' || this.state === 'starting',
      passiveCheckpoints: read(SLOT.passive),
      turns: read(SLOT.turns),
      restarts: read(SLOT.restarts),
      walFrames: read(SLOT.walFrames),
      walFramesMax: read(SLOT.walFramesMax),
      walFramesCopied: read(SLOT.walFramesCopied),
      errors: read(SLOT.errors),
    };
  }

  /** Stops the thread (its connection closed) and waits for it to exit. Safe to repeat. */
  async stop(): Promise<void> {
    // Referenced until it exits: a process closing its store waits for the thread, not for other work.
    if (this.state === 'starting' || this.state === 'running') this.worker.ref();
    if (this.state === 'starting') {
      this.state = 'stopped';
      await this.worker.terminate();
    } else if (this.state === 'running') {
      this.state = 'stopped';
      this.worker.postMessage('stop');
      await this.exited;
    }
    this.restarted?.();
  }

  private received(message: string): void {
    if (message === 'ready' && this.state === 'starting') this.state = 'running';
    else if (message === 'restarted') this.restarted?.();
    else if (message === 'turn') {
      void this.takeTurn(
        () =>
          new Promise<void>((resolve) => {
            if (this.state !== 'running') return resolve();
            // Referenced while the turn lasts: calls queued behind it keep waiting on the thread's answer alone.
            this.worker.ref();
            this.restarted = () => {
              this.restarted = undefined;
              this.worker.unref();
              resolve();
            };
            this.worker.postMessage('restart');
          }),
      );
    }
  }

  private failed(): void {
    this.restarted?.();
    if (this.state === 'stopped' || this.state === 'failed') return;
    this.state = 'failed';
    this.onFailure();
  }
}
