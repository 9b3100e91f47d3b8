/**
 * The per-process request pacer: sends spaced by the instant each request was written, first come first served,
 * heartbeats and cancellation; and, against a real server under CPU load, the spacing of the send instants our
 * HTTP client records at write time.
 */
import { once } from 'node:events';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
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
  withRequestSlot,
} from '../../src/activities/request-pacer';
import { createWorkers } from '../../src/worker';
import {
  REQUEST_WRITTEN_CHANNEL,
  createHttpClient,
  type HttpExchange,
  type RequestWrittenMessage,
} from '../../src/adapters/http';
// Counted exactly as the benchmark counts them.
import { maxInWindow } from '../../bench/lib/stats';

/**
 * Starts `count` acquisitions now, each writing its request at the instant it is admitted; records the admission
 * times (fake clock) in admission order, by index.
 */
function acquireMany(
  pacer: RequestPacer,
  count: number,
  admitted: { index: number; atMs: number }[],
  offset = 0,
): Promise<void>[] {
  return Array.from({ length: count }, (_, i) =>
    pacer.acquire().then((slot) => {
      admitted.push({ index: offset + i, atMs: Date.now() });
      slot.written(Date.now());
    }),
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
  ])('after a request written at %s, at %s: %s', (last, now, at) => {
    expect(nextAdmissionAt(last, pace, now)).toBe(at);
  });
});

describe('RequestPacer: a sliding window of send instants', () => {
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
});

describe('RequestPacer: first come, first served, and cancellation', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const fakeClock = { clock: () => Date.now() };

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
    (await pacer.acquire()).written(Date.now());
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
    await expect(pacer.acquire()).resolves.toMatchObject({ written: expect.any(Function) });
  });
});

