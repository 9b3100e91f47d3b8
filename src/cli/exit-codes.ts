/**
 * The exit codes of `asyncjob`, stable for scripts (documented in docs/cli.md). `audit` and `simulate` keep
 * their own documented codes.
 */
export const EXIT = {
  /** Done; for commands that report an operation: it succeeded or has not ended. */
  ok: 0,
  /** The operation ended badly: failed, cancelled or closed, or its workflow failed or was terminated. */
  operationEndedBadly: 1,
  /** Usage error or bad input: unknown command or option, bad duration, invalid JSON, invalid request. */
  usage: 2,
  /** The workflow refused the request: option not offered, cancel unsupported, fingerprint mismatch (I2), ... */
  refused: 3,
  /** No operation with this ID. */
  notFound: 4,
  /** The Temporal server could not be reached (address, TLS, API key), or no worker answered a query in time. */
  connection: 5,
  /** An unexpected error of ours; the message (and --verbose) says what. */
  internal: 6,
  /** The operation needs a decision: it is escalated (`asyncjob decide ID` shows the options). */
  needsDecision: 7,
} as const;
/** An exit code. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The local states that end badly (exit 1 where an operation is reported). */
export const BAD_END_STATES: readonly string[] = ['failed', 'cancelled', 'closed'];

/** The exit code that reports an operation in `localState`: 1 for a bad end, 7 for an escalation, else 0. */
export function exitForState(localState: string | null | undefined): ExitCode {
  if (localState === 'escalated') return EXIT.needsDecision;
  return localState !== null && localState !== undefined && BAD_END_STATES.includes(localState)
    ? EXIT.operationEndedBadly
    : EXIT.ok;
}
