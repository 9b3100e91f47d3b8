/**
 * The per-process request pacer of a provider's activity worker: at most `capacity` provider requests WRITTEN in
 * any sliding window, waiters served first come, first served. Temporal's `maxTaskQueueActivitiesPerSecond` bounds
 * activity dispatches, not requests (a status loop reads many times in one activity), and lets single seconds burst
 * above it; this pacer makes the bound strict for the requests of one worker process.
 *
 * It spaces the instants at which undici starts writing each request on the socket (`HttpRequest.onWritten`), not
 * the instants slots were granted: an activity admitted on time can still write late (its store read, building the
 * request, a connection, an event loop busy with other work), and the next one, admitted one interval after the
 * first was *admitted*, could then write right after it (a CI run under CPU load saw 6 requests in one second
 * against a limit of 5). So one admitted request is outstanding at a time: the next is admitted only once the
 * previous one was written (or gave its slot back unsent), and no sooner than one interval after that write.
 *
 * It runs as an activity inbound interceptor, so an activity waits for its first slot before it starts (before
 * its deadline checks and reservations, S3), except the status loop, which takes each slot when a read is about to
 * be sent ({@link WAIT_BEFORE_SENDING}; a read that wait made late is refused at its write instant, `sendOnce`); a
 * further request of the same activity (a result page, the loop's next read) waits for a slot of its own
 * ({@link withRequestSlot}).
 *
 * With a store every worker shares (PostgreSQL), each request also takes a fleet send slot
 * (`fleet-send-slots.ts`) right before it is sent, after its turn here: the fleet's rate is then strict too. The
 * turn here still matters: one request of this process outstanding at a time means at most one reserved fleet
 * slot per worker and queue, so the shared row is never booked far ahead of the requests that use it.
 */
import { Context } from '@temporalio/activity';
import { type ActivityInterceptorsFactory } from '@temporalio/worker';
import { sendWindowOf } from '../core/send-slot';
import {
  awaitSendWindow,
  MAX_MISSED_SEND_SLOTS,
  sendWindowCheck,
  tooManyMissed,
  type ReserveProviderSend,
} from './fleet-send-slots';
import { whileHeartbeating } from './heartbeat';
import { markingWrites } from './sent-requests';

/**
 * A pace: at most `capacity` sends in any `windowMs`, kept by spacing sends at least `intervalMs`
 * (`windowMs / capacity`) apart. Evenly spaced, not `capacity` at once then a pause, so any `capacity + 1`
 * consecutive sends span a whole window and the sliding window never holds more than `capacity`.
 */
export interface Pace {
  /** Requests per window: `max(1, floor(rate))`. */
  capacity: number;
  /** `capacity * 1000 / rate` plus {@link PACE_GUARD_MS}, ms. */
  windowMs: number;
  /** The least time between two sends, `windowMs / capacity`, ms. */
  intervalMs: number;
}

/**
 * The guard added to every window, ms. A request reaches the provider some time after it is written (the socket,
 * the network, the provider's own accept and parse), and that time varies: two requests written a window apart
 * could arrive less than a window apart, so a window measured at the provider could hold `capacity + 1`. The guard
 * must exceed that spread: on loopback it is under a millisecond once the request is written (before sends were
 * paced, the spread from admission to arrival measured 1-10 ms warm and 30-40 ms for a cold process). 50 ms costs
 * 5% of the rate at 1 s windows (less at longer ones). A spread beyond it (a congested network path) is outside
 * what an in-process pacer sees.
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
 * When the next request may be admitted (ms on the same clock as `nowMs`), given when the last request was
 * written (undefined before the first): now, or one interval after that write, whichever is later. Pure.
 */
export function nextAdmissionAt(lastWrittenAtMs: number | undefined, pace: Pace, nowMs: number): number {
  return lastWrittenAtMs === undefined ? nowMs : Math.max(nowMs, lastWrittenAtMs + pace.intervalMs);
}

