/**
 * The stable error codes of the provider adapters, with a typed error that carries every problem found.
 */

/** Stable codes of this module, each with its meaning. Never renamed once published. */
export const PROVIDER_ADAPTER_CODES = {
  /** A provider contract document failed validation; `issues` names every bad field. */
  ASYNCJOB_ERR_ADAPTER_INVALID: 'the provider contract document is invalid',
  /** No provider contract with that name or path was found. */
  ASYNCJOB_ERR_ADAPTER_NOT_FOUND: 'no provider contract with that name or path was found',
} as const;

/** A stable provider adapter error code. */
export type ProviderAdapterCode = keyof typeof PROVIDER_ADAPTER_CODES;

/** One problem in a contract document: the field path (`status.stateTable.success[0]`) and what is wrong. */
export interface ContractIssue {
  path: string;
  message: string;
}

/** A provider contract could not be loaded. `issues` lists every problem at once; the message has one per line. */
export class ProviderContractError extends Error {
  /** The stable code. */
  readonly code: ProviderAdapterCode;
  /** Every problem found, each naming its field. */
  readonly issues: readonly ContractIssue[];
  /** The contract name or path that was being loaded. */
  readonly source: string;

  constructor(code: ProviderAdapterCode, source: string, issues: readonly ContractIssue[]) {
    const lines = issues.map(
      (issue) => `provider contract "${source}": ${issue.path === '' ? '(document)' : issue.path}: ${issue.message}`,
    );
    super(`${PROVIDER_ADAPTER_CODES[code]}\n${lines.join('\n')}`);
    this.name = 'ProviderContractError';
    this.code = code;
    this.source = source;
    this.issues = issues;
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
