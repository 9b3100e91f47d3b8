/**
 * W1 within one process: when the webhook receiver and a status-polling activity of the same operation run in the
 * same worker process, the receiver wakes the activity's wait directly, so the confirming status read is sent
 * within milliseconds instead of after the signal's round trip through the workflow. The signal is still sent and
 * recorded: this only shortens the wait. Across processes the signal alone does it (the workflow hands the
 * operation back from the polling activity and reads at once).
 */

type Listener = () => void;

const listeners = new Map<string, Set<Listener>>();

/** Wakes every status-polling wait of this operation in this process; returns how many were woken. */
export function wakeLocalPolling(operationId: string): number {
  const waiting = listeners.get(operationId);
  if (waiting === undefined) return 0;
  for (const listener of [...waiting]) listener();
  return waiting.size;
}

/** Calls `listener` when a webhook for this operation arrives in this process; returns the function that stops. */
export function onLocalWebhook(operationId: string, listener: Listener): () => void {
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