/** One admitted request's turn. Both methods are safe to repeat and to pass around unbound. */
export interface RequestSlot {
  /**
   * The request is being written at `writtenAtMs` (the pacer's clock: `performance.now()`, as `HttpRequest.onWritten`
   * reports it): the next slot opens one interval later. A second write (a resend) moves that later still. False
   * refuses the write (a fleet send slot whose window has passed): nothing is sent and nothing moves.
   */
  readonly written: (writtenAtMs: number) => boolean;
  /** Gives the slot back. Unwritten, nothing was sent and the next waiter need not wait for it; written, a no-op. */
  readonly release: () => void;
}

/** Options of {@link RequestPacer}. */
export interface RequestPacerOptions {
  /**
   * A monotonic clock, ms; defaults to `performance.now` (not moved by wall-clock adjustments), the clock of the
   * send instants the HTTP client reports. A test that gives another clock gives slots instants on it.
   */
  clock?: () => number;
}

interface Waiter {
  admit: (slot: RequestSlot) => void;
}

/** The send-spaced limiter described above, with a first come, first served queue. One per provider queue and process. */
export class RequestPacer {
  readonly pace: Pace;
  private readonly clock: () => number;
  private lastWrittenAtMs: number | undefined;
  /** The admitted slot whose request is neither written nor given back: no one else is admitted meanwhile. */
  private outstanding: RequestSlot | undefined;
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
   * Resolves with a slot when this request may be sent: send it now, then report it `written` (or `release` the
   * slot unsent). Rejects with the signal's reason, taking no slot, when `signal` aborts first.
   */
  acquire(signal?: AbortSignal): Promise<RequestSlot> {
    if (signal?.aborted) return Promise.reject(signal.reason as unknown);
    return new Promise<RequestSlot>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.queue.indexOf(waiter);
        if (index !== -1) this.queue.splice(index, 1);
        reject(signal!.reason as unknown);
      };
      const waiter: Waiter = {
        admit: (slot) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(slot);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
      this.admitDue();
    });
  }

  /** Admits the head of the queue when no request is outstanding and the interval since the last write is over. */
  private admitDue(): void {
    if (this.queue.length === 0 || this.outstanding !== undefined) return;
    const now = this.clock();
    const at = nextAdmissionAt(this.lastWrittenAtMs, this.pace, now);
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
    const slot = this.newSlot();
    this.outstanding = slot;
    this.queue.shift()!.admit(slot);
  }

  private newSlot(): RequestSlot {
    const close = (): void => {
      if (this.outstanding !== slot) return;
      this.outstanding = undefined;
      this.admitDue();
    };
    const slot: RequestSlot = {
      written: (writtenAtMs) => {
        this.lastWrittenAtMs = Math.max(this.lastWrittenAtMs ?? writtenAtMs, writtenAtMs);
        close();
        return true;
      },
      release: close,
    };
    return slot;
  }
}

/**
 * Waits for a slot of `pacer` inside an activity: heartbeats while it waits (the provider calls' heartbeat
 * timeout is a few heartbeat intervals, and a long queue can take longer than that), and throws the activity's
 * `CancelledFailure` when the activity is cancelled first.
 */
async function awaitRequestSlot(pacer: RequestPacer, context: Context): Promise<RequestSlot> {
  return whileHeartbeating(() => pacer.acquire(context.cancellationSignal), { context });
}

/** A slot ready to send on, and whether its write was refused (then nothing was sent: send again, on a new one). */
interface ReadySlot {
  readonly slot: RequestSlot;
  missed(): boolean;
}

/** The slots of one paced activity: the first, taken before it started (none for the status loop), then one per request. */
class ActivityPacing {
  constructor(
    private readonly pacer: RequestPacer,
    private readonly context: Context,
    private unused: RequestSlot | undefined,
    private readonly reserveFleetSend: ReserveProviderSend | undefined,
  ) {}

