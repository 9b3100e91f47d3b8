/**
 * The demo provider's jobs, as the simulator plays them: chosen by the payload's `scenario`, one script per kind
 * of run `asyncjob dev` shows (a 503 with Retry-After, a cancel that loses the race, an escalation).
 */

/**
 * The demo provider's jobs, chosen by the payload's `scenario`: a report that meets a 503 with Retry-After, an
 * export whose cancel loses the race, and a review that stops in a state the contract does not know (so it
 * escalates `unknown_state` and waits for a human's decision; after an `extend`, the next read sees it done).
 */
export const DEMO_SCRIPTS: Readonly<Record<string, string>> = {
  report: 'queued, running, a 503 with Retry-After 2 s, then succeeded with 12 records (1 failed item)',
  export: 'running for 2.5 s, then succeeded; a cancel arriving meanwhile loses the race (X2)',
  review:
    'running for 2 s, then "manual_review", a state the contract does not know: escalates unknown_state; after "decide --option extend" the next read sees it succeeded',
};

/** The simulator scenario behind {@link DEMO_SCRIPTS}, one script per name. */
export const DEMO_SCENARIO = {
  scripts: {
    report: {
      steps: [
        { state: 'queued', durationMs: 1_000, progress: 0 },
        { state: 'running', durationMs: 1_500, progress: 25 },
        { state: 'running', durationMs: 1_500, progress: 70 },
        { state: 'succeeded', progress: 100 },
      ],
      result: { kind: 'batch', items: 12, failedItems: [7] },
      faults: [{ on: 'status', nth: 2, fault: { kind: 'http_error', status: 503, retryAfterSeconds: 2 } }],
    },
    export: {
      steps: [
        { state: 'running', durationMs: 2_500, progress: 40 },
        { state: 'succeeded', progress: 100 },
      ],
      cancel: { afterMs: 60_000, outcome: 'succeeded' },
      result: { kind: 'json', body: { rows: 3 } },
    },
    review: {
      steps: [
        { state: 'running', durationMs: 2_000, progress: 50 },
        { state: 'manual_review', polls: 1, progress: 90 },
        { state: 'succeeded', progress: 100 },
      ],
      result: { kind: 'batch', items: 5, failedItems: [] },
    },
  },
};
