/**
 * What an answer means, as data (H1-H5, S2, S5, U1-U2, X1-X3, R5). The adapters classify every outside exchange
 * once into an {@link AnswerSignal}; {@link ANSWER_POLICY} says, for each call and signal, how the core reacts.
 * No step compares an HTTP status: it looks its answer up here. docs/answer-policy.md is rendered from this table
 * (a test keeps them equal). Pure.
 */
import { z } from 'zod';
import { type EscalationReason } from './journal';
import { lazySchema } from './lazy-schema';
import { type OperationRecord } from './operation';

/**
 * What one exchange produced, in the closed set the adapters classify into (`adapters/providers/answer-signal.ts`):
 * an answer that arrived (by its HTTP status class), or how the exchange ended without one.
 */
export const answerSignalSchema = lazySchema(() =>
  z.enum([
    'ok',
    'unreadable',
    'several_jobs',
    'conflict',
    'rate_limited',
    'unavailable',
    'auth_denied',
    'not_found',
    'unsupported',
    'client_error',
    'server_error',
    'unexpected',
    'too_large',
    'not_sent',
    'ambiguous',
    'refused',
    'no_credential',
  ]),
);
/** An answer signal. */
export type AnswerSignal = z.infer<typeof answerSignalSchema>;

/** What each signal is, for the rendered table and error texts. */
export const SIGNAL_MEANING: Record<AnswerSignal, string> = {
  ok: 'a 2xx answer whose body could be read',
  unreadable: 'a 2xx answer whose body, or a field the call needs, could not be used (S2)',
  several_jobs: 'a 2xx lookup answer naming several provider jobs for one operation (U3)',
  conflict: 'HTTP 409',
  rate_limited: 'HTTP 429, or an error answer whose code the adapter names in `providerError.rateLimitedCodes` (H1)',
  unavailable: 'HTTP 503',
  auth_denied: 'HTTP 401 or 403',
  not_found: 'HTTP 404, or a lookup answer the adapter declares "no such job" (U2)',
  unsupported: 'HTTP 405 or 501, or an adapter with no such call',
  client_error: 'any other 4xx',
  server_error: 'HTTP 500, 502, 504 and any other 5xx',
  unexpected: 'a 1xx or 3xx status',
  too_large: 'an answer over the size limit',
  not_sent:
    'nothing reached the provider (connection refused, DNS, TLS, connect timeout, a call that failed before its write)',
  ambiguous: 'the request may have arrived, no answer did (timeout or reset after sending, cut-off body, lost worker)',
  refused: 'refused by us before sending (another origin, a request that cannot be built)',
  no_credential: 'refused by us before sending: the credential could not be had',
};

/** The calls an operation makes to its provider. */
export type ProviderCall = 'create' | 'reconcile' | 'status' | 'cancel' | 'collect';

/** Which budget bounds a retried call: transport failures (S5) or HTTP 429s in a row (H1). */
type RetryBudget = 'transport' | 'rate_limit';

/** How the core reacts to one (call, signal). */
export type Reaction =
  /** The step reads the answer: the job's state, the job it names, the cancel's acceptance, the result. */
  | { kind: 'read' }
  /** Not now: counted against `budget`, planned again with backoff and Retry-After inside the call's deadline. */
  | { kind: 'retry'; budget: RetryBudget; onlyIfRepeatable?: true }
  /** HTTP 404 on a status read: waits inside the not-found consistency window, then escalates (H3). */
  | { kind: 'not_found_window' }
  /** The create may have arrived: find out by the adapter's reconciliation method (U1, U2). */
  | { kind: 'reconcile' }
  /** The provider has no job for this operation (U2). */
  | { kind: 'no_job' }
  /** Stop and ask a human, for this reason. */
  | { kind: 'escalate'; reason: EscalationReason };

const read: Reaction = { kind: 'read' };
const retryTransport: Reaction = { kind: 'retry', budget: 'transport' };
const retryRateLimit: Reaction = { kind: 'retry', budget: 'rate_limit' };
const retryIfRepeatable: Reaction = { kind: 'retry', budget: 'transport', onlyIfRepeatable: true };
const reconcile: Reaction = { kind: 'reconcile' };
const escalate = (reason: EscalationReason): Reaction => ({ kind: 'escalate', reason });

/** Reactions every call shares: 429 is "not now" (H1), 401/403 never retried with the same credential (H4). */
const SHARED: Partial<Record<AnswerSignal, Reaction>> = {
  rate_limited: retryRateLimit,
  auth_denied: escalate('authorization_denied'),
  // Nothing was sent: once the credential is back, a human may authorise the call again.
  no_credential: escalate('provider_failure'),
  refused: escalate('provider_failure'),
  several_jobs: escalate('job_id_conflict'),
};

/** A call's row: the reactions it names, else the shared ones, else `otherwise`. */
function row(otherwise: Reaction, named: Partial<Record<AnswerSignal, Reaction>>): Record<AnswerSignal, Reaction> {
  const cells = answerSignalSchema.options.map((signal) => [signal, named[signal] ?? SHARED[signal] ?? otherwise]);
  return Object.fromEntries(cells) as Record<AnswerSignal, Reaction>;
}

