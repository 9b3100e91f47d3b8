/**
 * A small seeded pseudo-random generator (mulberry32) so a scenario with a seed replays the same job IDs and
 * durations. Not for secrets.
 */

/** A seeded generator: `next()` is uniform in [0, 1); `hex(n)` gives n hex digits. */
export interface SeededRandom {
  next(): number;
  hex(digits: number): string;
  intBetween(min: number, max: number): number;
}

/** Creates a {@link SeededRandom} from a 32-bit integer seed. */
export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    hex(digits: number): string {
      let out = '';
      while (out.length < digits)
        out += Math.floor(next() * 0x10000)
          .toString(16)
          .padStart(4, '0');
      return out.slice(0, digits);
    },
    intBetween(min: number, max: number): number {
      return min + Math.floor(next() * (max - min + 1));
    },
  };
}
