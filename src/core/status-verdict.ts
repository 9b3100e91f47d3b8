/**
 * The verdict on one status answer (H1-H5, P1, P6-P8, S2, S5): wait, collect, failed, cancelled, or an
 * escalation with its reason and a detail that names the provider's own error; and the counters an answer moves.
 * Pure; `planAfterObservation` acts on it.
 */
import { type EscalationReason } from './journal';
import { locatesResult, type Observation } from './observation';
import { type OperationRecord } from './operation';
import { type PollPolicy } from './policy';
import { expiresAtMsOf } from './record-observation';

/** What one status answer means for the operation. */
export type Verdict =
  | { kind: 'wait'; note?: string }
  | { kind: 'collect' }
  | { kind: 'failed'; detail: string }
  | { kind: 'cancelled'; detail: string }
  | { kind: 'escalate'; reason: EscalationReason; detail: string };

/** Whether an answer is a transport failure: never sent, maybe sent, or a 5xx (H5, S5). */
export function isTransportFailure(observation: Observation): boolean {
  return (
    observation.transport === 'not_sent' ||
    observation.transport === 'ambiguous' ||
    (observation.transport === 'response' && observation.httpStatus !== undefined && observation.httpStatus >= 500)
  );
}

/**
 * The counters after one answer from the provider: a transport failure counts against its budget (H5, S5), a 429
 * counts and extends the run of 429s in a row, any other response ends that run (H1).
 */
export function countAnswer(used: OperationRecord['used'], observation: Observation): OperationRecord['used'] {
  const counted = { ...used };
  if (isTransportFailure(observation)) counted.transportFailures += 1;
  if (observation.transport === 'response' && observation.httpStatus === 429) {
    counted.rateLimited += 1;
    counted.consecutiveRateLimited += 1;
  } else if (observation.transport === 'response') {
    counted.consecutiveRateLimited = 0;
  }
  return counted;
}

/** The provider's error code and message for a detail line, e.g. ` (quota_exceeded: the monthly quota is spent)`. */
export function providerErrorText(observation: Observation): string {
  const error = observation.providerError;
  if (error === undefined) return '';
  const parts = [error.code, error.message].filter((part): part is string => part !== undefined);
  return parts.length === 0 ? '' : ` (${parts.join(': ').slice(0, 500)})`;
}

/** How a refused or rejected request is named in a detail: what was missing, as the build step or provider said it. */
export function refusalText(observation: Observation): string {
  if (observation.transport === 'refused') {
    const problem = observation.parseProblem !== undefined ? `: ${observation.parseProblem.slice(0, 500)}` : '';
    return `request was refused before sending (${observation.errorCategory ?? 'refused'}${problem})`;
  }
  const error = [observation.providerError?.code, observation.providerError?.message].filter((p) => p !== undefined);
  const said = error.length > 0 ? ` (${error.join(': ').slice(0, 500)})` : '';
  return `request was rejected by the provider: HTTP ${observation.httpStatus ?? 0}${said}`;
}

/** What a verdict looks at; `requestText` names the provider's request ID for a detail line. */
interface ReadFacts {
  record: OperationRecord;
  policy: PollPolicy;
  observation: Observation;
  used: OperationRecord['used'];
  /** `, provider request <id>` or empty. */
  requestText: string;
}

/** The verdict on an answer that never arrived whole: refused, cut off at the size limit, or a transport failure. */
function transportVerdict({ record, observation, used, requestText }: ReadFacts): Verdict | undefined {
  if (observation.transport === 'refused')
    return {
      kind: 'escalate',
      reason: 'provider_failure',
      detail: `the status ${refusalText(observation)}`,
    };
  if (observation.transport === 'body_too_large')
    return { kind: 'escalate', reason: 'provider_failure', detail: 'the status answer exceeded the size limit (S2)' };
  if (!isTransportFailure(observation)) return undefined;
  const what =
    observation.transport === 'response'
      ? `HTTP ${observation.httpStatus}`
      : `${observation.transport} (${observation.errorCategory ?? 'network error'})`;
  const spent = `${used.transportFailures} transport failures, budget ${record.budgets.maxTransportFailures} spent`;
  // H5, S5: the transport-failure budget.
  if (used.transportFailures >= record.budgets.maxTransportFailures)
    return { kind: 'escalate', reason: 'provider_failure', detail: `${what}${requestText}: ${spent} (S5)` };
  const count = `transport failure ${used.transportFailures} of ${record.budgets.maxTransportFailures}`;
  return { kind: 'wait', note: `${what}${requestText}: ${count}` };
}

