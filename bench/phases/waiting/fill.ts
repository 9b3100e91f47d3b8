/**
 * Starting figure 3's operations: sleepers (a poll hours away) or wakers (a poll every `wakerDelayMs`), paced by
 * what already waits (at most `START_WINDOW` ahead), until a count is reached and every started operation waits;
 * worker RSS sampled every ~5 s meanwhile.
 */
import type Database from 'better-sqlite3';
import type { StartRequest } from '../../../src/core/operation';
import type { BenchContext, Deployment } from '../../lib/context';
import { nowMs, round, rssMiB, runPool, sleepMs } from '../../lib/stats';
import type { RssSample, Straggler } from './result';
import { SLEEPER_DELAY_MS, START_WINDOW, type WaitingScale } from './scale';

/**
 * What waiting means in the store: accepted (the first poll planned), observing (polled, the next planned), or
 * reconciling a create whose answer was lost (its next attempt planned by the same policy): each on a durable timer.
 */
const WAITING = ['accepted', 'observing', 'create_unknown', 'reconciliation'];
const WAITING_STATES = `(${WAITING.map((state) => `'${state}'`).join(', ')})`;

/** Starts operations and knows how many wait. */
export class Filler {
  readonly ids: string[] = [];
  /** Starts that failed and were tried again. */
  startErrors = 0;
  /** The wakers started and not yet terminated. */
  readonly wakerIds: string[] = [];
  readonly curve: RssSample[] = [];
  readonly t0 = nowMs();
  private nextSample = this.t0;
  private nextLog = this.t0 + 30_000;
  private readonly countWaiting: Database.Statement;

  constructor(
    private readonly ctx: BenchContext,
    private readonly dep: Deployment,
    private readonly db: Database.Database,
    private readonly scale: WaitingScale,
    private readonly log: (line: string) => void,
  ) {
    this.countWaiting = db.prepare(`SELECT count(*) FROM operations WHERE local_state IN ${WAITING_STATES}`).pluck();
  }

  /** Terminated wakers whose rows still say waiting (a terminate does not touch the store). */
  private terminatedInWaitingRows = 0;

  /** Operations waiting now (terminated wakers not counted). */
  waiting(): number {
    return (this.countWaiting.get() as number) - this.terminatedInWaitingRows;
  }

  private sample(waiting: number): void {
    if (nowMs() >= this.nextLog) {
      this.nextLog = nowMs() + 30_000;
      this.log(`  ${waiting} waiting of ${this.ids.length} started after ${round((nowMs() - this.t0) / 1000, 0)} s`);
    }
    if (nowMs() < this.nextSample) return;
    this.nextSample = nowMs() + 5_000;
    this.curve.push({
      seconds: round((nowMs() - this.t0) / 1000, 1),
      waiting,
      workerRssMiB: round(rssMiB(this.dep.worker.pid), 1),
    });
  }

  private request(kind: 'sleeper' | 'waker'): StartRequest {
    const delayMs = kind === 'waker' ? this.scale.wakerDelayMs : SLEEPER_DELAY_MS;
    return {
      ...this.dep.request('main', 'forever', { baseDelayMs: delayMs, maxDelayMs: delayMs }),
      // A sleeper's poll, hours away, must not meet the bench's default 1-hour result deadline first.
      resultDeadline: { afterMs: 24 * 3_600_000 },
    };
  }

