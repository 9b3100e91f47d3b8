/**
 * The one classification of an outside exchange into an answer signal (`core/answer-policy.ts`): every
 * observation gets its signal here, from how the exchange ended, its HTTP status, and what the interpretation
 * found. The core reacts to the signal and never looks at the status again. Pure.
 */
import { type AnswerSignal } from '../../core/answer-policy';
import { type Observation } from '../../core/observation';

/** The fields of an observation its signal depends on. */
export type SignalFacts = Pick<Observation, 'transport' | 'httpStatus' | 'errorCategory' | 'parseProblem'>;

/**
 * Interpretations that stand for a signal whatever the status: the adapter has no such call, several jobs match, a
 * lookup's answer that the contract declares "no such job" (U2), or a lookup's 404 it does not.
 */
const CATEGORY_SIGNALS: Readonly<Record<string, AnswerSignal>> = {
  reconcile_unsupported: 'unsupported',
  multiple_matches: 'several_jobs',
  credential_unavailable: 'no_credential',
  job_absent: 'not_found',
  // An error code the contract names as rate limited (H1), whatever the HTTP status.
  rate_limited: 'rate_limited',
  undeclared_not_found: 'client_error',
};

/** The signal of an answer that arrived, by its HTTP status (RFC 9110 classes, with the statuses our rules name). */
function statusSignal(status: number, parseProblem: string | undefined): AnswerSignal {
  if (status >= 200 && status < 300) return parseProblem === undefined ? 'ok' : 'unreadable';
  if (status === 401 || status === 403) return 'auth_denied';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status === 429) return 'rate_limited';
  if (status === 405 || status === 501) return 'unsupported';
  if (status === 503) return 'unavailable';
  if (status >= 400 && status < 500) return 'client_error';
  if (status >= 500) return 'server_error';
  return 'unexpected';
}

/** The signal of one exchange. */
export function answerSignal(facts: SignalFacts): AnswerSignal {
  const named = facts.errorCategory !== undefined ? CATEGORY_SIGNALS[facts.errorCategory] : undefined;
  if (named !== undefined) return named;
  switch (facts.transport) {
    case 'not_sent':
      return 'not_sent';
    case 'ambiguous':
      return 'ambiguous';
    case 'body_too_large':
      return 'too_large';
    case 'refused':
      return 'refused';
    case 'response':
      return statusSignal(facts.httpStatus ?? 0, facts.parseProblem);
  }
}

/** The error category an HTTP answer outside a call's accepted statuses is journalled with, by its signal. */
const HTTP_ERROR_CATEGORIES: Readonly<Record<AnswerSignal, string>> = {
  ok: 'http_unexpected',
  unreadable: 'http_unexpected',
  several_jobs: 'http_unexpected',
  conflict: 'http_4xx',
  rate_limited: 'rate_limited',
  unavailable: 'http_5xx',
  auth_denied: 'auth_denied',
  not_found: 'not_found',
  unsupported: 'unsupported',
  client_error: 'http_4xx',
  server_error: 'http_5xx',
  unexpected: 'http_unexpected',
  too_large: 'body_too_large',
  not_sent: 'not_sent',
  ambiguous: 'ambiguous',
  refused: 'refused',
  no_credential: 'credential_unavailable',
};

/** The error category of an HTTP answer a call does not accept (`auth_denied`, `not_found`, `http_5xx`...). */
export function httpErrorCategory(status: number): string {
  return HTTP_ERROR_CATEGORIES[statusSignal(status, undefined)];
}
