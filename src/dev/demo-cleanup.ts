/**
 * What one run of `asyncjob dev` leaves behind: nothing. The operations it started are remembered, and any still
 * running when the run ends (interrupted, or an error) is terminated and said so, so the next run, which shares
 * the dev server's database, never meets a workflow polling a simulator that has gone.
 */
import type { Client } from '@temporalio/client';

/** How long the whole clean-up may take before it gives up, in ms (the server may be stopping too). */
const CLEANUP_LIMIT_MS = 20_000;

/** The reason recorded on a terminated demo operation's workflow. */
const DEMO_TERMINATE_REASON = 'asyncjob dev stopped before this operation ended';

async function endOne(temporal: Client, operationId: string, log: (line: string) => void): Promise<void> {
  const handle = temporal.workflow.getHandle(operationId);
  try {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') return;
    await handle.terminate(DEMO_TERMINATE_REASON);
    log(`operation ${operationId} was still running when the demo stopped: terminated`);
  } catch (err) {
    // Never started (its start failed before reaching the server): nothing to end.
    if ((err as Error).name === 'WorkflowNotFoundError') return;
    log(
      `operation ${operationId}: not checked or terminated at exit (${(err as Error).message.split('\n')[0]}); ` +
        `asyncjob status ${operationId} shows it on the next run`,
    );
  }
}

/**
 * Terminates each of `operationIds` whose workflow is still running, logging one line per operation it ended
 * (or could not check). Never throws; gives up after {@link CLEANUP_LIMIT_MS}. Safe to repeat.
 */
export async function endRunningOperations(
  temporal: Client,
  operationIds: readonly string[],
  log: (line: string) => void,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      log(`the demo's clean-up stopped after ${CLEANUP_LIMIT_MS / 1000} s (the dev server did not answer)`);
      resolve();
    }, CLEANUP_LIMIT_MS);
  });
  try {
    await Promise.race([Promise.all(operationIds.map((id) => endOne(temporal, id, log))), limit]);
  } finally {
    clearTimeout(timer);
  }
}
