/**
 * The vocabulary of an operation's append-only journal (M3, T2-T4): the local states, delay sources and
 * escalation reasons as closed unions, and the entries appended to the record (intent, transition,
 * observation, escalation, escalation joined, decision, artifact). Shared by the workflow, the activities and the store, which
 * chains every entry of an operation by hash in one sequence (`sequence` 1, 2, 3, ... assigned by the workflow).
 */
import { z } from 'zod';
import { deciderPolicyInForceSchema } from './decider-policy';
import { decisionSignatureSchema } from './decision-signature';
import { lazySchema } from './lazy-schema';

/** An ISO-8601 instant in UTC with milliseconds (`2026-11-29T10:20:31.000Z`). */
export const instantSchema = lazySchema(() => z.iso.datetime({ offset: false }));

/** The local states of the state machine in docs/rules.md (M). Ours, not the provider's (M2). */
export const localStateSchema = lazySchema(() =>
  z.enum([
    'create_pending',
    'create_unknown',
    'reconciliation',
    'accepted',
    'observing',
    'cancel_requested',
    'cancelling',
    'result_collecting',
    'succeeded',
    'failed',
    'cancelled',
    'cancellation_unconfirmed',
    'result_timed_out',
    'result_unavailable',
    'result_validation_failed',
    'escalated',
    'closed',
  ]),
);
/** A local state. */
export type LocalState = z.infer<typeof localStateSchema>;

/** Where the next poll time came from (P4). */
export const delaySourceSchema = lazySchema(() =>
  z.enum([
    'provider_retry_after',
    'provider_poll_hint',
    'local_backoff',
    'manual_extension',
    'webhook_hint',
    'deadline',
  ]),
);
/** A delay source. */
export type DelaySource = z.infer<typeof delaySourceSchema>;

/** Machine-readable escalation reasons (E1); each determines the allowed next actions. */
export const escalationReasonSchema = lazySchema(() =>
  z.enum([
    'deadline_exceeded',
    'request_budget_exhausted',
    'rate_limited',
    'unknown_state',
    'authorization_denied',
    'provider_failure',
    'create_unknown',
    'job_id_conflict',
    'cancellation_unconfirmed',
    'result_validation_failed',
    /** The provider refused our own request as malformed (a 4xx such as 400 or 422, often naming what is missing). */
    'request_rejected',
    /** A caller without approval authority (an agent, G2) asks for more time or more checks; a human decides. */
    'extension_requested',
  ]),
);
/** An escalation reason. */
export type EscalationReason = z.infer<typeof escalationReasonSchema>;

/** The outside action an observation belongs to. */
export const actionSchema = lazySchema(() => z.enum(['create', 'reconcile', 'status', 'cancel', 'collect', 'webhook']));
/** An outside action. */
export type Action = z.infer<typeof actionSchema>;

/** Who did something: a process (`workflow`, `worker:<host>`), a human (`alice@example.com`) or a provider. */
export const actorSchema = lazySchema(() => z.string().min(1).max(200));

const shortText = z.string().max(2000);

/**
 * How an HTTP exchange ended, as data (never a thrown string): a `response` with a status code arrived; the
 * request was `not_sent` (connect refused, DNS, TLS: the provider cannot have acted on it); it was sent and the
 * connection broke or timed out before a full answer, `ambiguous` (the provider may have acted, U1); the answer was
 * `body_too_large` and cut off; or it was `refused` by us before sending (another origin, missing credential).
 */
export const transportOutcomeSchema = lazySchema(() =>
  z.enum(['response', 'not_sent', 'ambiguous', 'body_too_large', 'refused']),
);
/** A transport outcome. */
export type TransportOutcome = z.infer<typeof transportOutcomeSchema>;

/** The first answer of a request resent once after its credential was renewed (T4). */
export const credentialRenewedSchema = lazySchema(() =>
  z.object({
    httpStatus: z.number().int().min(100).max(599),
    providerRequestId: z.string().max(500).optional(),
  }),
);

