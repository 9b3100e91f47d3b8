/** Which format a provider call's answer is read with (V6): the one its reading declares, if any. Pure. */
import { type Action } from '../../../core/journal';
import { type AnswerFormat, type ProviderContract } from '../contract';
import { readingFor } from './state';

/** What decides a call's reading besides its action: the poll URL's reading, and whether a create is re-sent. */
export interface AnswerFormatContext {
  /** The reading of the poll URL in use (`status.readings`); the status section's own when absent. */
  pollReading?: string;
  /** The reconcile call re-sends the create (its answer is a create answer). */
  resend?: boolean;
}

/**
 * The format the answer to `action` is read with: the create answer's (also for a create re-sent to reconcile),
 * the status reading's, or undefined (JSON when its content type says so) for every other call.
 */
export function answerFormatFor(
  contract: ProviderContract,
  action: Action,
  context: AnswerFormatContext = {},
): AnswerFormat | undefined {
  switch (action) {
    case 'create':
      return contract.create.format;
    case 'reconcile':
      return context.resend === true || contract.reconciliation.method === 'same_token_resend'
        ? contract.create.format
        : undefined;
    case 'status':
      return readingFor(contract, context.pollReading).format;
    default:
      return undefined;
  }
}