/** The verdict on an HTTP status other than 2xx (H1, H3, H4), or undefined for a 2xx. */
function httpVerdict({ record, policy, observation, used, requestText }: ReadFacts): Verdict | undefined {
  const status = observation.httpStatus ?? 0;
  const job = record.jobId ?? 'unknown job';
  if (status === 401 || status === 403) {
    const detail = `HTTP ${status} on the status read of ${job}${requestText}; no retry with the same credential (H4)`;
    return { kind: 'escalate', reason: 'authorization_denied', detail };
  }
  if (status === 429) {
    if (used.consecutiveRateLimited >= record.budgets.maxRateLimited) {
      const detail = `${used.consecutiveRateLimited} HTTP 429 answers in a row (H1)`;
      return { kind: 'escalate', reason: 'rate_limited', detail };
    }
    return { kind: 'wait', note: `HTTP 429 (${used.consecutiveRateLimited} in a row)` };
  }
  if (status === 404) {
    const sinceAcceptMs =
      record.acceptedAtMs !== undefined ? observation.receivedAtMs - record.acceptedAtMs : Number.POSITIVE_INFINITY;
    const window = `the ${policy.notFoundWindowMs} ms consistency window`;
    if (sinceAcceptMs <= policy.notFoundWindowMs)
      return { kind: 'wait', note: `HTTP 404 ${sinceAcceptMs} ms after acceptance, inside ${window} (H3)` };
    const accepted = record.acceptedAtMs !== undefined ? new Date(record.acceptedAtMs).toISOString() : 'unknown';
    const at = new Date(observation.receivedAtMs).toISOString();
    const detail = `HTTP 404 for job ${job} at ${at}, accepted at ${accepted}, outside ${window}${requestText} (H3)`;
    return { kind: 'escalate', reason: 'provider_failure', detail };
  }
  if (status >= 400 && status < 500) {
    const refused = `the provider refused our request${providerErrorText(observation)}${requestText}`;
    return { kind: 'escalate', reason: 'request_rejected', detail: `HTTP ${status} on the status read: ${refused}` };
  }
  if (status < 200 || status >= 300)
    return {
      kind: 'escalate',
      reason: 'provider_failure',
      detail: `unexpected HTTP ${status} on the status read${requestText}`,
    };
  return undefined;
}

/** The verdict on a readable 2xx answer: its state category (P1, P6, P7, S2). */
function stateVerdict({ record, observation }: ReadFacts): Verdict {
  const state = observation.remoteState ?? '(none)';
  switch (observation.category) {
    case undefined:
    case 'unknown':
      return {
        kind: 'escalate',
        reason: 'unknown_state',
        detail: `state "${state}" is not in the provider's state table (P1, S2)`,
      };
    case 'success':
      if (!locatesResult(observation.resultReference))
        return {
          kind: 'escalate',
          reason: 'unknown_state',
          detail: `state "${state}" reports success without the required result reference: not ready (P7)`,
        };
      return { kind: 'collect' };
    case 'failure':
    case 'expired':
      return { kind: 'failed', detail: `provider reports "${state}"${providerErrorText(observation)}` };
    case 'cancelled':
      if (record.localState === 'cancelling') return { kind: 'cancelled', detail: `provider reports "${state}"` };
      if (record.cancel === null)
        return {
          kind: 'failed',
          detail: `provider_cancelled: the provider reports "${state}" and no cancel was requested here${providerErrorText(observation)}`,
        };
      return {
        kind: 'escalate',
        reason: 'provider_failure',
        detail: `provider reports "${state}" although no cancel was sent`,
      };
    case 'pending': {
      const expires = expiresAtMsOf(observation) ?? record.remote.jobExpiresAtMs;
      if (expires !== undefined && observation.receivedAtMs > expires) {
        return {
          kind: 'escalate',
          reason: 'unknown_state',
          detail: `state "${state}" after the job's own expiry ${new Date(expires).toISOString()} (P7)`,
        };
      }
      return { kind: 'wait' };
    }
  }
}

/** Classifies an observation into a verdict (H1-H5, P1, P6-P8, S2, S5), given the counters after it. */
export function classify(
  record: OperationRecord,
  policy: PollPolicy,
  observation: Observation,
  used: OperationRecord['used'],
): Verdict {
  const requestText =
    observation.providerRequestId !== undefined ? `, provider request ${observation.providerRequestId}` : '';
  const facts: ReadFacts = { record, policy, observation, used, requestText };
  const early = transportVerdict(facts) ?? httpVerdict(facts);
  if (early !== undefined) return early;
  if (observation.parseProblem !== undefined)
    return {
      kind: 'escalate',
      reason: 'provider_failure',
      detail: `unreadable status answer: ${observation.parseProblem.slice(0, 500)} (S2)`,
    };
  return stateVerdict(facts);
}
