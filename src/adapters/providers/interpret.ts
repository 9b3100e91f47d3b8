/**
 * Pure interpretation of a provider's HTTP answer into an {@link Observation} (no I/O, no clock): the adapter
 * classifies, the core judges. Conventions every consumer relies on:
 * - `category` is present exactly when the provider's state was read (a state field looked up in the state
 *   table, an AIP-151 derivation, or the HTTP status of an answer stating none, V1); a state outside the table is
 *   `unknown`.
 * - `parseProblem` lists everything in a 2xx answer that could not be used (not JSON, an HTML page, a missing
 *   or mistyped field, a URL on another origin or too long). A consumer never takes a transition that depends on
 *   a field named there (a success with a `parseProblem` about the result reference is not ready, P7).
 * - A non-2xx answer is an HTTP fact (P6): `httpStatus`, `errorCategory` (`auth_denied` 401/403, `not_found`
 *   404, `rate_limited` 429, `http_4xx`, `http_5xx`, `http_unexpected`), `retryAfter` and `providerError`; its
 *   body is never required to parse.
 * - `errorCategory: 'foreign_origin'` marks a URL in the answer that pointed elsewhere (C4); it is dropped.
 * - URLs are used whole or refused, never shortened (V1); other strings are cut to the observation's limits.
 * The parts live in `interpret/`, by concern: the answer, the state, the poll URL, result facts, one module per
 * kind of call.
 */
export { type ProviderAnswer } from './interpret/answer';
export { answerFormatFor, type AnswerFormatContext } from './interpret/answer-format';
export { interpretCreate, type CreateContext } from './interpret/create';
export { interpretStatus, interpretCancel, type StatusContext } from './interpret/status';
export { interpretReconcile, type ReconcileContext, type ReconcileInterpretation } from './interpret/reconcile';
export { countBatchItems, readResultIntegrity, type BatchCount, type ResultIntegrity } from './interpret/result-facts';
