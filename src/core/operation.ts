/**
 * The operation record (C1, U4, B1, P4, M2, M3, E2, A2): everything the workflow needs to decide the next
 * step, as zod schemas with inferred types, plus the start request a caller gives.
 *
 * Size: the record lives in Temporal history (workflow state, query answers) and is carried through
 * continue-as-new, so it must stay small and bounded. It holds only the latest facts, counters and bounded
 * tails of the journal (the last {@link TRANSITION_TAIL} transitions and {@link OBSERVATION_TAIL}
 * observations); the full append-only journal lives in the store, keyed by (operationId, sequence), and
 * `journal.nextSequence` is the next sequence number to assign. Times are epoch milliseconds.
 *
 * Local facts (our state, our intents, our counters) and remote facts (what the provider said) are kept in
 * separate places (M2): `localState`, `cancel`, `used` are ours; `remote` is the provider's.
 */
import { z } from 'zod';
import { type DeciderPolicyInForce } from './decider-policy';
import { openEscalationSchema } from './escalation';
import { startFingerprint } from './fingerprint';
import {
  actorSchema,
  localStateSchema,
  delaySourceSchema,
  transitionEntrySchema,
  observationEntrySchema,
  transportOutcomeSchema,
} from './journal';
import { MAX_URL_CHARS, createUrlsSchema, remoteStateCategorySchema, resultReferenceSchema } from './observation';
import { pollPolicySchema, type PollPolicyInput } from './policy';
import { lazySchema } from './lazy-schema';
import { MAX_VARIABLE_VALUE_CHARS, MAX_VARIABLES } from './operation-variables';
import { idSchema, validateStartRequest, type StartRequest, type StartRequestIssue } from './start-request';

export * from './start-request';

/** Transitions kept in the record; older ones are in the store. */
export const TRANSITION_TAIL = 20;
/** Observations kept in the record; older ones are in the store. */
export const OBSERVATION_TAIL = 10;
/** Job IDs kept (every one ever reported is kept, U3; more than this is itself an incident). */
export const MAX_JOB_IDS = 20;
/** Approvals kept in the record. */
export const APPROVAL_TAIL = 20;

/** A journal entry kept in the record's tail: the sequence and time it was appended, who appended it, and the body. */
const tailEntry = <T extends z.ZodTypeAny>(body: T) =>
  z.object({ sequence: z.number().int().positive(), atMs: z.number().int().nonnegative(), actor: actorSchema, body });

/** A transition kept in the record (M3). */
const recordedTransitionSchema = lazySchema(() => tailEntry(transitionEntrySchema));
/** A recorded transition. */
export type RecordedTransition = z.infer<typeof recordedTransitionSchema>;
/** An observation kept in the record (T3). */
const recordedObservationSchema = lazySchema(() => tailEntry(observationEntrySchema));
/** A recorded observation. */
export type RecordedObservation = z.infer<typeof recordedObservationSchema>;

/** The provider's facts, as last reported (M2). Never written from our own intentions. */
const remoteFactsSchema = lazySchema(() =>
  z.object({
    /** Every job ID the provider ever reported for this operation, first first (U3). */
    jobIds: z.array(z.string().min(1).max(500)).max(MAX_JOB_IDS),
    /** The poll URL from the provider's answer (C4, V1), whole; a pending answer naming a new one replaces it. */
    statusUrl: z.string().max(MAX_URL_CHARS).optional(),
    /** How answers at `statusUrl` are read (the adapter's reading), when not its default one (V1). */
    pollReading: z.string().max(40).optional(),
    /** What the create exchange named that later result sources need (V2). */
    createUrls: createUrlsSchema.optional(),
    /** The provider's last state, verbatim. */
    state: z.string().max(500).optional(),
    category: remoteStateCategorySchema.optional(),
    /** The provider's own timestamp for that state, as received. */
    providerTimestamp: z.string().max(100).optional(),
    /** When we received that state. */
    observedAtMs: z.number().int().nonnegative().optional(),
    /** The job's own expiry as the provider reported it, apart from our business deadline (U4, P7). */
    jobExpiresAtMs: z.number().int().optional(),
    /** Last reported progress in [0, 1]; for operators only, never completion (P8). */
    progress: z.number().min(0).max(1).optional(),
    /** The result reference from the success answer (R1). */
    resultReference: resultReferenceSchema.omit({ inline: true }).optional(),
    /** The provider's last error code and message, from a failed job or a refused request (S2, E2). */
    lastError: z.object({ code: z.string().max(200).optional(), message: z.string().max(2000).optional() }).optional(),
    /** The last HTTP exchange of any kind (E2). */
    lastHttp: z
      .object({
        transport: transportOutcomeSchema,
        httpStatus: z.number().int().min(100).max(599).optional(),
        atMs: z.number().int().nonnegative(),
        providerRequestId: z.string().max(500).optional(),
      })
      .optional(),
  }),
);
/** Remote facts. */
export type RemoteFacts = z.infer<typeof remoteFactsSchema>;

