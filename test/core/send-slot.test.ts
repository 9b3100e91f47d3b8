import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DELIVERY_GUARD_MS,
  fleetPaceOf,
  mayWriteIn,
  SEND_LATENESS_GUARD_MS,
  sendWindowOf,
} from '../../src/core/send-slot';

/** The most instants of `arrivals` (ms) inside any half-open window of `windowMs`. */
function mostInAnyWindow(arrivals: readonly number[], windowMs: number): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

describe('fleet pace', () => {
  it.each([
    [10, 10, 1000, 110],
    [20, 20, 1000, 55],
    [1, 1, 1000, 1100],
    [0.5, 1, 2000, 2100],
    [2.5, 2, 800, 450],
  ])('%s/s: %i slots per %i ms window, one every %i ms', (rate, capacity, windowMs, intervalMs) => {
    const pace = fleetPaceOf(rate);
    expect(pace.capacity).toBe(capacity);
    expect(pace.windowMs).toBeCloseTo(windowMs, 9);
    expect(pace.intervalMs).toBeCloseTo(intervalMs, 9);
  });

  it('any number of workers, each writing anywhere in its window and arriving anywhere within the delivery guard, never puts more than capacity in one window', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 2.5, 5, 10, 20, 33.3),
        // Gaps the row leaves beyond the interval (idle time), and where in [slot, slot + G + D] each arrives.
        fc.array(fc.tuple(fc.nat(300), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 2, maxLength: 120 }),
        (rate, sends) => {
          const pace = fleetPaceOf(rate);
          let slot = 0;
          const arrivals = sends.map(([idleMs, where]) => {
            slot += pace.intervalMs + (idleMs < 200 ? 0 : idleMs);
            return slot + where * (SEND_LATENESS_GUARD_MS + DELIVERY_GUARD_MS);
          });
          expect(mostInAnyWindow(arrivals, pace.windowMs)).toBeLessThanOrEqual(pace.capacity);
        },
      ),
    );
  });

  it('the extremes: every other slot at its latest arrival, the rest at their earliest, still capacity per window', () => {
    const pace = fleetPaceOf(10);
    const arrivals = Array.from(
      { length: 100 },
      (_, k) => k * pace.intervalMs + (k % 11 === 0 ? SEND_LATENESS_GUARD_MS + DELIVERY_GUARD_MS : 0),
    );
    expect(mostInAnyWindow(arrivals, 1000)).toBe(10);
  });
});

describe('send window', () => {
  const reservation = { slotAtUs: 5_000_300_000, databaseNowUs: 5_000_000_000 }; // the slot is 300 ms away

  it('opens when the slot has surely come and closes the guard after it could first have come', () => {
    // Sent at 1000 ms, answered at 1004 ms on the worker's clock: the database read its clock in between.
    const window = sendWindowOf(reservation, 1000, 1004);
    expect(window).toEqual({ kind: 'window', notBeforeMs: 1304, notAfterMs: 1300 + SEND_LATENESS_GUARD_MS });
    expect(mayWriteIn(window, 1303.9)).toBe(false);
    expect(mayWriteIn(window, 1304)).toBe(true);
    expect(mayWriteIn(window, 1350)).toBe(true);
    expect(mayWriteIn(window, 1350.1)).toBe(false);
  });

  it('a round trip longer than the guard leaves no instant that is surely on time: missed', () => {
    expect(sendWindowOf(reservation, 1000, 1000 + SEND_LATENESS_GUARD_MS + 1)).toEqual({ kind: 'missed' });
    expect(mayWriteIn({ kind: 'missed' }, 1300)).toBe(false);
  });

  it('a slot already past when the database answered (its clock ahead of the next free instant) opens at once', () => {
    const now = sendWindowOf({ slotAtUs: 7_000_000, databaseNowUs: 7_000_020 }, 50, 52);
    expect(now).toEqual({ kind: 'window', notBeforeMs: 51.98, notAfterMs: 50 - 0.02 + SEND_LATENESS_GUARD_MS });
  });
});
