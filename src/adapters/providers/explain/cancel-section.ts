/** The Cancel section: the cancel request, if the provider offers one, and what its answer proves. Pure. */
import { type ProviderContract } from '../contract';
import { type ExplainOptions, type ExplainSection } from './explanation';
import { list, url } from './phrases';
import { requestDetailLines } from './request-lines';

/** The cancel request and what its answer means: only a later status read ends the operation cancelled (X1-X3). */
export function cancelSection(contract: ProviderContract, options: ExplainOptions): ExplainSection {
  const cancel = contract.cancel;
  if (cancel === undefined)
    return {
      id: 'cancel',
      title: 'Cancel',
      lines: ['the provider offers no cancel: a cancel request is refused (ASYNCJOB_ERR_CANCEL_UNSUPPORTED)'],
    };
  return {
    id: 'cancel',
    title: 'Cancel',
    lines: [
      `${cancel.method} ${url(contract, options, cancel.path)}, sent once (X1, X3)${cancel.idempotent ? '; repeating it is harmless at this provider' : '; repeating it is not harmless'}`,
      ...requestDetailLines(cancel, 'application/json'),
      `accepted when the answer is HTTP ${list(cancel.acceptedStatuses)}; only a later status read saying cancelled ends the operation cancelled (the job may finish first, X2)`,
      'HTTP 501 or 405: the provider does not support cancel for this job; escalated as such, never sent again (X1)',
    ],
  };
}
