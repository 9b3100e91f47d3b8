/**
 * The stable error and refusal codes of `src/core`, each with a one-line description. Codes never change
 * meaning once published: callers, the CLI and operators match on them. Add new codes; never rename one.
 */
export const CORE_CODES = {
  /** A request reuses an operation ID or idempotency token with a different request fingerprint (I2). */
  ASYNCJOB_ERR_FINGERPRINT_MISMATCH:
    'the request differs from the one recorded under this operation ID or idempotency token',
  /** A value cannot be written as canonical JSON (NaN, a Date, a class instance...). */
  ASYNCJOB_ERR_NOT_CANONICALIZABLE: 'the value cannot be written as canonical JSON',
  /** Fewer random bytes than the 128 bits an idempotency token needs (I1). */
  ASYNCJOB_ERR_INSUFFICIENT_ENTROPY: 'an idempotency token needs at least 16 random bytes (128 bits)',
  /** A start request or policy failed validation; the issues name the fields. */
  ASYNCJOB_ERR_INVALID_INPUT: 'the input failed validation',
  /** No arrow of the state machine leads from the current state with this event (M1). */
  ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED: 'the state machine has no such transition from the current state',
  /** The arrow exists but the evidence it requires is missing (M1). */
  ASYNCJOB_ERR_MISSING_EVIDENCE: 'the transition needs evidence that was not supplied',
  /** The provider reported a job ID different from one already recorded for this operation (U3). */
  ASYNCJOB_ERR_JOB_ID_CONFLICT: 'the provider reported a second, different job ID for this operation',
  /** A different journal entry is already recorded under this operation ID and sequence (M3); never retried. */
  ASYNCJOB_ERR_JOURNAL_CONFLICT: 'a different entry is already recorded under this operation ID and sequence',
  /** The operation names a provider no worker of this deployment registers; never retried. */
  ASYNCJOB_ERR_PROVIDER_UNKNOWN: 'no provider with that name is registered in this worker',
  /** The operation is in a final state; nothing more can happen to it. */
  ASYNCJOB_ERR_OPERATION_FINAL: 'the operation is in a final state',
  /** A decision was given while no escalation is open. */
  ASYNCJOB_ERR_NO_OPEN_ESCALATION: 'there is no open escalation to decide',
  /** A decision chose an option the escalation did not offer (A2). */
  ASYNCJOB_ERR_OPTION_NOT_OFFERED: 'the decision chose an option that was not offered',
  /** A decision chose an option that cannot act on the adapter's capabilities and the record's facts (E3). */
  ASYNCJOB_ERR_OPTION_NOT_EXECUTABLE:
    'the decision chose an option that cannot act here; the message names what is missing',
  /** A decision is missing who approved it or why (A2). */
  ASYNCJOB_ERR_DECISION_INCOMPLETE: 'the decision does not name who approved it and why',
  /** A decision asks for more time or checks than the offered bound allows (A2). */
  ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS: 'the decision asks for more than the offered bounds',
  /** A decision arrived after the escalation's decision deadline. */
  ASYNCJOB_ERR_DECISION_TOO_LATE: 'the decision arrived after the decision deadline',
  /** The one who asked for an escalation (an extension request) tried to grant it (G2). */
  ASYNCJOB_ERR_SELF_APPROVAL: 'the requester of an escalation cannot approve it',
  /** More time or checks were asked for an operation without a running provider job (G2). */
  ASYNCJOB_ERR_EXTENSION_NOT_APPLICABLE: 'only a running provider job can be given more time',
  /** The result deadline has passed (S3). */
  ASYNCJOB_ERR_DEADLINE_EXCEEDED: 'the result deadline has passed',
  /** The next status request would exceed the status-request budget (S4). */
  ASYNCJOB_ERR_REQUEST_BUDGET_EXHAUSTED: 'the next status request would exceed the budget',
  /** A cancel was asked of a provider whose adapter has no cancel endpoint (E2, X1). */
  ASYNCJOB_ERR_CANCEL_UNSUPPORTED: 'the provider has no cancel endpoint',
  /** A cancel was already requested for this operation; it is never sent twice (X3). */
  ASYNCJOB_ERR_CANCEL_ALREADY_REQUESTED: 'a cancel was already requested for this operation',
  /** The operation's state does not allow a cancel (before a job exists, or after the end). */
  ASYNCJOB_ERR_CANCEL_NOT_ALLOWED: 'the operation cannot be cancelled in its current state',
} as const;

/** A stable core error or refusal code. */
export type CoreCode = keyof typeof CORE_CODES;
