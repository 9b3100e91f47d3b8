/**
 * The error the operation store throws for the refusals it detects itself: an {@link AsyncJobError} whose code
 * (`ASYNCJOB_ERR_JOURNAL_CONFLICT`, `ASYNCJOB_ERR_STORE_LOCATION`, ...) is in the one registry (`core/codes.ts`),
 * with the fields at fault. `ASYNCJOB_ERR_APPEND_ONLY` is raised by the database itself (its triggers) and appears
 * in the driver's error message, not as a {@link StoreError}.
 */
import { type ErrorCode } from '../../core/codes';
import { AsyncJobError } from '../../core/errors';

/** One validation problem: the field path (`body.httpStatus`) and what is wrong with it. */
export interface StoreIssue {
  readonly path: string;
  readonly message: string;
}

/** A refusal of the store; `issues` name the fields (empty when the refusal is not about a field). */
export class StoreError extends AsyncJobError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly issues: readonly StoreIssue[] = [],
  ) {
    super(code, message);
  }
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