/** The budgets (B1): persisted, never reset; only a decision adds to them. */
const budgetsSchema = lazySchema(() =>
  z.object({
    maxStatusRequests: z.number().int().nonnegative(),
    maxTransportFailures: z.number().int().nonnegative(),
    maxRateLimited: z.number().int().nonnegative(),
  }),
);

/** The used counters (B1, B2, H1, H5, U1). Only ever incremented (consecutive counters reset on a non-429). */
const usedCountersSchema = lazySchema(() =>
  z.object({
    /** Status requests reserved (incremented BEFORE sending, B2) plus retries reported below the workflow. */
    statusRequests: z.number().int().nonnegative(),
    /** 5xx answers and network failures (H5, S5). */
    transportFailures: z.number().int().nonnegative(),
    /** Every 429 answer. */
    rateLimited: z.number().int().nonnegative(),
    /** 429 answers in a row; reset by any other answer (H1). */
    consecutiveRateLimited: z.number().int().nonnegative(),
    /** Create requests sent (U1, I3). */
    createAttempts: z.number().int().nonnegative(),
    /** The exponent of the local backoff: polls planned by backoff since the last state change (P2). */
    backoffAttempt: z.number().int().nonnegative(),
  }),
);

/** The poll schedule (P4): a restarted worker resumes from it. */
const scheduleSchema = lazySchema(() =>
  z.object({
    nextPollAtMs: z.number().int().nonnegative().optional(),
    delaySource: delaySourceSchema.optional(),
    /** Why the provider's last hint was rejected, when it was (P3). */
    hintRejected: z.string().max(2000).optional(),
    /** A status request reserved and not yet observed (B2); blocks a second reservation (P5, no bursts). */
    reservedAtMs: z.number().int().nonnegative().optional(),
  }),
);

/** An approval recorded against the operation (A2, T2). */
const approvalSchema = lazySchema(() =>
  z.object({
    atMs: z.number().int().nonnegative(),
    approvedBy: actorSchema,
    option: z.string().min(1).max(100),
    reason: z.string().min(1).max(2000),
    bounds: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
  }),
);
/** An approval. */
export type Approval = z.infer<typeof approvalSchema>;

/** Who started the operation, who authorised it, and every later approval (T2). */
const authorisationSchema = lazySchema(() =>
  z.object({
    startedBy: actorSchema,
    authorisedBy: actorSchema,
    approvals: z.array(approvalSchema).max(APPROVAL_TAIL),
  }),
);

/** The cancel intent, a local fact (X1, M2): recorded before the cancel request is sent. */
const cancelIntentSchema = lazySchema(() =>
  z.object({
    requestedBy: actorSchema,
    reason: z.string().min(1).max(2000),
    expectedEffect: z.string().min(1).max(2000),
    requestedAtMs: z.number().int().nonnegative(),
    /** When the provider answered the single cancel request (X1); absent until then. */
    sentAtMs: z.number().int().nonnegative().optional(),
  }),
);

/** The collected result, summarised (R1-R4); content is in artifact storage, never here. */
const resultSummarySchema = lazySchema(() =>
  z.object({
    artifactLocation: z.string().max(4000).optional(),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
    sizeBytes: z.number().int().nonnegative().optional(),
    validation: z.enum(['valid', 'invalid', 'not_checked']),
    problems: z.array(z.string().max(2000)).max(20).optional(),
    recordCount: z.number().int().nonnegative().optional(),
    failedItemCount: z.number().int().nonnegative().optional(),
    /** The first failed item references (the full list is in the artifact entry). */
    failedItems: z.array(z.string().max(500)).max(100).optional(),
    /** Set when a human accepted a result that failed validation (A1). */
    acceptedBy: actorSchema.optional(),
  }),
);
/** A result summary. */
export type ResultSummary = z.infer<typeof resultSummarySchema>;