  /** This process's turn, then (with a shared store) a fleet send slot whose window has opened. */
  async next(): Promise<ReadySlot> {
    const local = this.unused ?? (await awaitRequestSlot(this.pacer, this.context));
    this.unused = undefined;
    const reserve = this.reserveFleetSend;
    if (reserve === undefined) return { slot: local, missed: () => false };
    try {
      const window = await whileHeartbeating(
        () => awaitSendWindow(reserve, sendWindowOf, this.context.cancellationSignal),
        { context: this.context },
      );
      const check = sendWindowCheck(window);
      const slot: RequestSlot = {
        written: (writtenAtMs) => check.mayWrite(writtenAtMs) && local.written(writtenAtMs),
        release: local.release,
      };
      return { slot, missed: check.missed };
    } catch (err) {
      local.release();
      throw err;
    }
  }

  /** The activity ended: a first slot it never used goes back (nothing was sent on it). */
  end(): void {
    this.unused?.release();
    this.unused = undefined;
  }
}

const pacings = new WeakMap<Context, ActivityPacing>();

const UNPACED: RequestSlot = { written: () => true, release: () => undefined };

function currentPacing(): ActivityPacing | undefined {
  try {
    return pacings.get(Context.current());
  } catch {
    return undefined; // outside an activity
  }
}

/**
 * Sends one provider request in its slot: `send` must pass `slot.written` to the HTTP client as `onWritten`, which
 * also marks the activity as having written a request (`sent-requests.ts`). The slot is given back when `send`
 * settles (a no-op once written). Outside a paced activity the slot does nothing.
 * A write the slot refused (its fleet send window had passed) sent nothing, so `send` runs again on a new slot:
 * safe for any request, since the refusal comes before the first byte (or, for a resend after a renewed credential,
 * before the second attempt of a request that is safe to resend). Throws after too many misses in a row.
 */
export async function withRequestSlot<T>(send: (slot: RequestSlot) => Promise<T>): Promise<T> {
  const marking = markingWrites();
  const marked = (slot: RequestSlot): RequestSlot => ({ ...slot, written: marking(slot.written) });
  const pacing = currentPacing();
  if (pacing === undefined) return send(marked(UNPACED));
  for (let tries = 0; tries < MAX_MISSED_SEND_SLOTS; tries++) {
    const ready = await pacing.next();
    try {
      const sent = await send(marked(ready.slot));
      if (!ready.missed()) return sent;
    } finally {
      ready.slot.release();
    }
  }
  throw tooManyMissed();
}

/**
 * The activities that may wait before their first request: the status loop (`pollStatus`) can begin with the
 * short wait its workflow handed it, and a slot taken before it ran would be held through that wait, keeping every
 * other call of the queue in this process waiting. Each of its requests takes its slot when it is about to be
 * sent; a read the slot's wait made late is still never written at or after the deadline (`sendOnce`, S3).
 */
const WAIT_BEFORE_SENDING: ReadonlySet<string> = new Set(['pollStatus']);

/**
 * The activity interceptor that paces a provider's queue: each activity waits for a slot of `pacer`, then runs
 * (one that may wait before it sends, {@link WAIT_BEFORE_SENDING}, takes its first slot when it sends); its
 * requests are paced by their send instants ({@link withRequestSlot}), and, given `reserveFleetSend` (the shared
 * store's slots of this queue), each also waits for a fleet send slot and is written only inside it. Every
 * activity on a provider's queue is a provider call, so all of them are paced.
 */
export function pacingInterceptor(
  pacer: RequestPacer,
  reserveFleetSend?: ReserveProviderSend,
): ActivityInterceptorsFactory {
  return (context) => ({
    inbound: {
      async execute(input, next) {
        const first = WAIT_BEFORE_SENDING.has(context.info.activityType)
          ? undefined
          : await awaitRequestSlot(pacer, context);
        const pacing = new ActivityPacing(pacer, context, first, reserveFleetSend);
        pacings.set(context, pacing);
        try {
          return await next(input);
        } finally {
          pacing.end();
          pacings.delete(context);
        }
      },
    },
  });
}