describe('RequestPacer: spaced by the instant each request was written', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const fakeClock = { clock: () => Date.now() };

  it('spaces requests by the instant each was WRITTEN: the next is admitted one interval after the last write, not the last admission', async () => {
    const pacer = new RequestPacer(5, fakeClock);
    const { intervalMs } = pacer.pace;
    const first = await pacer.acquire();
    const admittedAtMs: number[] = [];
    const next = pacer.acquire().then((slot) => {
      admittedAtMs.push(Date.now());
      return slot;
    });
    // The first request's own work before the send (a store read, a connection) takes 150 ms.
    await vi.advanceTimersByTimeAsync(150);
    expect(admittedAtMs).toEqual([]);
    first.written(Date.now());
    await vi.advanceTimersByTimeAsync(intervalMs - 1);
    expect(admittedAtMs).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(admittedAtMs).toEqual([Math.ceil(150 + intervalMs)]);
    (await next).written(Date.now());
  });

  it('admits no one while an admitted request is neither written nor given back; a slot given back unsent lets the next go at once', async () => {
    const pacer = new RequestPacer(5, fakeClock);
    const { intervalMs } = pacer.pace;
    (await pacer.acquire()).written(Date.now());
    await vi.advanceTimersByTimeAsync(intervalMs * 3);
    const unsent = await pacer.acquire();
    const admitted: { index: number; atMs: number }[] = [];
    const next = acquireMany(pacer, 1, admitted);
    await vi.advanceTimersByTimeAsync(intervalMs * 10);
    expect(admitted).toEqual([]);
    unsent.release();
    unsent.release();
    await vi.advanceTimersByTimeAsync(0);
    await Promise.all(next);
    expect(admitted).toEqual([{ index: 0, atMs: Math.ceil(intervalMs * 13) }]);
  });

  it('a request written twice (a resend) moves the next slot after the later write; giving a written slot back changes nothing', async () => {
    const pacer = new RequestPacer(5, fakeClock);
    const { intervalMs } = pacer.pace;
    const slot = await pacer.acquire();
    slot.written(0);
    slot.written(100);
    slot.release();
    const admitted: { index: number; atMs: number }[] = [];
    const next = acquireMany(pacer, 1, admitted);
    await vi.runAllTimersAsync();
    await Promise.all(next);
    expect(admitted).toEqual([{ index: 0, atMs: Math.ceil(100 + intervalMs) }]);
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
    (await pacer.acquire()).written(Date.now());
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

  it('the status loop starts at once and holds no slot while it waits; each read takes its own when it is sent', async () => {
    const pacer = new RequestPacer(0.1, { clock: () => Date.now() });
    (await pacer.acquire()).written(Date.now());
    const env = new MockActivityEnvironment(
      { activityType: 'pollStatus' },
      { interceptors: [pacingInterceptor(pacer)] },
    );
    let startedAtMs: number | undefined;
    const sentAtMs: number[] = [];
    const run = env.run(async () => {
      startedAtMs = Date.now();
      // The wait its workflow handed it, then a read: the read, not the wait, waits for the pacer's turn.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await withRequestSlot(async (slot) => {
        sentAtMs.push(Date.now());
        slot.written(Date.now());
      });
      return 'handed back';
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(startedAtMs).toBe(0);
    // The read waits its turn in the pacer's queue; the loop took none while it waited.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(pacer.waiting).toBe(1);
    await vi.advanceTimersByTimeAsync(pacer.pace.windowMs);
    await expect(run).resolves.toBe('handed back');
    expect(sentAtMs).toEqual([Math.ceil(pacer.pace.windowMs)]);
  });

  it('stops waiting and throws CancelledFailure when the activity is cancelled; the activity never runs', async () => {
    const pacer = new RequestPacer(0.1, { clock: () => Date.now() });
    (await pacer.acquire()).written(Date.now());
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

describe('withRequestSlot', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('the first request of an activity goes in the slot taken before it ran; a further request (a page) waits for its own', async () => {
    const pacer = new RequestPacer(1, { clock: () => Date.now() });
    const env = new MockActivityEnvironment({}, { interceptors: [pacingInterceptor(pacer)] });
    const sentAtMs: number[] = [];
    const run = env.run(async () => {
      for (let page = 0; page < 2; page += 1) {
        await withRequestSlot(async (slot) => {
          sentAtMs.push(Date.now());
          slot.written(Date.now());
        });
      }
      return 'collected';
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(sentAtMs).toEqual([0]);
    await vi.advanceTimersByTimeAsync(pacer.pace.windowMs);
    await expect(run).resolves.toBe('collected');
    expect(sentAtMs).toEqual([0, Math.ceil(pacer.pace.windowMs)]);
  });

  it('an activity that sends nothing gives its slot back when it ends: the next one starts at once', async () => {
    const pacer = new RequestPacer(1, { clock: () => Date.now() });
    const quiet = new MockActivityEnvironment({}, { interceptors: [pacingInterceptor(pacer)] });
    await expect(quiet.run(async () => 'already recorded')).resolves.toBe('already recorded');
    const next = new MockActivityEnvironment({}, { interceptors: [pacingInterceptor(pacer)] });
    let ranAtMs: number | undefined;
    const run = next.run(async () => {
      ranAtMs = Date.now();
    });
    await vi.advanceTimersByTimeAsync(0);
    await run;
    expect(ranAtMs).toBe(0);
  });

  it('outside a paced activity it sends at once and its slot does nothing', async () => {
    await expect(withRequestSlot(async (slot) => (slot.written(0), slot.release(), 'sent'))).resolves.toBe('sent');
  });
});

describe('pacing against a real server under CPU load', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  /** A busy loop on another thread, so the event loop competes for the CPU as on a loaded CI machine. */
  async function cpuLoad(): Promise<void> {
    const busy = new Worker('for (;;) {}', { eval: true });
    cleanups.push(() => busy.terminate());
    await once(busy, 'online');
  }

  /** A server that records, per path, when it received each request (same process, same monotonic clock). */
  async function recordingServer(): Promise<{ origin: string; receivedAtMs: Map<string, number> }> {
    const receivedAtMs = new Map<string, number>();
    const server = createServer((req, res) => {
      receivedAtMs.set(req.url ?? '', performance.now());
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"state":"running"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, receivedAtMs };
  }

  it('the send instants our client records at write time are at least one interval apart, however late each activity writes', async () => {
    await cpuLoad();
    const server = await recordingServer();
    const http = createHttpClient({ allowedOrigin: server.origin, maxConnections: 4 });
    cleanups.push(() => http.close());
    const published: RequestWrittenMessage[] = [];
    const listener = (message: unknown): void => void published.push(message as RequestWrittenMessage);
    subscribe(REQUEST_WRITTEN_CHANNEL, listener);
    cleanups.push(async () => unsubscribe(REQUEST_WRITTEN_CHANNEL, listener));
    const pacer = new RequestPacer(20);
    const { intervalMs, windowMs, capacity } = pacer.pace;
    // The work each activity does between its admission and its send (a store read, building the request): some
    // longer than an interval, which let a later, quicker activity write right after it when slots were timed
    // from admission.
    const workBeforeSendMs = [80, 0, 0, 70, 0, 30, 0, 90, 0, 0, 10, 0, 60, 0, 0, 0];
    const writtenAtMs = new Map<string, number>();
    const runs = workBeforeSendMs.map(async (workMs, index) => {
      const env = new MockActivityEnvironment({}, { interceptors: [pacingInterceptor(pacer)] });
      return env.run(async () => {
        await new Promise((resolve) => setTimeout(resolve, workMs));
        return withRequestSlot((slot) =>
          http.send({
            method: 'GET',
            url: `/jobs/${index}`,
            traceId: 'pacing',
            onWritten: (atMs) => {
              writtenAtMs.set(`/jobs/${index}`, atMs);
              slot.written(atMs);
            },
          }),
        );
      });
    });
    const exchanges = (await Promise.all(runs)) as HttpExchange[];
    expect(exchanges.map((exchange) => exchange.outcome)).toEqual(workBeforeSendMs.map(() => 'response'));
    const sends = published.filter((message) => message.origin === server.origin).map((m) => m.writtenAtMs);
    expect(sends).toHaveLength(workBeforeSendMs.length);
    expect([...sends].sort((a, b) => a - b)).toEqual([...writtenAtMs.values()].sort((a, b) => a - b));
    // Spacing between recorded instants, not deadlines: it holds however slow the machine is.
    sends.slice(1).forEach((sentAtMs, i) => expect(sentAtMs - sends[i]!).toBeGreaterThanOrEqual(intervalMs));
    expect(maxInWindow(sends, windowMs)).toBeLessThanOrEqual(capacity);
    expect(maxInWindow(sends, 1_000)).toBeLessThanOrEqual(20);
    // Each instant is a write: after nothing was sent, before the server received the request.
    for (const [path, atMs] of writtenAtMs) expect(atMs).toBeLessThanOrEqual(server.receivedAtMs.get(path)!);
    expect(server.receivedAtMs.size).toBe(workBeforeSendMs.length);
  });
});
