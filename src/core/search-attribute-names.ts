/**
 * The custom search attributes asyncjob keeps current on every operation, so operators can find operations in
 * the Temporal Web UI (`AsyncJobState = "escalated"`). One list, used by the workflow (typed keys), the dev
 * server (registration) and the docs.
 */
export const SEARCH_ATTRIBUTES = {
  /** The operation's local state (see docs/rules.md, The state machine). */
  AsyncJobState: 'Keyword',
  /** The provider adapter's name. */
  AsyncJobProvider: 'Keyword',
  /** The provider's job ID, once known. */
  AsyncJobProviderJobId: 'Keyword',
  /** The open escalation's reason, or absent. */
  AsyncJobEscalationReason: 'Keyword',
  /** The business deadline for the result. */
  AsyncJobResultDeadline: 'Datetime',
} as const;

/** A search attribute name of ours. */
export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTES;
