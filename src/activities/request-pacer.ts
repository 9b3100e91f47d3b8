/**
 * The per-process request pacer of a provider's activity worker: at most `capacity` provider calls admitted in
 * any sliding window, waiters served first come, first served. Temporal's `maxTaskQueueActivitiesPerSecond`
 * keeps a whole fleet's *average* under the provider's rate but lets single seconds burst above it; this pacer
 * makes the bound strict for the calls of one worker process. It runs as an activity inbound interceptor, so
 * every activity on the provider's queue (each sends at most one request) waits for a slot before it starts.
 */
import { type Context } from '@temporalio/activity';
import { type ActivityInterceptorsFactory } from '@temporalio/worker';
import { HEARTBEAT_INTERVAL_MS } from './provider-call';

/**
 * A pace: at most `capacity` admissions in any `windowMs`, kept by admitting one every `intervalMs`
 * (`windowMs / capacity`). Evenly spaced, not `capacity` at once then a pause: calls admitted together run their
 * work before the send (the store read, building the request) side by side on one event loop and reach the
 * provider spread over tens of ms, which a later, quicker window can overtake (measured on the dev server: five
 * admitted together arrived up to 68 ms after admission, spaced ones 1-10 ms once warm). Any `capacity + 1`
 * consecutive admissions still span a whole window, so the sliding window never holds more than `capacity`.
 */
export interface Pace {
  /** Requests admitted per window: `max(1, floor(rate))`. */
  capacity: number;
  /** `capacity * 1000 / rate` plus {@link PACE_GUARD_MS}, ms. */
  windowMs: number;
  /** The least time between two admissions, `windowMs / capacity`, ms. */
  intervalMs: number;
}

/**
 * The guard added to every window, ms. A request reaches the provider some time after its admission (the
 * idempotency read of the store, building the request, the event loop shared with the workflow worker and
 * store activities, the socket), and that time varies: two admissions a window apart could arrive less than a
 * window apart, so a window measured at the provider could hold `capacity + 1`. The guard must exceed that
 * spread. Measured on the dev server with the simulator: 1-10 ms once warm, 30-40 ms for the first call of a
 * cold process; 50 ms covers both and costs 5% of the rate at 1 s windows (less at longer ones). A spread
 * beyond it (a TLS handshake on a new connection, a long GC pause) is outside what an in-process pacer sees.
 */
export const PACE_GUARD_MS = 50;

/** Throws unless `requestsPerSecond` is a positive finite number; `what` names the setting in the message. */
export function assertRequestRate(requestsPerSecond: number, what = 'maxRequestsPerSecond'): void {
  if (typeof requestsPerSecond !== 'number' || !Number.isFinite(requestsPerSecond) || requestsPerSecond <= 0) {
    throw new RangeError(
      `${what} must be a positive finite number of requests per second, got ${String(requestsPerSecond)}`,
    );
  }
}

/** The pace of a rate: 20/s is 20 per 1 s, 0.5/s is 1 per 2 s, 2.5/s is 2 per 800 ms (each window plus the guard). */
export function paceOf(requestsPerSecond: number): Pace {
  assertRequestRate(requestsPerSecond);
  const capacity = Math.max(1, Math.floor(requestsPerSecond));
  const windowMs = (capacity * 1000) / requestsPerSecond + PACE_GUARD_MS;
  return { capacity, windowMs, intervalMs: windowMs / capacity };
}

/**
 * When the next request may be admitted (ms on the same clock as `nowMs`), given the time of the last admission
 * (undefined before the first): now, or one interval after the last, whichever is later. Pure.
 */
export function nextAdmissionAt(lastAdmittedAtMs: number | undefined, pace: Pace, nowMs: number): number {
  return lastAdmittedAtMs === undefined ? nowMs : Math.max(nowMs, lastAdmittedAtMs + pace.intervalMs);
}

/** Options of {@link RequestPacer}. */
export interface RequestPacerOptions {
  /** A monotonic clock, ms; defaults to `performance.now` (not moved by wall-clock adjustments). */
  clock?: () => number;
}

interface Waiter {
  admit: () => void;
}

/** A sliding-window limiter (evenly spaced, see {@link Pace}) with a first come, first served queue. One per provider queue and process. */
export class RequestPacer {
  readonly pace: Pace;
  private readonly clock: () => number;
  private lastAdmittedAtMs: number | undefined;
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(requestsPerSecond: number, options: RequestPacerOptions = {}) {
    this.pace = paceOf(requestsPerSecond);
    this.clock = options.clock ?? (() => performance.now());
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Resolves when this request is admitted (it then counts against the window: send it now). Rejects with the
   * signal's reason, taking no slot, when `signal` aborts first.
   */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason as unknown);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.queue.indexOf(waiter);
        if (index !== -1) this.queue.splice(index, 1);
        reject(signal!.reason as unknown);
      };
      const waiter: Waiter = {
        admit: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
      this.admitDue();
    });
  }

  /** Admits waiters from the head while the window allows, then sleeps until the next slot opens. */
  private admitDue(): void {
    while (this.queue.length > 0) {
      const now = this.clock();
      const at = nextAdmissionAt(this.lastAdmittedAtMs, this.pace, now);
      if (at > now) {
        this.timer ??= setTimeout(
          () => {
            this.timer = undefined;
            this.admitDue();
          },
          Math.ceil(at - now),
        );
        return;
      }
      this.lastAdmittedAtMs = now;
      this.queue.shift()!.admit();
    }
  }
}

/**
 * Waits for a slot of `pacer` inside an activity: heartbeats while it waits (the provider calls' heartbeat
 * timeout is a few heartbeat intervals, and a long queue can take longer than that), and throws the activity's
 * `CancelledFailure` when the activity is cancelled first.
 */
export async function awaitRequestSlot(pacer: RequestPacer, context: Context): Promise<void> {
  const beating = setInterval(() => context.heartbeat(), HEARTBEAT_INTERVAL_MS);
  try {
    await pacer.acquire(context.cancellationSignal);
  } finally {
    clearInterval(beating);
  }
}

/**
 * The activity interceptor that paces a provider's queue: each activity waits for a slot of `pacer`, then runs.
 * Every activity on a provider's queue is a provider call, so all of them are paced.
 */
export function pacingInterceptor(pacer: RequestPacer): ActivityInterceptorsFactory {
  return (context) => ({
    inbound: {
      async execute(input, next) {
        await awaitRequestSlot(pacer, context);
        return next(input);
      },
    },
  });
}