/**
 * The answer policy: `ANSWER_POLICY[call][signal]`. Why each row is as it is:
 * - create: an answer that may have created a job (5xx, no answer, a cut-off or redirecting one) is reconciled,
 *   never re-sent blindly (U1); one that proves nothing was created (never sent, 429) is sent again with the
 *   same token (I3); any other refusal is the provider refusing our request.
 * - reconcile: a lookup is a read: failures are retried inside the create deadline; a 404 is "no such job"; a 409
 *   to a create re-sent with the same token is the provider still working on the first one. Whatever stops it
 *   leaves the create's fate unknown (`create_unknown`).
 * - status: transport failures and 503 are retried within their budget (H5, S5); 404 waits out the consistency
 *   window (H3); any other refusal escalates.
 * - cancel: the one cancel call (X3) is sent again only while it certainly did not take effect (never sent, 429,
 *   503); any other answer marks it sent. 409 is "already final" and read like an acceptance (X2).
 * - collect: a download is repeated after a failure only when the provider says that is safe (R5).
 */
export const ANSWER_POLICY: Record<ProviderCall, Record<AnswerSignal, Reaction>> = {
  create: row(escalate('request_rejected'), {
    ok: read,
    unreadable: escalate('create_unknown'),
    no_credential: escalate('authorization_denied'),
    unavailable: reconcile,
    server_error: reconcile,
    unexpected: reconcile,
    too_large: reconcile,
    ambiguous: reconcile,
    not_sent: retryTransport,
  }),
  reconcile: row(retryTransport, {
    ok: read,
    not_found: { kind: 'no_job' },
    unsupported: escalate('create_unknown'),
    client_error: escalate('create_unknown'),
    refused: escalate('create_unknown'),
    no_credential: escalate('create_unknown'),
  }),
  status: row(escalate('request_rejected'), {
    ok: read,
    not_found: { kind: 'not_found_window' },
    unreadable: escalate('provider_failure'),
    unexpected: escalate('provider_failure'),
    too_large: escalate('provider_failure'),
    unavailable: retryTransport,
    server_error: retryTransport,
    not_sent: retryTransport,
    ambiguous: retryTransport,
  }),
  cancel: row(escalate('cancellation_unconfirmed'), {
    ok: read,
    conflict: read,
    unavailable: retryTransport,
    not_sent: retryTransport,
  }),
  collect: row(escalate('provider_failure'), {
    ok: read,
    unavailable: retryIfRepeatable,
    server_error: retryIfRepeatable,
    ambiguous: retryIfRepeatable,
    not_sent: retryTransport,
  }),
};

/** The reaction to `signal` on `call`. */
export function reactionTo(call: ProviderCall, signal: AnswerSignal): Reaction {
  return ANSWER_POLICY[call][signal];
}

/** Signals of an exchange whose request never got an answer through: they say nothing about rate limiting. */
const NO_ANSWER: ReadonlySet<AnswerSignal> = new Set(['not_sent', 'ambiguous', 'refused', 'no_credential']);

/** Transport failures (H5, S5): nothing came back, or the server failed; each counts against that budget. */
const TRANSPORT_FAILURES: ReadonlySet<AnswerSignal> = new Set(['not_sent', 'ambiguous', 'server_error', 'unavailable']);

/**
 * The counters after one answer, the same for every call: a 429 counts and extends the run of 429s in a row; any
 * other answer that got through ends that run, an exchange without one leaves it (H1); a transport failure, and
 * any answer retried on the transport budget, counts against that budget (H5, S5).
 */
export function countAnswer(
  used: OperationRecord['used'],
  call: ProviderCall,
  signal: AnswerSignal,
): OperationRecord['used'] {
  const reaction = reactionTo(call, signal);
  const counted = { ...used };
  if (signal === 'rate_limited') {
    counted.rateLimited += 1;
    counted.consecutiveRateLimited += 1;
  } else if (!NO_ANSWER.has(signal)) {
    counted.consecutiveRateLimited = 0;
  }
  if (TRANSPORT_FAILURES.has(signal) || (reaction.kind === 'retry' && reaction.budget === 'transport'))
    counted.transportFailures += 1;
  return counted;
}

/** How many 429s in a row the wait planner backs off for: the run so far after a 429, else none (H1). */
export function rateLimitedInARow(used: OperationRecord['used'], signal: AnswerSignal): number {
  return signal === 'rate_limited' ? used.consecutiveRateLimited : 0;
}

/**
 * Why a retry is not allowed, once counted: the budget it draws on is spent (H1, S5). Undefined while it has
 * room. `used` is after {@link countAnswer}.
 */
export function retryBudgetSpent(
  reaction: Extract<Reaction, { kind: 'retry' }>,
  used: OperationRecord['used'],
  budgets: OperationRecord['budgets'],
): { reason: EscalationReason; detail: string } | undefined {
  if (reaction.budget === 'rate_limit') {
    if (used.consecutiveRateLimited < budgets.maxRateLimited) return undefined;
    return { reason: 'rate_limited', detail: `${used.consecutiveRateLimited} HTTP 429 answers in a row (H1)` };
  }
  if (used.transportFailures < budgets.maxTransportFailures) return undefined;
  return {
    reason: 'provider_failure',
    detail: `${used.transportFailures} transport failures, budget ${budgets.maxTransportFailures} spent (S5)`,
  };
}

/** The answer as a detail line names it: `HTTP 503`, `not_sent (connect_refused)`. */
export function answerText(observation: {
  transport: string;
  httpStatus?: number | undefined;
  errorCategory?: string | undefined;
}): string {
  if (observation.httpStatus !== undefined) return `HTTP ${observation.httpStatus}`;
  return `${observation.transport} (${observation.errorCategory ?? 'network error'})`;
}
