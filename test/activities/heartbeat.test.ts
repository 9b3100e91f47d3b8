/**
 * How an activity heartbeats while it waits on something outside (F2, B2): often enough to beat the heartbeat
 * timeout, never more than that needs, since each beat the worker sends is a write at the server.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { whileHeartbeating } from '../../src/activities/heartbeat';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('whileHeartbeating', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function beatsOf(activity: () => Promise<void>, runMs: number): Promise<number> {
    const env = new MockActivityEnvironment();
    let beats = 0;
    env.on('heartbeat', () => void (beats += 1));
    const run = env.run(activity);
    await vi.advanceTimersByTimeAsync(runMs);
    await run;
    return beats;
  }

  it('F2: a call that ends within the interval sends no heartbeat; a longer one beats every 2 s', async () => {
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

  it("P8: a beat without details of its own (a provider call in flight) repeats the activity's last details", async () => {
    const env = new MockActivityEnvironment();
    const sent: unknown[] = [];
    env.on('heartbeat', (details: unknown) => void sent.push(details));
    const run = env.run(async () => {
      await whileHeartbeating(() => sleep(2_500), { details: () => ({ progress: 0.4 }) });
      await whileHeartbeating(() => sleep(2_500));
    });
    await vi.advanceTimersByTimeAsync(6_000);
    await run;
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(sent.every((details) => (details as { progress?: number })?.progress === 0.4)).toBe(true);
  });
});
