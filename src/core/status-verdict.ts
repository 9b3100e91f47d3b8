/**
 * The verdict on one status answer (H1-H5, P1, P6-P8, S2, S5): wait, collect, failed, cancelled, or an
 * escalation with its reason and a detail that names the provider's own error. What a non-readable answer means
 * comes from the answer policy's status row (`answer-policy.ts`). Pure; `planAfterObservation` acts on it.
 */
import { answerText, reactionTo, retryBudgetSpent } from './answer-policy';
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
function providerErrorText(observation: Observation): string {
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

/** The verdict on any answer but a readable one, by the answer policy's status row (H1, H3-H5, S2, S5). */
function policyVerdict({ record, policy, observation, used, requestText }: ReadFacts): Verdict | undefined {
  const reaction = reactionTo('status', observation.signal);
  const job = record.jobId ?? 'unknown job';
  const what = answerText(observation);
  switch (reaction.kind) {
    case 'read':
      return undefined;
    case 'retry': {
      const spent = retryBudgetSpent(reaction, used, record.budgets);
      if (spent !== undefined)
        return { kind: 'escalate', reason: spent.reason, detail: `${what}${requestText}: ${spent.detail}` };
      const count =
        reaction.budget === 'rate_limit'
          ? `${used.consecutiveRateLimited} in a row`
          : `transport failure ${used.transportFailures} of ${record.budgets.maxTransportFailures}`;
      return { kind: 'wait', note: `${what}${requestText}: ${count}` };
    }
    case 'not_found_window': {
      const sinceAcceptMs =
        record.acceptedAtMs !== undefined ? observation.receivedAtMs - record.acceptedAtMs : Number.POSITIVE_INFINITY;
      const window = `the ${policy.notFoundWindowMs} ms consistency window`;
      if (sinceAcceptMs <= policy.notFoundWindowMs)
        return { kind: 'wait', note: `${what} ${sinceAcceptMs} ms after acceptance, inside ${window} (H3)` };
      const accepted = record.acceptedAtMs !== undefined ? new Date(record.acceptedAtMs).toISOString() : 'unknown';
      const at = new Date(observation.receivedAtMs).toISOString();
      const detail = `${what} for job ${job} at ${at}, accepted at ${accepted}, outside ${window}${requestText} (H3)`;
      return { kind: 'escalate', reason: 'provider_failure', detail };
    }
    case 'escalate':
      return { kind: 'escalate', reason: reaction.reason, detail: escalationDetail(observation, job, requestText) };
    case 'reconcile':
    case 'no_job':
      return { kind: 'escalate', reason: 'provider_failure', detail: `${what} on the status read${requestText}` };
  }
}

/** The detail of a status answer that stops automation: what was answered and what it means. */
function escalationDetail(observation: Observation, job: string, requestText: string): string {
  const what = answerText(observation);
  switch (observation.signal) {
    case 'refused':
    case 'no_credential':
      return `the status ${refusalText(observation)}`;
    case 'too_large':
      return 'the status answer exceeded the size limit (S2)';
    case 'unreadable':
      return `unreadable status answer: ${(observation.parseProblem ?? 'no usable body').slice(0, 500)} (S2)`;
    case 'auth_denied':
      return `${what} on the status read of ${job}${requestText}; no retry with the same credential (H4)`;
    default: {
      const refused = `the provider refused our request${providerErrorText(observation)}${requestText}`;
      return `${what} on the status read: ${refused}`;
    }
  }
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

/** Classifies a status answer into a verdict (H1-H5, P1, P6-P8, S2, S5), given the counters after it. */
export function classify(
  record: OperationRecord,
  policy: PollPolicy,
  observation: Observation,
  used: OperationRecord['used'],
): Verdict {
  const requestText =
    observation.providerRequestId !== undefined ? `, provider request ${observation.providerRequestId}` : '';
  const facts: ReadFacts = { record, policy, observation, used, requestText };
  const early = policyVerdict(facts);
  if (early !== undefined) return early;
  return stateVerdict(facts);
}
