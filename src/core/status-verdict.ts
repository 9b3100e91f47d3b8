/**
 * The verdict on one status answer (H1-H5, P1, P6-P8, S2, S5): wait, collect, failed, cancelled, or an
 * escalation with its reason and a detail that names the provider's own error. Pure; `planAfterObservation` acts
 * on it.
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

/** The provider's error code and message for a detail line, e.g. ` (quota_exceeded: the monthly quota is spent)`. */
export function providerErrorText(o: Observation): string {
  const error = o.providerError;
  if (error === undefined) return '';
  const parts = [error.code, error.message].filter((p): p is string => p !== undefined);
  return parts.length === 0 ? '' : ` (${parts.join(': ').slice(0, 500)})`;
}

/** Classifies an observation into a verdict (H1-H5, P1, P6-P8, S2, S5), given the counters after it. */
export function classify(
  record: OperationRecord,
  policy: PollPolicy,
  o: Observation,
  used: OperationRecord['used'],
): Verdict {
  const job = record.jobId ?? 'unknown job';
  const reqId = o.providerRequestId !== undefined ? `, provider request ${o.providerRequestId}` : '';
  const transportFailure =
    o.transport === 'not_sent' ||
    o.transport === 'ambiguous' ||
    (o.transport === 'response' && o.httpStatus !== undefined && o.httpStatus >= 500);
  if (o.transport === 'refused')
    return {
      kind: 'escalate',
      reason: 'provider_failure',
      detail: `the request was refused before sending (${o.errorCategory ?? 'refused'})`,
    };
  if (o.transport === 'body_too_large')
    return { kind: 'escalate', reason: 'provider_failure', detail: 'the status answer exceeded the size limit (S2)' };
  if (transportFailure) {
    const what =
      o.transport === 'response' ? `HTTP ${o.httpStatus}` : `${o.transport} (${o.errorCategory ?? 'network error'})`;
    // H5, S5: the transport-failure budget.
    if (used.transportFailures >= record.budgets.maxTransportFailures) {
      return {
        kind: 'escalate',
        reason: 'provider_failure',
        detail: `${what}${reqId}: ${used.transportFailures} transport failures, budget ${record.budgets.maxTransportFailures} spent (S5)`,
      };
    }
    return {
      kind: 'wait',
      note: `${what}${reqId}: transport failure ${used.transportFailures} of ${record.budgets.maxTransportFailures}`,
    };
  }
  const status = o.httpStatus ?? 0;
  if (status === 401 || status === 403) {
    return {
      kind: 'escalate',
      reason: 'authorization_denied',
      detail: `HTTP ${status} on the status read of ${job}${reqId}; no retry with the same credential (H4)`,
    };
  }
  if (status === 429) {
    if (used.consecutiveRateLimited >= record.budgets.maxRateLimited) {
      return {
        kind: 'escalate',
        reason: 'rate_limited',
        detail: `${used.consecutiveRateLimited} HTTP 429 answers in a row (H1)`,
      };
    }
    return { kind: 'wait', note: `HTTP 429 (${used.consecutiveRateLimited} in a row)` };
  }
  if (status === 404) {
    const sinceAcceptMs =
      record.acceptedAtMs !== undefined ? o.receivedAtMs - record.acceptedAtMs : Number.POSITIVE_INFINITY;
    if (sinceAcceptMs <= policy.notFoundWindowMs)
      return {
        kind: 'wait',
        note: `HTTP 404 ${sinceAcceptMs} ms after acceptance, inside the ${policy.notFoundWindowMs} ms consistency window (H3)`,
      };
    const accepted = record.acceptedAtMs !== undefined ? new Date(record.acceptedAtMs).toISOString() : 'unknown';
    return {
      kind: 'escalate',
      reason: 'provider_failure',
      detail: `HTTP 404 for job ${job} at ${new Date(o.receivedAtMs).toISOString()}, accepted at ${accepted}, outside the ${policy.notFoundWindowMs} ms consistency window${reqId} (H3)`,
    };
  }
  if (status >= 400 && status < 500) {
    return {
      kind: 'escalate',
      reason: 'request_rejected',
      detail: `HTTP ${status} on the status read: the provider refused our request${providerErrorText(o)}${reqId}`,
    };
  }
  if (status < 200 || status >= 300)
    return {
      kind: 'escalate',
      reason: 'provider_failure',
      detail: `unexpected HTTP ${status} on the status read${reqId}`,
    };
  if (o.parseProblem !== undefined)
    return {
      kind: 'escalate',
      reason: 'provider_failure',
      detail: `unreadable status answer: ${o.parseProblem.slice(0, 500)} (S2)`,
    };
  const state = o.remoteState ?? '(none)';
  switch (o.category) {
    case undefined:
    case 'unknown':
      return {
        kind: 'escalate',
        reason: 'unknown_state',
        detail: `state "${state}" is not in the provider's state table (P1, S2)`,
      };
    case 'success':
      if (!locatesResult(o.resultReference))
        return {
          kind: 'escalate',
          reason: 'unknown_state',
          detail: `state "${state}" reports success without the required result reference: not ready (P7)`,
        };
      return { kind: 'collect' };
    case 'failure':
    case 'expired':
      return { kind: 'failed', detail: `provider reports "${state}"${providerErrorText(o)}` };
    case 'cancelled':
      if (record.localState === 'cancelling') return { kind: 'cancelled', detail: `provider reports "${state}"` };
      if (record.cancel === null)
        return {
          kind: 'failed',
          detail: `provider_cancelled: the provider reports "${state}" and no cancel was requested here${providerErrorText(o)}`,
        };
      return {
        kind: 'escalate',
        reason: 'provider_failure',
        detail: `provider reports "${state}" although no cancel was sent`,
      };
    case 'pending': {
      const expires = expiresAtMsOf(o) ?? record.remote.jobExpiresAtMs;
      if (expires !== undefined && o.receivedAtMs > expires) {
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