/** The first entry of every operation (C1): written before the create request is sent. */
export const intentEntrySchema = lazySchema(() =>
  z.object({
    kind: z.literal('intent'),
    provider: z.string().min(1),
    requestFingerprint: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    idempotencyTokenDigest: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/)
      .optional(),
    traceId: z.string().min(1),
    authorisedBy: actorSchema,
    startedBy: actorSchema,
    createDeadlineAt: instantSchema,
    resultDeadlineAt: instantSchema,
    /** The budgets the operation starts with (B1); only a decision adds to them (see the decision's `effects`). */
    budgets: startBudgetsSchema.optional(),
    /** The decider policy the operation started under, whole, so every decision is checked against it again (D2). */
    deciderPolicy: deciderPolicyInForceSchema.optional(),
  }),
);

/** The budgets an intent entry states (B1). */
const startBudgetsSchema = lazySchema(() =>
  z
    .object({
      maxStatusRequests: z.number().int().nonnegative(),
      maxTransportFailures: z.number().int().nonnegative(),
      maxRateLimited: z.number().int().nonnegative(),
    })
    .strict(),
);

/** A local state change with its cause (M3). */
export const transitionEntrySchema = lazySchema(() =>
  z.object({
    kind: z.literal('transition'),
    from: localStateSchema.nullable(),
    to: localStateSchema,
    /** The event that caused it, e.g. `status_observed`, `cancel_requested`. */
    cause: z.string().min(1).max(100),
    /** The journal sequence of the observation that is the evidence, if any. */
    evidenceSequence: z.number().int().positive().optional(),
    remoteJobId: z.string().max(500).optional(),
    reason: shortText.optional(),
  }),
);

/** One outside exchange (an HTTP call or a webhook) and the controller's decision after it (T3). Redacted. */
export const observationEntrySchema = lazySchema(() =>
  z.object({
    kind: z.literal('observation'),
    action: actionSchema,
    /** Method and URL with secrets removed. */
    request: z.object({ method: z.string(), url: z.string().max(8192) }).optional(),
    transport: transportOutcomeSchema,
    httpStatus: z.number().int().min(100).max(599).optional(),
    /** Headers that matter (Retry-After, Location, request IDs), redacted. */
    headers: z.record(z.string(), z.string().max(8192)).optional(),
    providerRequestId: z.string().max(500).optional(),
    /** The request was resent once after the provider refused its credential (T4): that first answer. */
    credentialRenewed: credentialRenewedSchema.optional(),
    errorCategory: z.string().max(100).optional(),
    durationMs: z.number().nonnegative().optional(),
    remoteJobId: z.string().max(500).optional(),
    /** The provider's own word for the state, verbatim (M2). */
    remoteState: z.string().max(500).optional(),
    providerTimestamp: instantSchema.optional(),
    progress: z.number().min(0).max(1).optional(),
    /** The provider's error code and message, verbatim and short (S2, H4, H5). */
    providerError: z
      .object({ code: z.string().max(200).optional(), message: z.string().max(2000).optional() })
      .optional(),
    /** The poll URL the answer named (V1): the first one, or a new one a pending answer moved polling to. */
    pollUrl: z.string().max(8192).optional(),
    /** What the controller decided: `wait`, `collect`, `stop`, `escalate`... */
    decision: z.string().max(100).optional(),
    nextPollAt: instantSchema.optional(),
    delaySource: delaySourceSchema.optional(),
    /** Why a provider hint was rejected, when it was. */
    hintRejected: shortText.optional(),
    statusRequestsUsed: z.number().int().nonnegative().optional(),
    statusRequestsAllowed: z.number().int().nonnegative().optional(),
    resultDeadlineAt: instantSchema.optional(),
    note: shortText.optional(),
  }),
);

/** An escalation raised (E1, E2). */
const escalationEntrySchema = lazySchema(() =>
  z.object({
    kind: z.literal('escalation'),
    reason: escalationReasonSchema,
    message: z.string().max(8000),
    options: z.array(z.string().min(1).max(100)).min(1),
    /** Who asked for it (an extension request, G2): the audit holds them to never approving it (D1). */
    requestedBy: actorSchema.optional(),
  }),
);

/**
 * A requester who joined the open escalation (D4): their extension request was added to it instead of opening
 * another, and they may not approve it either (G2), which the audit checks from this entry.
 */
