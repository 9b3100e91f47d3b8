/**
 * Builds the open escalation for a record (E1, E2, E3): the message facts from the record, the options the reason
 * allows that can act on the adapter's capabilities and the record's facts (`option-executability.ts`), bounded by
 * the policy, and the decision deadline. Pure.
 */
import { type AdapterCapabilities, type OpenEscalation, NO_CAPABILITIES, optionsFor } from './escalation';
import { type EscalationReason, type LocalState } from './journal';
import { type OperationRecord } from './operation';
import { optionFacts } from './option-executability';

/**
 * Returns the escalation to raise for `record` at `nowMs` with `reason` and a one-sentence `detail`.
 * `raisedFrom` defaults to the record's state (pass the state a preceding event leads to, e.g.
 * `result_timed_out`). Every job ID ever reported is listed (U3).
 */
export function raiseEscalation(
  record: OperationRecord,
  reason: EscalationReason,
  detail: string,
  nowMs: number,
  capabilities: AdapterCapabilities = NO_CAPABILITIES,
  raisedFrom: LocalState = record.localState,
): OpenEscalation {
  const facts = optionFacts(record, capabilities, raisedFrom);
  const jobIds = facts.jobIds;
  const options = optionsFor(reason, facts, {
    extensionMs: record.policy.extensionMs,
    extensionStatusRequests: record.policy.extensionStatusRequests,
    maxTransportFailures: record.policy.maxTransportFailures,
    maxRateLimited: record.policy.maxRateLimited,
  });
  const last = record.remote.lastHttp;
  return {
    reason,
    message: {
      operationId: record.operationId,
      provider: record.provider,
      providerJobIds: [...jobIds],
      traceId: record.traceId,
      localState: raisedFrom,
      ...(record.remote.state !== undefined ? { lastRemoteState: record.remote.state } : {}),
      elapsedMs: Math.max(0, nowMs - record.createdAtMs),
      statusRequestsUsed: record.used.statusRequests,
      statusRequestsAllowed: record.budgets.maxStatusRequests,
      ...(last !== undefined
        ? {
            lastHttp: {
              transport: last.transport,
              atMs: last.atMs,
              ...(last.httpStatus !== undefined ? { httpStatus: last.httpStatus } : {}),
            },
          }
        : {}),
      reason,
      detail: detail.slice(0, 2000),
    },
    options,
    raisedAtMs: nowMs,
    decisionDeadlineMs: nowMs + record.policy.decisionDeadlineMs,
    raisedFrom,
  };
}
