/**
 * The workflow's request for its operation back from a status loop, delivered in this process
 * (`loop-wake.ts`): run as a local activity, so in the worker process that runs the workflow's task. A loop of the
 * operation in this process hands the operation back at once; elsewhere it does at its next heartbeat sent (at most
 * every 10 s), through the
 * cancellation the workflow requests beside this. Sends and records nothing.
 */
import { wakeStatusLoops } from './loop-wake';

/** Wakes the operation's status loops in this process; answers how many there were (0: none here). */
export function wakeStatusLoop(): (input: { operationId: string }) => Promise<{ loopsWoken: number }> {
  return async ({ operationId }) => ({ loopsWoken: wakeStatusLoops(operationId, 'message') });
}
