/**
 * The fleet half of a provider's rate limit: a send slot reserved from the store every worker shares (the
 * PostgreSQL store's `reserveProviderSend`, one statement), slept for, then kept to at the instant undici would
 * write the request: a request that would go out before its window or after it (a busy event loop, a slow session
 * read) is not written on it and takes a new one (`core/send-slot.ts` says why that makes the bound strict).
 *
 * Degradation: a worker that cannot reach the store gets no slot and sends nothing: the reservation's error fails
 * the call as `ASYNCJOB_ERR_NOTHING_SENT` (`sent-requests.ts`), which Temporal does not run again (provider calls
 * have one attempt); the workflow sends it again later as a request that never left (`afterActivityFailure`). A
 * worker never sends on a guess, so it never exceeds its share, whatever the others do, and never waits out an
 * outage to send after its workflow has moved on.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { mayWriteIn, type SendSlotReservation, type SendWindow } from '../core/send-slot';

/** Reserves the next send slot of one provider queue from the shared store. Each call takes a slot. */
export type ReserveProviderSend = () => Promise<SendSlotReservation>;

/**
 * Reservations in a row that may come back unusable (a round trip to the store longer than the lateness guard, or
 * a write that came too late) before the activity gives up and fails: a worker that slow sends nothing.
 */
const MAX_MISSED_SLOTS = 10;

/** Sleeps until `atMs` on `performance.now()`'s clock: never wakes early (a timer may fire a little before). */
async function sleepUntil(atMs: number, signal: AbortSignal | undefined): Promise<void> {
  for (let left = atMs - performance.now(); left > 0; left = atMs - performance.now())
    await sleep(Math.ceil(left), undefined, signal ? { signal } : {});
}

/**
 * Reserves a slot, retaking it while its window cannot be kept, and sleeps until its window opens. Rejects with the
 * store's error, or with the signal's reason when the activity is cancelled.
 */
export async function awaitSendWindow(
  reserve: ReserveProviderSend,
  windowOf: (reservation: SendSlotReservation, requestedAtMs: number, answeredAtMs: number) => SendWindow,
  signal?: AbortSignal,
): Promise<Extract<SendWindow, { kind: 'window' }>> {
  for (let tries = 0; tries < MAX_MISSED_SLOTS; tries++) {
    signal?.throwIfAborted();
    const requestedAtMs = performance.now();
    const reservation = await reserve();
    const window = windowOf(reservation, requestedAtMs, performance.now());
    if (window.kind === 'missed') continue;
    await sleepUntil(window.notBeforeMs, signal);
    return window;
  }
  throw tooManyMissed();
}

/** The error of an activity whose requests missed {@link MAX_MISSED_SLOTS} send slots in a row: nothing was sent. */
export function tooManyMissed(): Error {
  return new Error(
    `${MAX_MISSED_SLOTS} provider send slots in a row could not be kept (the store's answer or this worker's event loop too slow); nothing was sent`,
  );
}

/** The most slots one request may miss before {@link tooManyMissed}. */
export const MAX_MISSED_SEND_SLOTS = MAX_MISSED_SLOTS;

/**
 * The write check of one slot: true, once, for a write inside the window; false for a write outside it or a
 * second write on the slot (a resend after a renewed credential needs a slot of its own). `missed` says whether a
 * write was refused.
 */
export function sendWindowCheck(window: SendWindow): {
  readonly mayWrite: (atMs: number) => boolean;
  missed(): boolean;
} {
  let used = false;
  let refused = false;
  return {
    mayWrite: (atMs) => {
      if (used || !mayWriteIn(window, atMs)) {
        refused = true;
        return false;
      }
      used = true;
      return true;
    },
    missed: () => refused,
  };
}