  /**
   * Starts one operation, trying again on an error (a start is idempotent: the same request joins the run it
   * started). A dev server starved of CPU has answered a start with a transient error (`Namespace not found`).
   */
  private async start(request: StartRequest): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.dep.client.start(request)).operationId;
      } catch (err) {
        if (attempt >= 5) throw err;
        this.startErrors += 1;
        if (this.startErrors <= 3) this.log(`  start of ${request.operationId} failed, trying again: ${String(err)}`);
        await sleepMs(2_000 * attempt);
      }
    }
  }

  /** Starts `kind` operations until `level` are started (all kinds) or `deadlineMs` passes; returns how many are. */
  async startUpTo(level: number, deadlineMs: number, kind: 'sleeper' | 'waker'): Promise<number> {
    while (this.ids.length < level && nowMs() < deadlineMs) {
      const reached = this.waiting();
      this.sample(reached);
      const batch = Math.min(level - this.ids.length, Math.max(0, reached + START_WINDOW - this.ids.length), 200);
      if (batch === 0) {
        await sleepMs(200);
        continue;
      }
      const ids = await Promise.all(Array.from({ length: batch }, () => this.start(this.request(kind))));
      this.ids.push(...ids);
      if (kind === 'waker') this.wakerIds.push(...ids);
    }
    return this.ids.length;
  }

  /**
   * Waits until every started operation waits, as long as more keep arriving (no new one for 2 minutes, or 15
   * minutes in all, ends the wait). The ones left are named with their states; at most 2% may be left (a create
   * lost on a starved machine ends `failed`; the figure is about the many that wait), more fails the run.
   */
  async allWaiting(): Promise<{ waiting: number; stragglers: Straggler[] }> {
    const hardDeadline = nowMs() + 900_000;
    let progressAt = nowMs();
    let last = -1;
    let reached: number;
    while ((reached = this.waiting()) < this.ids.length) {
      if (reached > last) [last, progressAt] = [reached, nowMs()];
      if (nowMs() - progressAt > 120_000 || nowMs() > hardDeadline) {
        const stragglers = await this.stragglers();
        const states = new Map<string, number>();
        for (const s of stragglers) states.set(String(s.localState), (states.get(String(s.localState)) ?? 0) + 1);
        this.log(`  not waiting, by local state: ${JSON.stringify([...states])}`);
        if (stragglers.length > this.ids.length / 50)
          throw new Error(
            `waiting: only ${reached} of ${this.ids.length} operations waiting (first not: ${JSON.stringify(stragglers.slice(0, 3))})`,
          );
        return { waiting: reached, stragglers };
      }
      this.sample(reached);
      await sleepMs(250);
    }
    return { waiting: reached, stragglers: [] };
  }

  /** Started operations by local state now (terminated wakers included: a terminate leaves the row as it was). */
  states(): Record<string, number> {
    const rows = this.db.prepare('SELECT local_state AS state, count(*) AS n FROM operations GROUP BY 1').all() as {
      state: string | null;
      n: number;
    }[];
    return Object.fromEntries(rows.map((r) => [String(r.state), r.n]));
  }

  /** Waits `ms` with nothing started, worker RSS sampled into the curve. */
  async hold(ms: number): Promise<void> {
    const until = nowMs() + ms;
    while (nowMs() < until) {
      this.sample(this.waiting());
      await sleepMs(1_000);
    }
  }

  /** Terminates the wakers (they would wake into the next fill or later work) and waits until none runs. */
  async terminateWakers(): Promise<void> {
    const ids = this.wakerIds.splice(0);
    const done = new Set(ids);
    await runPool(ids.length, 50, async (i) => {
      await this.ctx.temporal.workflow
        .getHandle(ids[i]!)
        .terminate('benchmark: the level was measured')
        .catch(() => undefined);
    });
    this.ids.splice(0, this.ids.length, ...this.ids.filter((id) => !done.has(id)));
    await sleepMs(2_000); // a read a terminated waker had in flight commits to its row, or is refused
    const stateOf = this.db.prepare('SELECT local_state FROM operations WHERE operation_id = ?').pluck();
    this.terminatedInWaitingRows += ids.filter((id) => WAITING.includes(stateOf.get(id) as string)).length;
  }

  /**
   * What the store journalled for an operation, one line per entry with its body (the transition's reason, the
   * observation's outcome; the store holds no secrets): why it did not reach the waiting state.
   */
  private storyOf(operationId: string): string[] {
    const rows = this.db
      .prepare('SELECT sequence, at, actor, kind, entry FROM journal WHERE operation_id = ? ORDER BY sequence')
      .all(operationId) as { sequence: number; at: string; actor: string; kind: string; entry: string }[];
    return rows.map((row) => {
      const body = (JSON.parse(row.entry) as { body?: unknown }).body;
      return `${row.sequence} ${row.at} ${row.actor} ${row.kind} ${JSON.stringify(body)}`.slice(0, 800);
    });
  }

  private async stragglers(): Promise<Straggler[]> {
    const stateOf = this.db.prepare('SELECT local_state FROM operations WHERE operation_id = ?').pluck();
    const found: Straggler[] = [];
    for (const operationId of this.ids) {
      const localState = (stateOf.get(operationId) as string | null | undefined) ?? null;
      if (localState !== null && WAITING.includes(localState)) continue;
      const straggler: Straggler = { operationId, localState };
      if (found.length < 10) {
        const d = await this.ctx.temporal.workflow
          .getHandle(operationId)
          .describe()
          .catch(() => undefined);
        if (d) straggler.workflow = `${d.status.name}, ${d.historyLength} events`;
        straggler.journal = this.storyOf(operationId);
      }
      found.push(straggler);
    }
    return found;
  }
}
