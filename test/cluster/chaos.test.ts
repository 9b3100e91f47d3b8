/**
 * The cluster run's chaos: which worker exits it excuses. A worker that cannot reach Temporal (exit 5) is expected
 * only while the server is down for the restart the chaos made, or just after it answers again.
 */
import { describe, expect, it, vi } from 'vitest';
import { Chaos } from '../../scripts/cluster/chaos';
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
