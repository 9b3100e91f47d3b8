/**
 * Webhook announcements of job state changes, and the timers that make time-based steps happen while nobody
 * reads the status (only when webhooks are on: otherwise steps advance lazily on reads).
 */
import type { Dialect } from './dialects/types';
import { iso } from './dialects/types';
import { TERMINAL_STATES, type JobStore, type SimJob, type StateChange } from './jobs';
import type { WebhookDispatcher } from './webhooks';

/** What the announcer reads from the simulator at each change (the dialect may be replaced by a new scenario). */
export interface AnnouncerSources {
  readonly jobs: JobStore;
  readonly webhooks: WebhookDispatcher;
  readonly dialect: Dialect;
  readonly clock: () => number;
}

/** Announces state changes by webhook and keeps one advance timer per job. */
export class StateAnnouncer {
  private readonly advanceTimers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly sources: AnnouncerSources) {}

  /** Called by the job store when a job enters a state (including its first one). */
  onStateEntered(job: SimJob, change: StateChange): void {
    const { webhooks, dialect, jobs, clock } = this.sources;
    if (!webhooks.enabled()) return;
    const terminal = TERMINAL_STATES.has(change.state);
    // The initial state is announced only when the job starts finished (a synchronous or instant job).
    if (job.history.length > 1 || terminal) {
      webhooks.emit(
        {
          event_id: `evt_${job.id}_${job.history.length - 1}`,
          job_id: job.id,
          state: dialect.publicState(change.state),
          occurred_at: iso(change.atMs),
        },
        job.script.webhook,
        terminal,
      );
    }
    const previous = this.advanceTimers.get(job.id);
    if (previous) clearTimeout(previous);
    this.advanceTimers.delete(job.id);
    const waitMs = terminal ? undefined : jobs.msUntilNextChange(job, change.atMs);
    if (waitMs === undefined) return;
    const timer = setTimeout(() => {
      this.advanceTimers.delete(job.id);
      jobs.advance(job, Math.max(clock(), change.atMs + waitMs));
    }, waitMs + 1);
    timer.unref();
    this.advanceTimers.set(job.id, timer);
  }

  /** Cancels every advance timer (on reset and stop). Safe to repeat. */
  clear(): void {
    for (const timer of this.advanceTimers.values()) clearTimeout(timer);
    this.advanceTimers.clear();
  }
}
