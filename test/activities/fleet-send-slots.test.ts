import { describe, expect, it } from 'vitest';
import { awaitSendWindow, sendWindowCheck } from '../../src/activities/fleet-send-slots';
import { sendWindowOf, type SendSlotReservation } from '../../src/core/send-slot';

/** A reserve that answers `waitsMs` in turn: each slot that far after the database's clock. */
function reserveFrom(waitsMs: number[]): { reserve: () => Promise<SendSlotReservation>; calls: () => number } {
  let calls = 0;
  return {
    reserve: () => {
      const waitMs = waitsMs[Math.min(calls++, waitsMs.length - 1)]!;
      return Promise.resolve({ slotAtUs: 1_000_000_000 + waitMs * 1000, databaseNowUs: 1_000_000_000 });
    },
    calls: () => calls,
  };
}

describe('fleet send slots in the worker', () => {
  it('sleeps until the window opens, never waking before it', async () => {
    const { reserve } = reserveFrom([40]);
    const before = performance.now();
    const window = await awaitSendWindow(reserve, sendWindowOf);
    expect(performance.now()).toBeGreaterThanOrEqual(window.notBeforeMs);
    expect(window.notBeforeMs - before).toBeGreaterThanOrEqual(40);
  });

  it('a reservation whose round trip outlasted the guard is taken again, not kept', async () => {
    const { reserve, calls } = reserveFrom([0]);
    let answers = 0;
    // The first answer arrives 60 ms after it was asked (beyond the 50 ms guard), the second at once.
    const window = await awaitSendWindow(reserve, (reservation, requestedAtMs, answeredAtMs) =>
      sendWindowOf(reservation, requestedAtMs, answeredAtMs + (answers++ === 0 ? 60 : 0)),
    );
    expect(window.kind).toBe('window');
    expect(calls()).toBe(2);
  });

  it('a store that cannot be reached gives no slot: the error reaches the activity and nothing is sent', async () => {
    const down = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    await expect(awaitSendWindow(down, sendWindowOf)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('a cancelled activity stops waiting for its slot', async () => {
    const { reserve } = reserveFrom([5_000]);
    const controller = new AbortController();
    const waiting = awaitSendWindow(reserve, sendWindowOf, controller.signal);
    controller.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow(/cancelled|aborted/);
  });

  it('a slot takes one write inside its window: an early, a late and a second write are refused', () => {
    const window = { kind: 'window' as const, notBeforeMs: 100, notAfterMs: 150 };
    const early = sendWindowCheck(window);
    expect(early.mayWrite(99)).toBe(false);
    expect(early.missed()).toBe(true);
    const late = sendWindowCheck(window);
    expect(late.mayWrite(151)).toBe(false);
    const once = sendWindowCheck(window);
    expect(once.mayWrite(120)).toBe(true);
    expect(once.missed()).toBe(false);
    // A resend after a renewed credential is a second request: it needs a slot of its own.
    expect(once.mayWrite(125)).toBe(false);
    expect(once.missed()).toBe(true);
  });
});
