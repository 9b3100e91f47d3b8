/**
 * Requests held by a `delay` fault: each waits on a timer that `releaseAll` can fire early, so stopping the
 * simulator never waits out a long delay.
 */

/** The timers of requests held by a `delay` fault. */
export class HeldDelays {
  private readonly held = new Map<NodeJS.Timeout, () => void>();

  /** Resolves after `ms`, or at once when {@link releaseAll} runs first. */
  hold(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.held.delete(timer);
        resolve();
      }, ms);
      this.held.set(timer, resolve);
    });
  }

  /** How many requests are held now (received, not yet answered). */
  get size(): number {
    return this.held.size;
  }

  /** Releases every held request now (used on stop; their sockets are destroyed right after). Safe to repeat. */
  releaseAll(): void {
    for (const [timer, release] of this.held) {
      clearTimeout(timer);
      release();
    }
    this.held.clear();
  }
}
