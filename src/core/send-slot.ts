/**
 * The timing of a provider's fleet-wide rate limit, pure: the spacing of the send slots one shared row hands out
 * (the PostgreSQL store's `provider_send_slots`), and the window in which a request may be written on its slot.
 *
 * Why the bound is strict for any number of workers. The row hands out slots s1 < s2 < ... on the database's
 * clock, each at least `intervalMs` after the one before (one statement: slot = greatest(now, next_free),
 * next_free = slot + interval). A request is written only inside its slot's window: never before its slot, never
 * more than {@link SEND_LATENESS_GUARD_MS} after it; a request that would be written later takes a new slot and
 * its old one goes unused ({@link sendWindowOf}, checked at the instant undici would write it). A request written
 * at w reaches the provider by w + {@link DELIVERY_GUARD_MS}. So the request of slot k arrives within
 * [s_k, s_k + G + D] (G the lateness guard, D the delivery guard), and m arrivals inside one window of `windowMs`
 * come from m distinct slots inside an interval of `windowMs + G + D`: spaced `intervalMs` apart, m - 1 intervals
 * fit in it, so (m - 1) * intervalMs < windowMs + G + D. With intervalMs = (windowMs + G + D) / capacity this is
 * m - 1 < capacity: at most `capacity` requests in any window, however many workers share the row, however late
 * any of them runs. A slot nobody writes on only lowers the rate.
 */

/**
 * The most a request may be written after its slot, ms. It covers the work between a worker's wake-up at its slot
 * and undici's write (the provider session's read, the credential, the socket), a few ms on an idle worker, and a
 * busy event loop's delay; a request later than this takes a new slot, never the old one. 50 ms costs 5% of the
 * rate at one-second windows.
 */
export const SEND_LATENESS_GUARD_MS = 50;

/**
 * The most a request's arrival at the provider may trail its write, ms (the socket, the network, the provider's
 * accept and parse): measured on loopback at well under a millisecond warm, 30-40 ms for a worker just started. The
 * per-process pacer's guard (`PACE_GUARD_MS`) is the same spread.
 */
export const DELIVERY_GUARD_MS = 50;

/** The slot spacing of a rate shared by a fleet: at most `capacity` requests arrive in any `windowMs`. */
export interface FleetPace {
  /** Requests per window: `max(1, floor(rate))`. */
  readonly capacity: number;
  /** `capacity * 1000 / rate`, ms: one second for a whole number of requests per second. */
  readonly windowMs: number;
  /** The least time between two slots, `(windowMs + lateness guard + delivery guard) / capacity`, ms. */
  readonly intervalMs: number;
}

/** The fleet pace of `requestsPerSecond` (a positive finite number): 10/s is one slot every 110 ms. Pure. */
export function fleetPaceOf(requestsPerSecond: number): FleetPace {
  const capacity = Math.max(1, Math.floor(requestsPerSecond));
  const windowMs = (capacity * 1000) / requestsPerSecond;
  return { capacity, windowMs, intervalMs: (windowMs + SEND_LATENESS_GUARD_MS + DELIVERY_GUARD_MS) / capacity };
}

/** A slot as the reserving statement returned it: both instants on the database's clock, microseconds. */
export interface SendSlotReservation {
  /** The slot: the earliest instant the request may be written. */
  readonly slotAtUs: number;
  /** The database's clock when the statement ran (`clock_timestamp()`, after the row was locked). */
  readonly databaseNowUs: number;
}

/**
 * Where a slot falls on the worker's own monotonic clock, or that it cannot be kept. `notBeforeMs` and
 * `notAfterMs` bound the write: the request is then written no earlier than its slot and no later than the
 * lateness guard after it, in real time, whatever the two hosts' clocks say.
 */
export type SendWindow =
  { readonly kind: 'window'; readonly notBeforeMs: number; readonly notAfterMs: number } | { readonly kind: 'missed' };

/**
 * The send window of a reservation, on the worker's monotonic clock, given when the statement was sent
 * (`requestedAtMs`) and when its answer arrived (`answeredAtMs`). The database read its clock somewhere between
 * the two, so the slot lies between `requestedAtMs + wait` and `answeredAtMs + wait` (wait = slot - database
 * now): writing no earlier than the later bound is never early, and no later than the earlier bound plus the
 * guard is never late. A round trip longer than the guard leaves no such instant: `missed`. Pure.
 */
export function sendWindowOf(
  reservation: SendSlotReservation,
  requestedAtMs: number,
  answeredAtMs: number,
  guardMs: number = SEND_LATENESS_GUARD_MS,
): SendWindow {
  const waitMs = (reservation.slotAtUs - reservation.databaseNowUs) / 1000;
  const notBeforeMs = answeredAtMs + waitMs;
  const notAfterMs = requestedAtMs + waitMs + guardMs;
  return notBeforeMs <= notAfterMs ? { kind: 'window', notBeforeMs, notAfterMs } : { kind: 'missed' };
}

/** Whether a request may be written at `atMs` (the worker's monotonic clock) in `window`. Pure. */
export function mayWriteIn(window: SendWindow, atMs: number): boolean {
  return window.kind === 'window' && atMs >= window.notBeforeMs && atMs <= window.notAfterMs;
}
