/**
 * How an activity heartbeats while it waits on something outside (F2, B2): often enough to beat the heartbeat
 * timeout, never more than that needs, since each beat the worker sends is a write at the server.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { beatEveryMs, whileHeartbeating } from '../../src/activities/heartbeat';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('whileHeartbeating', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function beatsOf(activity: () => Promise<void>, runMs: number, heartbeatTimeoutMs?: number): Promise<number> {
    const env = new MockActivityEnvironment(heartbeatTimeoutMs === undefined ? {} : { heartbeatTimeoutMs });
    let beats = 0;
    env.on('heartbeat', () => void (beats += 1));
    const run = env.run(activity);
    await vi.advanceTimersByTimeAsync(runMs);
    await run;
    return beats;
  }

  it('P4, F2: a beat keeps 20 s before the heartbeat timeout, or a third of it, whichever is more', () => {
    expect(beatEveryMs(30_000)).toBe(10_000);
    expect(beatEveryMs(31_000)).toBe(11_000);
    expect(beatEveryMs(60_000)).toBe(40_000);
    expect(beatEveryMs(9_000)).toBe(3_000);
    expect(beatEveryMs(undefined)).toBe(2_000);
    // Over any timeout, a beat on time leaves 20 s before it (two thirds of it, when shorter), and beats are at
    // least a third of it apart.
    for (let timeoutMs = 1_000; timeoutMs <= 10 * 60_000; timeoutMs += 1_000) {
      const everyMs = beatEveryMs(timeoutMs);
      expect(timeoutMs - everyMs).toBeGreaterThanOrEqual(Math.min(timeoutMs * (2 / 3), 20_000) - 1e-9);
      expect(everyMs).toBeGreaterThanOrEqual(timeoutMs / 3);
    }
  });

  it('P4, F2: an activity with a heartbeat timeout sends none before its cadence, then one per cadence', async () => {
    // A provider call (30 s): a call of 9 s sends nothing, one of 35 s beats at 10, 20 and 30 s.
    expect(await beatsOf(() => whileHeartbeating(() => sleep(9_000)), 10_000, 30_000)).toBe(0);
    expect(await beatsOf(() => whileHeartbeating(() => sleep(35_000)), 36_000, 30_000)).toBe(3);
    // A status loop at a slow policy (60 s): 20 waits of 3 s beat once, at 40 s.
    const loop = async () => {
      for (let i = 0; i < 20; i++) await whileHeartbeating(() => sleep(3_000));
    };
    expect(await beatsOf(loop, 61_000, 60_000)).toBe(1);
  });

  it('F2: without a heartbeat timeout, a call that ends within the interval sends no heartbeat; a longer one beats every 2 s', async () => {
    expect(await beatsOf(() => whileHeartbeating(() => sleep(1_500)), 2_000)).toBe(0);
    expect(await beatsOf(() => whileHeartbeating(() => sleep(9_000)), 10_000)).toBe(4);
  });

  it('F2: an activity that waits many short times (a status loop at a 1 s policy) beats over all of them, not once per wait', async () => {
    const loop = async () => {
      for (let i = 0; i < 20; i++) await whileHeartbeating(() => sleep(1_500));
    };
    // 30 s of waits of 1.5 s each: never silent for longer than two intervals, so far inside the 30 s timeout.
    const beats = await beatsOf(loop, 31_000);
    expect(beats).toBeGreaterThanOrEqual(7);
    expect(beats).toBeLessThanOrEqual(15);
  });

  it("P8: a beat during a call without details of its own (a provider call in flight) carries the activity's latest details", async () => {
    const env = new MockActivityEnvironment();
    const sent: unknown[] = [];
    env.on('heartbeat', (details: unknown) => void sent.push(details));
    let progress = 0.4;
    const run = env.run(async () => {
      await whileHeartbeating(() => sleep(2_500), { details: () => ({ progress }) });
      progress = 0.6;
      await whileHeartbeating(() => sleep(2_500));
    });
    await vi.advanceTimersByTimeAsync(6_000);
    await run;
    expect(sent).toEqual([{ progress: 0.4 }, { progress: 0.6 }]);
  });
});
