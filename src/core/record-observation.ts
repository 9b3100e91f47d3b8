/**
 * Appends an observation to the record (T3, M2, M3): the bounded tail gets the redacted journal entry with the
 * next sequence number, and the provider's facts (`record.remote`) are updated from what it said. Nothing
 * here judges the observation; the wait planner and the transition rules do. Pure.
 */
import { reactionTo } from './answer-policy';
import { type OperationRecord, type RemoteFacts, OBSERVATION_TAIL, MAX_JOB_IDS, appendBounded } from './operation';
import { type Observation } from './observation';
import { type DelaySource } from './journal';

/** What the controller decided after the observation, recorded with it (T3). */
export interface ControllerDecision {
  decision?: string;
  nextPollAtMs?: number;
  delaySource?: DelaySource;
  hintRejected?: string;
  note?: string;
}

/**
 * Returns the provider's facts updated from one observation (M2): job IDs accumulated (never replaced, U3),
 * the status URL kept from the first answer naming it, the last HTTP exchange, and, from a 2xx status or
 * create answer with a category, the state, its timestamp, progress (P8), the job's own expiry and the result
 * reference. Webhook observations never update the remote state: a final status read does (W1).
 */
export function applyRemoteFacts(current: RemoteFacts, observation: Observation): RemoteFacts {
  const remote = { ...current };
  if (observation.remoteJobId !== undefined && !remote.jobIds.includes(observation.remoteJobId)) {
    remote.jobIds = appendBounded(remote.jobIds, observation.remoteJobId, MAX_JOB_IDS);
  }
  if (observation.statusUrl !== undefined && remote.statusUrl === undefined) {
    remote.statusUrl = observation.statusUrl;
    if (observation.pollReading !== undefined) remote.pollReading = observation.pollReading;
  } else if (
    observation.statusUrl !== undefined &&
    observation.action === 'status' &&
    observation.category === 'pending'
  ) {
    // V1: a pending answer named a new poll URL where the current one came from (checked by the adapter).
    remote.statusUrl = observation.statusUrl;
  }
  if (observation.createUrls !== undefined && remote.createUrls === undefined)
    remote.createUrls = observation.createUrls;
  if (observation.providerError !== undefined) remote.lastError = observation.providerError;
  if (observation.transport !== 'refused') {
    remote.lastHttp = {
      transport: observation.transport,
      atMs: observation.receivedAtMs,
      ...(observation.httpStatus !== undefined ? { httpStatus: observation.httpStatus } : {}),
      ...(observation.providerRequestId !== undefined ? { providerRequestId: observation.providerRequestId } : {}),
      ...(observation.credentialRenewed !== undefined ? { credentialRenewed: observation.credentialRenewed } : {}),
    };
  }
  const answered =
    observation.action !== 'webhook' && reactionTo(observation.action, observation.signal).kind === 'read';
  // A cancel answer that states the job's view (a 409 with its final state) is the provider's word too (M2).
  if (
    answered &&
    observation.category !== undefined &&
    (observation.action === 'status' || observation.action === 'create' || observation.action === 'cancel')
  ) {
    remote.category = observation.category;
    remote.observedAtMs = observation.receivedAtMs;
    if (observation.remoteState !== undefined) remote.state = observation.remoteState;
    else delete remote.state;
    if (observation.providerTimestamp !== undefined) remote.providerTimestamp = observation.providerTimestamp;
    if (observation.progress !== undefined) remote.progress = observation.progress;
    const expires = expiresAtMsOf(observation);
    if (expires !== undefined) remote.jobExpiresAtMs = expires;
    if (observation.resultReference !== undefined) {
      const { inline: _inline, ...reference } = observation.resultReference;
      remote.resultReference = reference;
    }
  }
  return remote;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function parseInstantMs(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The provider's job expiry from an observation, epoch ms, when it is a valid ISO-8601 instant. */
export function expiresAtMsOf(observation: Observation): number | undefined {
  return parseInstantMs(observation.expiresAt);
}

/**
 * Returns the record with `observation` appended at `record.journal.nextSequence` and the remote facts
 * updated (job IDs are accumulated, never replaced, U3), plus the sequence used. Headers other than
 * Retry-After are not copied: the adapter already keeps what matters in typed fields, and nothing secret
 * can leak this way (T4). Webhook observations never update the remote state: a final status read does (W1).
 */
export function recordObservation(
  record: OperationRecord,
  observation: Observation,
  nowMs: number,
  actor: string,
  decision: ControllerDecision = {},
): { record: OperationRecord; sequence: number } {
  const sequence = record.journal.nextSequence;
  const body = {
    kind: 'observation' as const,
    action: observation.action,
    transport: observation.transport,
    ...(observation.httpStatus !== undefined ? { httpStatus: observation.httpStatus } : {}),
    ...(observation.retryAfter !== undefined ? { headers: { 'retry-after': observation.retryAfter } } : {}),
    ...(observation.providerRequestId !== undefined ? { providerRequestId: observation.providerRequestId } : {}),
    ...(observation.credentialRenewed !== undefined ? { credentialRenewed: observation.credentialRenewed } : {}),
    ...(observation.errorCategory !== undefined ? { errorCategory: observation.errorCategory } : {}),
    ...(observation.durationMs !== undefined ? { durationMs: observation.durationMs } : {}),
    ...(observation.remoteJobId !== undefined ? { remoteJobId: observation.remoteJobId } : {}),
    ...(observation.remoteState !== undefined ? { remoteState: observation.remoteState } : {}),
    ...(parseInstantMs(observation.providerTimestamp) !== undefined
      ? { providerTimestamp: iso(parseInstantMs(observation.providerTimestamp)!) }
      : {}),
    ...(observation.progress !== undefined ? { progress: observation.progress } : {}),
    ...(observation.providerError !== undefined ? { providerError: observation.providerError } : {}),
    ...(observation.statusUrl !== undefined ? { pollUrl: observation.statusUrl } : {}),
    ...(decision.decision !== undefined ? { decision: decision.decision } : {}),
    ...(decision.nextPollAtMs !== undefined ? { nextPollAt: iso(decision.nextPollAtMs) } : {}),
    ...(decision.delaySource !== undefined ? { delaySource: decision.delaySource } : {}),
    ...(decision.hintRejected !== undefined ? { hintRejected: decision.hintRejected } : {}),
    statusRequestsUsed: record.used.statusRequests,
    statusRequestsAllowed: record.budgets.maxStatusRequests,
    resultDeadlineAt: iso(record.deadlines.resultDeadlineMs),
    ...((decision.note ?? observation.note) !== undefined ? { note: decision.note ?? observation.note } : {}),
  };
  const remote = applyRemoteFacts(record.remote, observation);
  return {
    record: {
      ...record,
      remote,
      journal: {
        ...record.journal,
        nextSequence: sequence + 1,
        observations: appendBounded(
          record.journal.observations,
          { sequence, atMs: nowMs, actor, body },
          OBSERVATION_TAIL,
        ),
      },
    },
    sequence,
  };
}
