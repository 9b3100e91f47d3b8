import { describe, expect, it } from 'vitest';
import { withLinkedSignal } from '../../src/client/wait-scope';

describe('withLinkedSignal', () => {
  it("aborts the call's own signal with its parent, and leaves no listener on the parent once the call settled", async () => {
    const parent = new AbortController();
    let added = 0;
    let removed = 0;
    const add = parent.signal.addEventListener.bind(parent.signal);
    const remove = parent.signal.removeEventListener.bind(parent.signal);
    parent.signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => (
      added++,
      add(...args)
    )) as AbortSignal['addEventListener'];
    parent.signal.removeEventListener = ((...args: Parameters<AbortSignal['removeEventListener']>) => (
      removed++,
      remove(...args)
    )) as AbortSignal['removeEventListener'];
    for (let i = 0; i < 50; i++)
      await withLinkedSignal(parent.signal, async (signal) => expect(signal.aborted).toBe(false));
    expect(added).toBe(50);
    expect(removed).toBe(50);

    const seen = withLinkedSignal(
      parent.signal,
      (signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason))),
    );
    parent.abort('stop');
    expect(await seen).toBe('stop');
  });

  it('gives an already aborted signal when the parent is aborted', async () => {
    expect(
      await withLinkedSignal(AbortSignal.abort('gone'), async (signal) => [signal.aborted, signal.reason]),
    ).toEqual([true, 'gone']);
  });
});
