/**
 * The activities' own refusals, with stable codes. `to-failure.ts` turns them (and the store's, the registry's
 * and the adapters' errors) into Temporal failures; nowhere else does.
 */

/** Stable codes of the activities, each with its meaning. Never renamed once published. */
export const ACTIVITY_CODES = {
  /** C1: the intent entry is not in the store, so nothing may be sent. */
  ASYNCJOB_ERR_INTENT_MISSING: 'the intent of this operation is not recorded; nothing is sent before it is (C1)',
  /** I2: the request differs from the one recorded under this operation ID. */
  ASYNCJOB_ERR_FINGERPRINT_MISMATCH: 'the request differs from the one recorded under this operation ID (I2)',
  /** The store's journal is ahead of its snapshot (a crash between the two writes); a human looks. */
  ASYNCJOB_ERR_SNAPSHOT_MISSING: 'the journal holds this step but the stored snapshot does not',
  /** The input (record, entries) failed validation; the message names the field. */
  ASYNCJOB_ERR_INVALID_INPUT: 'the activity input failed validation',
  /** The result artifact could not be written or read back. */
  ASYNCJOB_ERR_ARTIFACT_FAILED: 'the result artifact could not be written or read',
} as const;

/** A stable activity code. */
export type ActivityCode = keyof typeof ACTIVITY_CODES;

/** An activity's refusal: `code` is stable, `nonRetryable` says a retry of the same input cannot help. */
export class ActivityError extends Error {
  constructor(
    readonly code: ActivityCode,
    message: string,
    readonly nonRetryable: boolean,
  ) {
    super(`${code}: ${message}`);
    this.name = 'ActivityError';
  }
}
