/** How much figure 6 stores before it times, how many steps it times, and how. */

/** What a run stores first and how many steps it times. */
export interface Scale {
  journalEntries: number;
  timedSteps: number;
  warmUpSteps: number;
}

export const SCALES: Record<'full' | 'quick', Scale> = {
  full: { journalEntries: 1_000_000, timedSteps: 2_000, warmUpSteps: 200 },
  quick: { journalEntries: 100_000, timedSteps: 500, warmUpSteps: 50 },
};

/** The target for SQLite: one step's store writes at 1,000,000 entries. */
export const TARGET_P99_MS = 2;

export const ENTRIES_PER_OPERATION = 100;

/** Operations written side by side in the concurrent run (16 activities at once). */
export const LANES = 16;

/** Status reads each timed operation makes, round robin with the others of its run. */
export const STEPS_PER_OPERATION = 4;
