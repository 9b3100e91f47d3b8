/**
 * The error of a provider contract that does not load, carrying every problem found; its codes are in the one
 * registry (`core/codes.ts`).
 */
import { ERROR_CODES } from '../../core/codes';
import { AsyncJobError } from '../../core/errors';

/** The codes of a contract that does not load: invalid, or not found. */
export type ProviderAdapterCode = 'ASYNCJOB_ERR_ADAPTER_INVALID' | 'ASYNCJOB_ERR_ADAPTER_NOT_FOUND';

/** One problem in a contract document: the field path (`status.stateTable.success[0]`) and what is wrong. */
export interface ContractIssue {
  path: string;
  message: string;
}

/** A provider contract could not be loaded. `issues` lists every problem at once; the message has one per line. */
export class ProviderContractError extends AsyncJobError {
  declare readonly code: ProviderAdapterCode;

  constructor(
    code: ProviderAdapterCode,
    /** The contract name or path that was being loaded. */
    readonly source: string,
    /** Every problem found, each naming its field. */
    readonly issues: readonly ContractIssue[],
  ) {
    const lines = issues.map(
      (issue) => `provider contract "${source}": ${issue.path === '' ? '(document)' : issue.path}: ${issue.message}`,
    );
    super(code, `${ERROR_CODES[code].meaning}\n${lines.join('\n')}`);
  }
}

/** Formats a zod issue path as `status.stateTable.success[0]`. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}
