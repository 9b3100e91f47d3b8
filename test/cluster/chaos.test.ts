/**
 * The cluster run's chaos: which worker exits it excuses. A worker that cannot reach Temporal (exit 5) is expected
 * only while the server is down for the restart the chaos made, or just after it answers again.
 */
import { describe, expect, it, vi } from 'vitest';
import { Chaos, PARTITIONED_SLOT } from '../../scripts/cluster/chaos';
import type { WorkerFleet } from '../../scripts/cluster/fleet';

describe('cluster chaos: the server restart window', () => {
  it('F5: an exit 5 counts as expected only between the restart and 5 s after the server answered again', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    try {
      const chaos = new Chaos({} as WorkerFleet, () => 0, 1_000, {
        restartServer: async () => undefined,
        restartPostgres: async () => undefined,
      });
      chaos.events.push({ atMs: 10_000, what: 'restart the Temporal server', tookMs: 4_000 });
      const at = (sinceStartMs: number) => chaos.serverWasRestarting(1_000_000 + sinceStartMs);
      expect(at(9_999)).toBe(false);
      expect(at(10_000)).toBe(true);
      expect(at(14_000)).toBe(true);
      expect(at(19_000)).toBe(true);
      expect(at(19_001)).toBe(false);
      chaos.events.splice(0, 1, { atMs: 10_000, what: 'restart PostgreSQL', tookMs: 4_000 });
      expect(at(12_000)).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('cluster chaos: the partition', () => {
  const fleet = (killed: number[]) =>
    ({
      size: 3,
      readyCount: () => 3,
      killOldest: (spare: ReadonlySet<number>) => {
        killed.push(spare.has(PARTITIONED_SLOT) ? -1 : 1);
        return true;
      },
    }) as unknown as WorkerFleet;

  it('F5: cuts a worker off once the run is 45% done, spares it from SIGKILL while cut off, and excuses its exits then', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const killed: number[] = [];
    let done = 0;
    let release!: () => void;
    const partition = vi.fn(() => new Promise<void>((resolve) => (release = resolve)));
    try {
      const chaos = new Chaos(fleet(killed), () => done, 1_000, {
        restartServer: async () => undefined,
        restartPostgres: async () => undefined,
        partition,
      });
      expect(chaos.missed()).toContain('no worker was ever partitioned');
      chaos.start();
      done = 0.2;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(partition).not.toHaveBeenCalled();
      done = 0.45;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(partition).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(1_000);
      // The kill of the tick that cut it off did not know yet; every kill while it is cut off spares it.
      expect(killed.at(-1)).toBe(-1);
      await vi.advanceTimersByTimeAsync(29_000);
      release();
      await vi.advanceTimersByTimeAsync(1_000);
      expect(killed.at(-1)).toBe(1);
      await chaos.stop();
      expect(partition).toHaveBeenCalledTimes(1);
      expect(chaos.missed()).not.toContain('no worker was ever partitioned');
      const cut = chaos.events.find((e) => e.what === 'partition a worker')!;
      const at = (sinceStartMs: number) => 1_000_000 + sinceStartMs;
      expect(chaos.wasPartitioned(PARTITIONED_SLOT, at(cut.atMs + 10_000))).toBe(true);
      expect(chaos.wasPartitioned(PARTITIONED_SLOT + 1, at(cut.atMs + 10_000))).toBe(false);
      expect(chaos.wasPartitioned(PARTITIONED_SLOT, at(cut.atMs - 1))).toBe(false);
      expect(chaos.wasPartitioned(PARTITIONED_SLOT, at(cut.atMs + cut.tookMs! + 60_001))).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('cluster chaos: an action that fails', () => {
  it('F5: a refused server restart rejects the run at once, with the reason, and stays among what the run missed', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    try {
      let done = 0;
      const fleet = { size: 3, readyCount: () => 2, killOldest: () => false } as unknown as WorkerFleet;
      const chaos = new Chaos(fleet, () => done, 1_000, {
        restartServer: () => Promise.reject(new Error('scripts/cluster.sh restart-server exited 1')),
        restartPostgres: async () => undefined,
      });
      const raced = Promise.race([new Promise(() => undefined), chaos.failure]);
      const seen = raced.then(
        () => 'resolved',
        (error: Error) => error.message,
      );
      chaos.start();
      done = 0.3;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(await seen).toBe('restart the Temporal server failed: scripts/cluster.sh restart-server exited 1');
      // Stopping (the run's teardown) does not throw, and the report still names the failure.
      await chaos.stop();
      expect(chaos.missed()).toContain(
        'restart the Temporal server failed: scripts/cluster.sh restart-server exited 1',
      );
    } finally {
      vi.useRealTimers();
    }
  });
});
