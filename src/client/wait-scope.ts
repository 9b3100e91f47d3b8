/**
 * The bounds of one wait (`result`, `watch`): the caller's AbortSignal and time limit as one signal, and the
 * one place that turns an aborted call into {@link AsyncJobAborted} or {@link AsyncJobWaitTimeout}, and any
 * other failure into a typed error.
 */
import { addressOf, type ClientContext } from './context';
import { AsyncJobAborted, AsyncJobWaitTimeout } from './errors';
import { translateError } from './translate';

/**
 * Runs `fn` with a fresh signal that follows `parent`, and stops following it when `fn` settles. The SDK adds an
 * abort listener per call to the signal it is given and never removes it, so a long wait must never hand it the
 * same signal twice.
 */
export async function withLinkedSignal<T>(parent: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const child = new AbortController();
  const follow = (): void => child.abort(parent.reason);
  if (parent.aborted) child.abort(parent.reason);
  else parent.addEventListener('abort', follow, { once: true });
  try {
    return await fn(child.signal);
  } finally {
    parent.removeEventListener('abort', follow);
  }
}

/** How long to wait and when to stop. */
export interface WaitOptions {
  /** Stops the wait with {@link AsyncJobAborted} (`name` `AbortError`); the operation goes on. */
  signal?: AbortSignal;
  /** Gives up after this many milliseconds with {@link AsyncJobWaitTimeout}; the operation goes on. */
  timeoutMs?: number;
  /**
   * Waits through escalations until a final state (succeeded, failed, cancelled, closed). By default a wait
   * returns as soon as the operation escalates: that is when a caller has something to do (decide).
   */
  untilFinal?: boolean;
}

/** One wait's signal, and how its calls fail. */
export class WaitScope {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private readonly onAbort = (): void => this.controller.abort(this.options.signal?.reason);

  constructor(
    private readonly ctx: ClientContext,
    readonly operationId: string,
    private readonly options: WaitOptions,
  ) {
    if (options.timeoutMs !== undefined) {
      this.timer = setTimeout(() => {
        this.timedOut = true;
        this.controller.abort(new Error('timeout'));
      }, options.timeoutMs);
    }
    if (options.signal?.aborted) this.controller.abort(options.signal.reason);
    else options.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Aborted when the caller aborts or the time is up. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The error that ends the wait now that its signal is aborted. */
  stopped(): AsyncJobAborted | AsyncJobWaitTimeout {
    return this.timedOut
      ? new AsyncJobWaitTimeout(this.operationId, this.options.timeoutMs ?? 0)
      : new AsyncJobAborted(this.operationId, { cause: this.options.signal?.reason });
  }

  /** Throws the wait's own error if it is over. */
  throwIfStopped(): void {
    if (this.signal.aborted) throw this.stopped();
  }

  /**
   * Runs one call within the wait: aborted with it (or with `signal`, one that follows the wait's); any failure
   * comes back typed.
   */
  async run<T>(fn: () => Promise<T>, signal: AbortSignal = this.signal): Promise<T> {
    this.throwIfStopped();
    try {
      return await withLinkedSignal(signal, (linked) => this.ctx.client.withAbortSignal(linked, fn));
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** The error a failed call ends the wait with: the wait's own when it is over, else the call's, typed. */
  failure(err: unknown): unknown {
    if (this.signal.aborted) return this.stopped();
    return translateError(err, { operationId: this.operationId, address: addressOf(this.ctx), kind: 'call' });
  }

  /** Ends the wait's timer and listener. */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.options.signal?.removeEventListener('abort', this.onAbort);
  }
}
