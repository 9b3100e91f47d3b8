/**
 * Waking a status loop (`poll-status.ts`) within its own process, so news reaches it in milliseconds instead of
 * through Temporal's round trips:
 * - `webhook`: the webhook receiver of the same worker process wakes the loop's wait, and the confirming status
 *   read is sent at once (W1). The signal is still sent and recorded: this only shortens the wait. Across processes
 *   the signal alone does it (the workflow hands the operation back from the polling activity and reads at once).
 * - `message`: the workflow received a cancel, a decision or an extension while the loop holds the operation, and
 *   asks for it back (the `wakeStatusLoop` local activity, which runs in the process of the workflow's worker). The
 *   loop hands the operation back at once instead of when its next heartbeat brings Temporal's cancellation. The
 *   cancellation is requested as well, so a loop in another process still ends, at its next heartbeat sent (at most
 *   every 10 s, `HEARTBEAT_SEND_MS`).
 */

/** Why a loop is woken. */
export type LoopWake = 'webhook' | 'message';

type Listener = (wake: LoopWake) => void;

const listeners = new Map<string, Set<Listener>>();

/** Wakes every status loop of this operation in this process; returns how many were woken. */
export function wakeStatusLoops(operationId: string, wake: LoopWake): number {
  const waiting = listeners.get(operationId);
  if (waiting === undefined) return 0;
  for (const listener of [...waiting]) listener(wake);
  return waiting.size;
}

/** Calls `listener` whenever a status loop of this operation is woken in this process; returns the function that stops. */
export function onStatusLoopWake(operationId: string, listener: Listener): () => void {
  let waiting = listeners.get(operationId);
  if (waiting === undefined) {
    waiting = new Set();
    listeners.set(operationId, waiting);
  }
  waiting.add(listener);
  return () => {
    waiting.delete(listener);
    if (waiting.size === 0 && listeners.get(operationId) === waiting) listeners.delete(operationId);
  };
}
