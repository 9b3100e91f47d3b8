/**
 * The stable error codes of the operation store, each with a one-line description, and the one error class
 * the store throws for its own refusals. Codes never change meaning once published: callers match on `code`.
 */

/** Store error codes and what they mean. */
export const STORE_CODES = {
  /** A different entry was offered under an (operationId, sequence) that is already recorded (M3). Never overwritten. */
  ASYNCJOB_ERR_JOURNAL_CONFLICT: 'a different entry is already recorded under this operation ID and sequence',
  /** The entry's sequence is beyond the next free one of its operation: appending it would leave a gap. */
  ASYNCJOB_ERR_JOURNAL_GAP: 'the entry would leave a gap in the operation journal',
  /**
   * Raised by the database itself (triggers) for an UPDATE, DELETE or TRUNCATE of `journal` or `artifacts`: the
   * history is append-only. Appears in the driver's error message, not as a {@link StoreError}.
   */
  ASYNCJOB_ERR_APPEND_ONLY: 'the journal and artifacts tables are append-only',
  /** The entry, snapshot, webhook event or provider session contains a credential or a configured secret value (T4). */
  ASYNCJOB_ERR_SECRET_IN_RECORD: 'a credential or secret value was offered to the store',
  /** An entry, snapshot or query argument failed validation; the issues name the fields. */
  ASYNCJOB_ERR_INVALID_INPUT: 'the input failed validation',
  /** A store location (`sqlite:PATH`, `postgres://...`) could not be understood or opened. */
  ASYNCJOB_ERR_STORE_LOCATION: 'the store location is not valid or cannot be opened',
  /** The store was used after `close()`. */
  ASYNCJOB_ERR_STORE_CLOSED: 'the store is closed',
  /** V3: a provider session (serialised cookie jar) over the size limit was offered; nothing was written. */
  ASYNCJOB_ERR_SESSION_TOO_LARGE: 'the provider session is over the size limit',
} as const;

/** A stable store error code. */
export type StoreCode = keyof typeof STORE_CODES;

/** One validation problem: the field path (`body.httpStatus`) and what is wrong with it. */
export interface StoreIssue {
  readonly path: string;
  readonly message: string;
}

/** The error the store throws for refusals it detects itself; `code` is stable, `issues` name the fields. */
export class StoreError extends Error {
  constructor(
    readonly code: StoreCode,
    message: string,
    readonly issues: readonly StoreIssue[] = [],
  ) {
    super(`${code}: ${message}`);
    this.name = 'StoreError';
  }
}

/** True when `err` is a {@link StoreError}, optionally with the given code. */
export function isStoreError(err: unknown, code?: StoreCode): err is StoreError {
  return err instanceof StoreError && (code === undefined || err.code === code);
}

/** Converts zod-style issues (`{ path, message }`) into a {@link StoreError} naming every field at once. */
export function invalidInput(
  what: string,
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
): StoreError {
  const named = issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
  return new StoreError(
    'ASYNCJOB_ERR_INVALID_INPUT',
    `${what}: ${named.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    named,
  );
}
