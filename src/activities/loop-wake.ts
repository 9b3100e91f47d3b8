/**
 * Waking a status loop (`poll-status.ts`) within its own process, so news reaches it in milliseconds instead of
 * through Temporal's round trips:
 * - `webhook`: the webhook receiver of the same worker process wakes the loop's wait, and the confirming status
 *   read is sent at once (W1). The signal is still sent and recorded: this only shortens the wait. Across processes
 *   the signal alone does it (the workflow hands the operation back from the polling activity and reads at once).
 * - `message`: the workflow received a cancel, a decision or an extension while the loop holds the operation, and
 *   asks for it back (the `wakeStatusLoop` local activity, which runs in the process of the workflow's worker). The
 *   loop hands the operation back at once instead of when its next heartbeat brings Temporal's cancellation. On a
 *   store the fleet shares (PostgreSQL), the request goes to every worker process too ({@link publishMessageWake},
 *   {@link relayMessageWakes}), so a loop in another process hands back within milliseconds as well. The
 *   cancellation is requested as well, so a loop the notice misses still ends, at its next heartbeat sent (every
 *   10 to 40 s, `beatEveryMs`).
 */
import { randomUUID } from 'node:crypto';
import type { OperationStore } from '../adapters/store/operation-store';
import type { ActivityLogger } from './provider-call';

/** Why a loop is woken. */
export type LoopWake = 'webhook' | 'message';

type Listener = (wake: LoopWake) => void;

const listeners = new Map<string, Set<Listener>>();

/**
 * Message wakes that found no loop of their operation listening in this process, by when they came (oldest first). A
 * loop whose activity was scheduled before then and only begins listening now (its task was on its way to this worker)
 * was asked back too, and takes the wake when it begins. Kept {@link UNHEARD_MESSAGE_KEPT_MS}: a task reaches its
 * worker well within that, and a loop scheduled after the wake never takes it (by this worker's clock against the
 * server's: with one ahead of the other, a wake may be left to the heartbeat, or end a newer loop that the workflow,
 * with no message waiting, then schedules again; either way nothing is lost).
 */
const unheardMessages = new Map<string, number>();
const UNHEARD_MESSAGE_KEPT_MS = 60_000;

function keepUnheardMessage(operationId: string, nowMs: number): void {
  for (const [kept, atMs] of unheardMessages) {
    if (nowMs - atMs < UNHEARD_MESSAGE_KEPT_MS) break;
    unheardMessages.delete(kept);
  }
  unheardMessages.delete(operationId);
  unheardMessages.set(operationId, nowMs);
}

/** Wakes every status loop of this operation in this process; returns how many were woken. */
export function wakeStatusLoops(operationId: string, wake: LoopWake): number {
  const waiting = listeners.get(operationId);
  if (waiting === undefined) {
    if (wake === 'message') keepUnheardMessage(operationId, Date.now());
    return 0;
  }
  for (const listener of [...waiting]) listener(wake);
  return waiting.size;
}

/**
 * Calls `listener` whenever a status loop of this operation is woken in this process, and at once for a message wake
 * that came here since `scheduledAtMs` (when the loop's activity attempt was scheduled) and found no loop listening;
 * returns the function that stops.
 */
export function onStatusLoopWake(operationId: string, listener: Listener, scheduledAtMs?: number): () => void {
  let waiting = listeners.get(operationId);
  if (waiting === undefined) {
    waiting = new Set();
    listeners.set(operationId, waiting);
  }
  waiting.add(listener);
  const unheardAtMs = unheardMessages.get(operationId);
  const fresh = unheardAtMs !== undefined && Date.now() - unheardAtMs < UNHEARD_MESSAGE_KEPT_MS;
  if (fresh && scheduledAtMs !== undefined && unheardAtMs >= scheduledAtMs) {
    unheardMessages.delete(operationId);
    listener('message');
  }
  return () => {
    waiting.delete(listener);
    if (waiting.size === 0 && listeners.get(operationId) === waiting) listeners.delete(operationId);
  };
}

/** This process, as the notices it publishes name it: its own come back to it and are ignored. */
const PROCESS_ORIGIN = randomUUID();

/** Asks every worker sharing `store` to wake the operation's status loops for a message (PostgreSQL; else nothing). */
export async function publishMessageWake(store: OperationStore, operationId: string): Promise<void> {
  await store.publishLoopWake?.({ operationId, origin: PROCESS_ORIGIN });
}

/**
 * Wakes this process's status loops for the messages other processes publish on `store`; resolves to the function
 * that stops, or to undefined on a store that publishes none (SQLite). A lost listening connection is logged and
 * made again; a loop whose wake it missed hands back at its next heartbeat sent.
 */
export async function relayMessageWakes(
  store: OperationStore,
  logger: ActivityLogger,
): Promise<(() => Promise<void>) | undefined> {
  return store.listenForLoopWakes?.(
    (notice) => {
      if (notice.origin === PROCESS_ORIGIN) return;
      const woken = wakeStatusLoops(notice.operationId, 'message');
      if (woken > 0) logger.info('status loop woken for a message another worker received', notice);
    },
    (err) =>
      logger.warn('loop wakes from other workers: a connection lost or a notice refused', {
        error: err.message,
        effect: 'a loop here whose wake is missed hands back at its next heartbeat',
      }),
  );
}
