/**
 * A whole asyncjob worker process configured from the environment (`runWorker`), for fault tests that kill,
 * restart or run two of them. Prints `worker-ready` on stdout once the workers are created and polling.
 */
import { runWorker } from '../../../src/worker';

runWorker().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`worker-entry: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
