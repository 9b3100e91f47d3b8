/**
 * Waking a status loop in its own process (`loop-wake.ts`, P4): a message that comes while no loop of its operation
 * listens yet (the loop's activity task on its way to this worker) still reaches the loop it was meant for, and never
 * one scheduled after it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { onStatusLoopWake, wakeStatusLoops, type LoopWake } from '../../src/activities/loop-wake';

describe('message wakes that come before the loop listens', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function listen(operationId: string, scheduledAtMs?: number) {
    const wakes: LoopWake[] = [];
    const stop = onStatusLoopWake(operationId, (wake) => void wakes.push(wake), scheduledAtMs);
    return { wakes, stop };
  }

  it('P4: a loop scheduled before an unheard message takes it when it begins listening, once', () => {
    const scheduledAtMs = Date.now();
    vi.advanceTimersByTime(5);
    expect(wakeStatusLoops('op-early-1', 'message')).toBe(0);
    vi.advanceTimersByTime(5);
    const first = listen('op-early-1', scheduledAtMs);
    expect(first.wakes).toEqual(['message']);
    first.stop();
    // Taken once: the loop the workflow schedules next is not sent back by the same message.
    const next = listen('op-early-1', scheduledAtMs);
    expect(next.wakes).toEqual([]);
    next.stop();
  });

  it('P4: a loop scheduled after the message, or one a minute later, is not sent back; a webhook is never kept', () => {
    expect(wakeStatusLoops('op-early-2', 'message')).toBe(0);
    vi.advanceTimersByTime(10);
    const later = listen('op-early-2', Date.now());
    expect(later.wakes).toEqual([]);
    later.stop();

    const scheduledAtMs = Date.now();
    expect(wakeStatusLoops('op-early-3', 'message')).toBe(0);
    vi.advanceTimersByTime(60_000);
    const stale = listen('op-early-3', scheduledAtMs);
    expect(stale.wakes).toEqual([]);
    stale.stop();

    expect(wakeStatusLoops('op-early-4', 'webhook')).toBe(0);
    const afterWebhook = listen('op-early-4', scheduledAtMs);
    expect(afterWebhook.wakes).toEqual([]);
    afterWebhook.stop();
  });

  it('P4: a loop listening is woken directly, and the wake is not kept for another', () => {
    const scheduledAtMs = Date.now();
    const running = listen('op-early-5', scheduledAtMs);
    expect(wakeStatusLoops('op-early-5', 'message')).toBe(1);
    expect(running.wakes).toEqual(['message']);
    running.stop();
    const next = listen('op-early-5', scheduledAtMs);
    expect(next.wakes).toEqual([]);
    next.stop();
  });
});