/** The operation record. See the module comment for why it stays small. */
export const operationRecordSchema = lazySchema(() =>
  z.object({
    schemaVersion: z.literal(1),
    operationId: idSchema,
    provider: idSchema,
    clientReference: idSchema.optional(),
    requestFingerprint: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    /**
     * The operation variables (C5): as given until the adapter's declarations are read, then with its defaults
     * applied. In history and the store, so never a secret. Absent when there are none.
     */
    variables: z.record(z.string(), z.string().max(MAX_VARIABLE_VALUE_CHARS)).optional(),
    /** Why the operation was refused before any request was sent (C5): the stable code and every issue. */
    refusal: z
      .object({
        code: z.literal('ASYNCJOB_ERR_INVALID_VARIABLE'),
        issues: z
          .array(z.object({ path: z.string().max(100), message: z.string().max(2000) }))
          .min(1)
          .max(2 * MAX_VARIABLES),
      })
      .optional(),
    /** The idempotency token (I1): not a secret, but never the trace ID (I4). */
    idempotencyToken: z.string().min(22).max(200),
    traceId: z.string().min(1).max(200),
    createdAtMs: z.number().int().nonnegative(),
    /** The provider job this operation follows: set on acceptance or by an `adopt_job` decision (a local choice among `remote.jobIds`). */
    jobId: z.string().min(1).max(500).optional(),
    /** When the provider's acceptance was recorded (H3 counts its window from here). */
    acceptedAtMs: z.number().int().nonnegative().optional(),
    localState: localStateSchema,
    remote: remoteFactsSchema,
    deadlines: z.object({
      /** U4: getting a job ID. */
      createDeadlineMs: z.number().int().nonnegative(),
      /** U4: the business deadline for the result (apart from `remote.jobExpiresAtMs`). */
      resultDeadlineMs: z.number().int().nonnegative(),
      /** X3: set when a cancel is requested. */
      cancelDeadlineMs: z.number().int().nonnegative().optional(),
    }),
    policy: pollPolicySchema,
    budgets: budgetsSchema,
    used: usedCountersSchema,
    schedule: scheduleSchema,
    /**
     * How the next reconciliation call finds the job (U2, I3): `lookup` by the adapter's method, or `resend` the
     * create with the same token, chosen after a lookup found no job before the create deadline. Absent = lookup.
     */
    reconcileBy: z.enum(['lookup', 'resend']).optional(),
    escalation: openEscalationSchema.nullable(),
    authorisation: authorisationSchema,
    /** When the recent extension requests arrived (D4: at most so many within a window), oldest first. */
    extensionRequestsAtMs: z.array(z.number().int().nonnegative()).max(100).optional(),
    cancel: cancelIntentSchema.nullable(),
    result: resultSummarySchema.nullable(),
    journal: z.object({
      nextSequence: z.number().int().positive(),
      transitions: z.array(recordedTransitionSchema).max(TRANSITION_TAIL),
      observations: z.array(recordedObservationSchema).max(OBSERVATION_TAIL),
    }),
  }),
);
/** An operation record. */
export type OperationRecord = z.infer<typeof operationRecordSchema>;

/** Whether the provider accepted a job for this operation: known by its job ID, or by its poll URL alone (C2, V1). */
export function providerJobKnown(record: Pick<OperationRecord, 'jobId' | 'acceptedAtMs'>): boolean {
  return record.jobId !== undefined || record.acceptedAtMs !== undefined;
}

/** Appends `item` to a bounded tail, dropping the oldest. */
export function appendBounded<T>(tail: readonly T[], item: T, max: number): T[] {
  return lastOf([...tail, item], max);
}

/** The last `max` items (all of them when there are fewer): how every record tail is bounded. */
export function lastOf<T>(items: readonly T[], max: number): T[] {
  return items.slice(Math.max(0, items.length - max));
}

/** The result of {@link newOperationRecord}. */
export type NewOperationResult =
  | { kind: 'ok'; record: OperationRecord }
  | { kind: 'refused'; code: 'ASYNCJOB_ERR_INVALID_INPUT'; issues: StartRequestIssue[] };

/**
 * Builds the record of a new operation in `create_pending` from an unvalidated start request (C1). The first
 * journal entry (sequence 1) is the intent, built by {@link intentEntryOf}; the record holds the initial
 * transition (null -> create_pending) as sequence 2. Refuses, naming every bad field, a request that fails
 * {@link validateStartRequest}, a token of fewer than 128 bits or a trace ID that is the token (I4).
 * Pure: `nowMs`, `idempotencyToken` (from `newIdempotencyToken`) and `traceId` are given.
 */
