/** The per-process request pacer: a sliding window, first come first served, heartbeats and cancellation. */
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  assertRequestRate,
  nextAdmissionAt,
  PACE_GUARD_MS,
  paceOf,
  pacingInterceptor,
  RequestPacer,
} from '../../src/activities/request-pacer';
import { createWorkers } from '../../src/worker';
// Counted exactly as the benchmark counts them.
import { maxInWindow } from '../../bench/lib/stats';

/** Starts `count` acquisitions now; returns the admission times (fake clock) in admission order, by index. */
function acquireMany(
  pacer: RequestPacer,
  count: number,
  admitted: { index: number; atMs: number }[],
  offset = 0,
): Promise<void>[] {
  return Array.from({ length: count }, (_, i) =>
    pacer.acquire().then(() => void admitted.push({ index: offset + i, atMs: Date.now() })),
  );
}

describe('paceOf', () => {
  it.each([
    [20, 20, 1000],
    [5, 5, 1000],
    [1, 1, 1000],
    [0.5, 1, 2000],
    [2.5, 2, 800],
    [0.1, 1, 10_000],
  ])('%s requests/s is %s per %s ms plus the guard, evenly spaced', (rate, capacity, baseWindowMs) => {
    const windowMs = baseWindowMs + PACE_GUARD_MS;
    expect(paceOf(rate)).toEqual({ capacity, windowMs, intervalMs: windowMs / capacity });
  });

  it('keeps the guard a few tens of ms: above the measured spread, a small share of a 1 s window', () => {
    expect(PACE_GUARD_MS).toBeGreaterThanOrEqual(20);
    expect(PACE_GUARD_MS).toBeLessThanOrEqual(50);
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number])(
    'refuses a rate of %s with a clear error',
    (rate) => {
      expect(() => paceOf(rate)).toThrow(/must be a positive finite number of requests per second/);
      expect(() => assertRequestRate(rate, 'ASYNCJOB_PROVIDER_RATE_LIMIT')).toThrow(
        /^ASYNCJOB_PROVIDER_RATE_LIMIT must be/,
      );
    },
  );
});

describe('createWorkers', () => {
  it('refuses a provider queue whose maxRequestsPerSecond is not a positive finite number, naming the queue, before creating any worker', async () => {
    const options = {
      connection: {} as never,
      activities: {} as never,
      providerQueues: [{ taskQueue: 'asyncjob-provider-acme', maxRequestsPerSecond: -5 }],
    };
    await expect(createWorkers(options)).rejects.toThrow(
      'maxRequestsPerSecond of provider queue asyncjob-provider-acme must be a positive finite number of requests per second, got -5',
    );
  });
});

describe('nextAdmissionAt', () => {
  const pace = { capacity: 4, windowMs: 1000, intervalMs: 250 };
  it.each([
    [undefined, 500, 500],
    [100, 200, 350],
    [100, 350, 350],
    [100, 5000, 5000],
  ])('after an admission at %s, at %s: %s', (last, now, at) => {
    expect(nextAdmissionAt(last, pace, now)).toBe(at);
  });
});

