/**
 * A client call retried while the cluster is briefly away (the Temporal server restarting, a worker not yet
 * polling): what a service calling asyncjob does with these typed errors. Every other error is thrown.
 */
import {
  AsyncJobConnectionError,
  AsyncJobQueryTimeout,
  AsyncJobServerError,
  AsyncJobUpdateTimeout,
  ProviderUnservedError,
} from '../../src/client';

/** How many calls were retried, by error name. */
export class RetryCount {
  count = 0;
  readonly byError: Record<string, number> = {};
  add(name: string): void {
    this.count++;
    this.byError[name] = (this.byError[name] ?? 0) + 1;
  }
}

const TRANSIENT = [
  AsyncJobConnectionError,
  AsyncJobServerError,
  AsyncJobQueryTimeout,
  AsyncJobUpdateTimeout,
  ProviderUnservedError,
];

/** Calls `call` until it answers, retrying transient errors for up to `forMs` (default 5 minutes). */
export async function retryingTransient<T>(call: () => Promise<T>, retries: RetryCount, forMs = 300_000): Promise<T> {
  const deadline = Date.now() + forMs;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!TRANSIENT.some((type) => error instanceof type) || Date.now() > deadline) throw error;
      retries.add((error as Error).name);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}