export function newOperationRecord(input: {
  request: unknown;
  nowMs: number;
  idempotencyToken: string;
  traceId: string;
}): NewOperationResult {
  const checked = validateStartRequest(input.request, input.nowMs);
  const issues: StartRequestIssue[] = checked.kind === 'refused' ? [...checked.issues] : [];
  if (input.idempotencyToken.length < 22)
    issues.push({ path: 'idempotencyToken', message: 'must carry at least 128 bits (22 base64url characters)' });
  if (input.idempotencyToken === input.traceId)
    issues.push({ path: 'traceId', message: 'the trace ID is never the idempotency token (I4)' });
  if (input.traceId.length < 1 || input.traceId.length > 200)
    issues.push({ path: 'traceId', message: 'must be 1 to 200 characters' });
  if (checked.kind === 'refused' || issues.length > 0)
    return { kind: 'refused', code: 'ASYNCJOB_ERR_INVALID_INPUT', issues };
  const req = checked.request;
  const { createDeadlineMs, resultDeadlineMs } = checked.deadlines;
  const policy = pollPolicySchema.parse(req.policy ?? {});
  const record: OperationRecord = {
    schemaVersion: 1,
    operationId: req.operationId,
    provider: req.provider,
    ...(req.clientReference !== undefined ? { clientReference: req.clientReference } : {}),
    requestFingerprint: startFingerprint(req.payload, req.variables),
    ...(req.variables !== undefined && Object.keys(req.variables).length > 0 ? { variables: req.variables } : {}),
    idempotencyToken: input.idempotencyToken,
    traceId: input.traceId,
    createdAtMs: input.nowMs,
    localState: 'create_pending',
    remote: { jobIds: [] },
    deadlines: { createDeadlineMs, resultDeadlineMs },
    policy,
    budgets: {
      maxStatusRequests: policy.maxStatusRequests,
      maxTransportFailures: policy.maxTransportFailures,
      maxRateLimited: policy.maxRateLimited,
    },
    used: {
      statusRequests: 0,
      transportFailures: 0,
      rateLimited: 0,
      consecutiveRateLimited: 0,
      createAttempts: 0,
      backoffAttempt: 0,
    },
    schedule: {},
    escalation: null,
    authorisation: { startedBy: req.startedBy, authorisedBy: req.authorisedBy, approvals: [] },
    cancel: null,
    result: null,
    journal: {
      nextSequence: 3,
      transitions: [
        {
          sequence: 2,
          atMs: input.nowMs,
          actor: req.startedBy,
          body: { kind: 'transition', from: null, to: 'create_pending', cause: 'operation_started' },
        },
      ],
      observations: [],
    },
  };
  return { kind: 'ok', record };
}

/** What a start gives its operation's record: the request as given, its instant, and the token and trace it holds. */
export interface OperationStart {
  request: StartRequest;
  startedAtMs: number;
  idempotencyToken: string;
  traceId: string;
}

/**
 * The record a start makes under its provider's P2 tuning, which the request's own policy overrides field by field
 * (C1). The workflow makes it for its first copy, and the worker again once the provider's facts are read, where
 * the intent is recorded: both from the same start, so both make the same record.
 */
export function startRecord(start: OperationStart, providerPolicy?: PollPolicyInput): NewOperationResult {
  const given = start.request;
  const request = providerPolicy ? { ...given, policy: { ...providerPolicy, ...(given.policy ?? {}) } } : given;
  return newOperationRecord({
    request,
    nowMs: start.startedAtMs,
    idempotencyToken: start.idempotencyToken,
    traceId: start.traceId,
  });
}

/** The intent journal entry (sequence 1) of a new record (C1): written durably before create is sent. */
export function intentEntryOf(
  record: OperationRecord,
  idempotencyTokenDigest?: string,
  deciderPolicy?: DeciderPolicyInForce,
) {
  return {
    sequence: 1,
    atMs: record.createdAtMs,
    actor: record.authorisation.startedBy,
    body: {
      kind: 'intent' as const,
      provider: record.provider,
      requestFingerprint: record.requestFingerprint,
      ...(idempotencyTokenDigest !== undefined ? { idempotencyTokenDigest } : {}),
      traceId: record.traceId,
      authorisedBy: record.authorisation.authorisedBy,
      startedBy: record.authorisation.startedBy,
      createDeadlineAt: new Date(record.deadlines.createDeadlineMs).toISOString(),
      resultDeadlineAt: new Date(record.deadlines.resultDeadlineMs).toISOString(),
      budgets: { ...record.budgets },
      ...(deciderPolicy !== undefined ? { deciderPolicy } : {}),
    },
  };
}