describe('RequestPacer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const fakeClock = { clock: () => Date.now() };

  it('20/s: 45 requests at once go one every window/20, never more than 20 in any window or second', async () => {
    const pacer = new RequestPacer(20, fakeClock);
    const { windowMs, intervalMs } = pacer.pace;
    const admitted: { index: number; atMs: number }[] = [];
    const all = acquireMany(pacer, 45, admitted);
    await vi.advanceTimersByTimeAsync(0);
    expect(admitted).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(windowMs);
    expect(admitted.length).toBeGreaterThanOrEqual(19);
    expect(admitted.length).toBeLessThanOrEqual(20);
    await vi.runAllTimersAsync();
    await Promise.all(all);
    expect(admitted).toHaveLength(45);
    // Timers fire on whole milliseconds: the last goes no later than 44 intervals rounded up.
    expect(admitted.at(-1)!.atMs).toBeLessThanOrEqual(44 * Math.ceil(intervalMs));
    const times = admitted.map((a) => a.atMs);
    expect(maxInWindow(times, windowMs)).toBe(20);
    expect(maxInWindow(times, 1000)).toBeLessThanOrEqual(20);
    expect(times.slice(1).every((t, i) => t - times[i]! >= intervalMs)).toBe(true);
  });

  it('20/s: requests arriving at random times never exceed 20 in any sliding window', async () => {
    const pacer = new RequestPacer(20, fakeClock);
    const admitted: { index: number; atMs: number }[] = [];
    const all: Promise<void>[] = [];
    let seed = 42;
    const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 400; i++) {
      all.push(...acquireMany(pacer, Math.floor(random() * 3), admitted, all.length));
      await vi.advanceTimersByTimeAsync(Math.floor(random() * 60));
    }
    await vi.runAllTimersAsync();
    await Promise.all(all);
    expect(admitted).toHaveLength(all.length);
    expect(
      maxInWindow(
        admitted.map((a) => a.atMs),
        1000,
      ),
    ).toBeLessThanOrEqual(20);
    expect(
      maxInWindow(
        admitted.map((a) => a.atMs),
        pacer.pace.windowMs,
      ),
    ).toBe(20);
  });

  it.each([
    [0.5, 1],
    [2.5, 2],
  ])('%s/s: %s per window, evenly spaced', async (rate, capacity) => {
    const pacer = new RequestPacer(rate, fakeClock);
    const { windowMs, intervalMs } = pacer.pace;
    expect(pacer.pace.capacity).toBe(capacity);
    const admitted: { index: number; atMs: number }[] = [];
    const all = acquireMany(pacer, capacity * 3, admitted);
    await vi.runAllTimersAsync();
    await Promise.all(all);
    const times = admitted.map((a) => a.atMs);
    expect(times[0]).toBe(0);
    times.slice(1).forEach((t, i) => expect(t - times[i]!).toBeGreaterThanOrEqual(intervalMs));
    times.slice(1).forEach((t, i) => expect(t - times[i]!).toBeLessThan(intervalMs + 1));
    expect(maxInWindow(times, windowMs)).toBe(capacity);
  });

  it('serves waiters first come, first served, a late one never ahead of an earlier one', async () => {
    const pacer = new RequestPacer(2, fakeClock);
    const admitted: { index: number; atMs: number }[] = [];
    const all = acquireMany(pacer, 5, admitted);
    await vi.advanceTimersByTimeAsync(300);
    all.push(...acquireMany(pacer, 3, admitted, 5));
    expect(pacer.waiting).toBe(7);
    await vi.runAllTimersAsync();
    await Promise.all(all);
    expect(admitted.map((a) => a.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('a cancelled waiter rejects with the reason, takes no slot, and the next waiter takes its turn', async () => {
    const pacer = new RequestPacer(1, fakeClock);
    const { windowMs } = pacer.pace;
    await pacer.acquire();
    const controller = new AbortController();
    const cancelled = pacer.acquire(controller.signal);
    const admitted: { index: number; atMs: number }[] = [];
    const next = acquireMany(pacer, 1, admitted);
    await vi.advanceTimersByTimeAsync(100);
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(cancelled).rejects.toBe(reason);
    expect(pacer.waiting).toBe(1);
    await vi.advanceTimersByTimeAsync(windowMs);
    await Promise.all(next);
    expect(admitted).toEqual([{ index: 0, atMs: Math.ceil(windowMs) }]);
  });

  it('refuses at once, taking no slot, when the signal is already aborted', async () => {
    const pacer = new RequestPacer(1, fakeClock);
    await expect(pacer.acquire(AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    await expect(pacer.acquire()).resolves.toBeUndefined();
  });
});

describe('pacingInterceptor', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs the activity only once a slot is free, heartbeating every 2 s while it waits', async () => {
    const pacer = new RequestPacer(0.1, { clock: () => Date.now() });
    await pacer.acquire();
    const env = new MockActivityEnvironment({}, { interceptors: [pacingInterceptor(pacer)] });
    const heartbeats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => heartbeats.push(d));
    let ranAtMs: number | undefined;
    const run = env.run(async () => {
      ranAtMs = Date.now();
      return 'sent';
    });
    await vi.advanceTimersByTimeAsync(9_000);
    expect(ranAtMs).toBeUndefined();
    expect(heartbeats.length).toBe(4);
    await vi.advanceTimersByTimeAsync(pacer.pace.windowMs);
    await expect(run).resolves.toBe('sent');
    expect(ranAtMs).toBe(Math.ceil(pacer.pace.windowMs));
  });

  it('stops waiting and throws CancelledFailure when the activity is cancelled; the activity never runs', async () => {
    const pacer = new RequestPacer(0.1, { clock: () => Date.now() });
    await pacer.acquire();
    const env = new MockActivityEnvironment({}, { interceptors: [pacingInterceptor(pacer)] });
    const activity = vi.fn(async () => 'sent');
    const run = env.run(activity);
    await vi.advanceTimersByTimeAsync(3_000);
    env.cancel();
    await expect(run).rejects.toBeInstanceOf(CancelledFailure);
    expect(activity).not.toHaveBeenCalled();
    expect(pacer.waiting).toBe(0);
  });
});
