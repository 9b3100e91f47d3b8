/** How many operations figure 3 makes wait, how many of them wake, and for how long each level is watched. */

/** One run's scale. */
export interface WaitingScale {
  /** The two waiting counts compared (the second is the target's). */
  levels: readonly [number, number];
  /**
   * Operations of each level whose poll policy wakes them every `wakerDelayMs` (bounded jitter: every 50-100% of
   * it): more than the worker's workflow cache holds, so each wake replays an evicted workflow. The same number
   * wakes at both levels, so the two levels differ only in how many operations wait. A level's wakers start once
   * its sleepers wait (a fill of thousands is not slowed by wakes) and are terminated after its window.
   */
  wakers: number;
  wakerDelayMs: number;
  /** Each level is held (no starts) and sampled for this long. */
  windowSeconds: number;
  /** Starts stop after this long even when the second level is not reached (the figure then names what was). */
  fillBudgetSeconds: number;
  /** The worker RSS the second level must stay under, MiB. */
  targetRssMiB: number;
  /** The settled growth from the first level to the second that the scale's target allows, when it has one. */
  targetGrowthRatio?: number;
}

/** Which scale a run measures: `full` and `quick` with the other figures, `large` alone (`--waiting large`). */
export type WaitingScaleName = 'full' | 'quick' | 'large';

export const WAITING_SCALES: Record<WaitingScaleName, WaitingScale> = {
  full: {
    levels: [2_000, 20_000],
    wakers: 300,
    wakerDelayMs: 90_000,
    windowSeconds: 240,
    fillBudgetSeconds: 5_400,
    targetRssMiB: 1_024,
    targetGrowthRatio: 1.15,
  },
  quick: {
    levels: [400, 1_600],
    wakers: 160,
    wakerDelayMs: 60_000,
    windowSeconds: 30,
    fillBudgetSeconds: 600,
    targetRssMiB: 1_024,
    targetGrowthRatio: 1.15,
  },
  /**
   * 100,000 waiting on one worker. Starting them is the bound: at 14-17 starts a second on the bench's two cores
   * the fill takes close to two hours, so this scale runs on its own, and a fill the budget stops short is held
   * and named as the largest size reached.
   */
  large: {
    levels: [20_000, 100_000],
    wakers: 300,
    wakerDelayMs: 90_000,
    windowSeconds: 240,
    fillBudgetSeconds: 7_200,
    targetRssMiB: 2_048,
  },
};

/** Every other operation's next poll is this far away (bounded jitter: 3-6 hours): it never wakes in the run. */
export const SLEEPER_DELAY_MS = 6 * 3_600_000;

/** Starts are paced so at most this many are ahead of those already waiting. */
export const START_WINDOW = 500;

/**
 * A level's settled RSS is the median of the samples from this fraction of its window on. The worker's RSS is a
 * sawtooth while wakers replay (it climbs 150-300 MiB, then a full collection drops it, every 60-80 s): the median
 * of a 60 s half-window fell wherever that half met the sawtooth (725 and 872 MiB at one level in two runs of one
 * product code); three quarters of a 240 s window span two cycles or more.
 */
export const SETTLED_FROM = 0.25;

/** Worker RSS is sampled this often while a level is held, ms. */
export const SAMPLE_EVERY_MS = 2_000;
