/**
 * The workflow's request for its operation back from a status loop (`loop-wake.ts`): run as a local activity, so in
 * the worker process that runs the workflow's task. A loop of the operation in this process hands the operation back
 * at once; on a store the fleet shares (PostgreSQL), the request is published to every worker process, whose loop
 * does too. A loop the request misses hands back at its next heartbeat sent (every 10 to 40 s), through the
 * cancellation the workflow requests beside this. Sends nothing to a provider and records nothing.
 */
import { publishMessageWake, wakeStatusLoops } from './loop-wake';
import { type ActivityContext } from './provider-call';

/**
 * Wakes the operation's status loops, here and in the fleet; answers how many there were here (0: none here). A
 * publish that fails is logged, not thrown: the cancellation is on its way.
 */
export function wakeStatusLoop(
  ctx: ActivityContext,
): (input: { operationId: string }) => Promise<{ loopsWoken: number }> {
  return async ({ operationId }) => {
    const loopsWoken = wakeStatusLoops(operationId, 'message');
    try {
      await publishMessageWake(ctx.store, operationId);
    } catch (err) {
      ctx.logger.warn('loop wake not published to other workers; their loop ends at its next heartbeat', {
        operationId,
        error: String(err),
      });
    }
    return { loopsWoken };
  };
}
