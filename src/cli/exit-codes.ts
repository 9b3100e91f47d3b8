/**
 * The exit statuses of `asyncjob` (documented in docs/cli.md), defined with the error codes in `core/codes.ts`: an
 * error exits with its code's status ({@link exitStatusOf}); a command that reports an operation exits by its state.
 */
import { shownError } from '../client/errors';
import { EXIT, type ErrorCode, type ExitCode } from '../core/codes';
import { AsyncJobError, exitStatusOf } from '../core/errors';

export { EXIT, type ExitCode } from '../core/codes';
export { exitStatusOf } from '../core/errors';

/** The local states that end badly (exit 1 where an operation is reported). */
const BAD_END_STATES: readonly string[] = ['failed', 'cancelled', 'closed'];

/** The exit code that reports an operation in `localState`: 1 for a bad end, 7 for an escalation, else 0. */
export function exitForState(localState: string | null | undefined): ExitCode {
  if (localState === 'escalated') return EXIT.needsDecision;
  return localState !== null && localState !== undefined && BAD_END_STATES.includes(localState)
    ? EXIT.operationEndedBadly
    : EXIT.ok;
}

/** An error as the CLI reports it. */
export interface ClassifiedError {
  exitCode: ExitCode;
  /** A stable code: the error's own `ASYNCJOB_ERR_...`, or the workflow's refusal code. */
  code: ErrorCode;
  message: string;
}

/** One line: newlines and runs of spaces folded. */
function oneLine(text: string): string {
  return text
    .replace(/:\s*\n\s*-?\s*/g, ': ')
    .replace(/\s*\n\s*-?\s*/g, '; ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Maps an error to its exit status (its code's, from the registry), the code shown (a refusal's own code) and its
 * one-line message.
 */
export function classifyError(err: unknown): ClassifiedError {
  const ours = err instanceof AsyncJobError ? err : undefined;
  const message = oneLine(err instanceof Error ? err.message : String(err));
  const code = ours?.code ?? 'ASYNCJOB_ERR_INTERNAL';
  return { exitCode: exitStatusOf(code), code: ours ? shownError(ours).code : code, message };
}