const escalationJoinedEntrySchema = lazySchema(() =>
  z.object({
    kind: z.literal('escalation_joined'),
    /** The escalation joined (its ID, the journal sequence of its escalation entry). */
    escalation: z.number().int().positive().optional(),
    requestedBy: actorSchema,
    /** What they asked for and why, as the escalation's requester's request is rendered. */
    request: z.string().min(1).max(2000),
  }),
);

/**
 * How a decision reached the workflow (D5): `cli` (`asyncjob decide`), `api` (the `decideOperation` update from
 * the client library or any Temporal client), `mcp`, or `web-ui` (the `decide` signal: the Web UI's Send a Signal
 * form or any client sending that signal). `cli`, `api` and `mcp` are as the tool declares itself.
 */
const decisionRouteSchema = lazySchema(() => z.enum(['cli', 'api', 'mcp', 'web-ui']));
/** A decision route. */
export type DecisionRoute = z.infer<typeof decisionRouteSchema>;

/** A human decision answering an escalation (A2). */
const decisionEntrySchema = lazySchema(() =>
  z.object({
    kind: z.literal('decision'),
    decision: z.string().min(1).max(100),
    approvedBy: actorSchema,
    reason: z.string().min(1).max(2000),
    /** The new bounds granted, e.g. `{ extendMs: 900000, extraStatusRequests: 4 }`. */
    bounds: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).optional(),
    accepted: z.boolean(),
    rejectionReason: shortText.optional(),
    /**
     * What an accepted decision changed, at the new values (A2, T5): the deadlines it moved and the budgets it
     * raised, so the audit replays the record's bounds from the journal. `{}` when it changed none of them.
     */
    effects: decisionEffectsSchema.optional(),
    /** The escalation it answered (its ID, the journal sequence of its escalation entry). */
    escalation: z.number().int().positive().optional(),
    /** How it arrived (D5). */
    route: decisionRouteSchema.optional(),
    /** The decider policy it was checked against and, when accepted, the rule that allowed it (D2, D5). */
    policy: z
      .object({ digest: z.string().max(100), rule: z.string().max(100).optional() })
      .strict()
      .optional(),
    /** The signature it carried (verified when accepted; journalled as sent when refused, D3). */
    signature: decisionSignatureSchema.optional(),
  }),
);

/** The bounds a decision may change, each at its value after the decision (see the decision entry's `effects`). */
const decisionEffectsSchema = lazySchema(() =>
  z
    .object({
      createDeadlineAt: instantSchema.optional(),
      resultDeadlineAt: instantSchema.optional(),
      cancelDeadlineAt: instantSchema.optional(),
      maxStatusRequests: z.number().int().nonnegative().optional(),
      maxTransportFailures: z.number().int().nonnegative().optional(),
      maxRateLimited: z.number().int().nonnegative().optional(),
    })
    .strict(),
);
/** The bounds a decision changed. */
export type DecisionEffects = z.infer<typeof decisionEffectsSchema>;

/** A collected result stored outside history (R1-R4). */
const artifactEntrySchema = lazySchema(() =>
  z.object({
    kind: z.literal('artifact'),
    location: z.string().max(4000),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    sizeBytes: z.number().int().nonnegative(),
    contentType: z.string().max(200).optional(),
    recordCount: z.number().int().nonnegative().optional(),
    failedItems: z.array(z.string().max(500)).max(10_000).optional(),
    validation: z.enum(['valid', 'invalid', 'not_checked']),
    validationProblems: z.array(shortText).max(100).optional(),
  }),
);

/** Any journal entry body. */
export const journalEntryBodySchema = lazySchema(() =>
  z.discriminatedUnion('kind', [
    intentEntrySchema,
    transitionEntrySchema,
    observationEntrySchema,
    escalationEntrySchema,
    escalationJoinedEntrySchema,
    decisionEntrySchema,
    artifactEntrySchema,
  ]),
);
/** A journal entry body. */
export type JournalEntryBody = z.infer<typeof journalEntryBodySchema>;

/** A journal entry as appended: keyed by (operationId, sequence); `at` and `actor` say when and who. */
export const journalEntrySchema = lazySchema(() =>
  z.object({
    operationId: z.string().min(1).max(200),
    sequence: z.number().int().positive(),
    at: instantSchema,
    actor: actorSchema,
    body: journalEntryBodySchema,
  }),
);
/** A journal entry. */
export type JournalEntry = z.infer<typeof journalEntrySchema>;
