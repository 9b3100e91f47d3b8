/**
 * An observation: what one outside call saw, classified by the provider adapter but not yet judged. This is
 * the seam between the adapters (which produce it from an HTTP exchange) and the wait planner and transition
 * rules in `src/core` (which decide what it means). It crosses the activity -> workflow boundary, so it is
 * zod-validated there. Raw hint values are kept as received: the planner validates them (P3) and records why
 * one was rejected.
 */
import { z } from 'zod';
import { answerSignalSchema } from './answer-policy';
import { actionSchema, credentialRenewedSchema, transportOutcomeSchema } from './journal';
import { lazySchema } from './lazy-schema';

/** The longest URL recorded or followed; a longer one is refused whole, never shortened (V1). */
export const MAX_URL_CHARS = 8192;

/** The P1 category of a provider state, from the adapter's state table; anything not in the table is `unknown`. */
export const remoteStateCategorySchema = lazySchema(() =>
  z.enum(['pending', 'success', 'failure', 'cancelled', 'expired', 'unknown']),
);
/** A remote state category. */
export type RemoteStateCategory = z.infer<typeof remoteStateCategorySchema>;

/** Where and how to fetch a finished job's result, with the integrity data the provider offers (R1, R2). */
export const resultReferenceSchema = lazySchema(() =>
  z.object({
    /** Absolute URL (checked to be on the provider's origin by the HTTP layer), whole: never shortened. */
    url: z.string().min(1).max(MAX_URL_CHARS).optional(),
    sha256: z.string().max(200).optional(),
    sizeBytes: z.number().int().nonnegative().optional(),
    recordCount: z.number().int().nonnegative().optional(),
    contentType: z.string().max(200).optional(),
    /**
     * A result given inline (a synchronous success, C3; an answer that is the result, V2). Transient: the activity
     * that received it stages it in artifact storage and replaces it with `stagedArtifact` before it is recorded.
     */
    inline: z.unknown().optional(),
    /** Where an inline result was staged (artifact storage); collection validates it from there (R1, V2). */
    stagedArtifact: z.string().min(1).max(4000).optional(),
    /** The provider's convention has no result for this job (`result.required: false`): nothing to collect. */
    none: z.literal(true).optional(),
  }),
);
/** A result reference. */
export type ResultReference = z.infer<typeof resultReferenceSchema>;

/** Whether an answer names a provider job: by its job ID, or by its poll URL when the provider gives no ID (C2, V1). */
export function namesJob(observation: { remoteJobId?: string; statusUrl?: string }): boolean {
  return (
    (observation.remoteJobId !== undefined && observation.remoteJobId.length > 0) ||
    (observation.statusUrl !== undefined && observation.statusUrl.length > 0)
  );
}

/**
 * Whether a success answer says where its result is (R1, P7, V2): a URL, an inline (or staged) result, or the
 * provider's convention that there is none. A success without one is not ready.
 */
export function locatesResult(
  reference: (Omit<ResultReference, 'inline'> & { inline?: unknown }) | undefined,
): boolean {
  if (reference === undefined) return false;
  return (
    (reference.url !== undefined && reference.url.length > 0) ||
    reference.inline !== undefined ||
    reference.stagedArtifact !== undefined ||
    reference.none === true
  );
}

/** What a create exchange named that later result sources need (V2): the request URL and header URLs, whole. */
export const createUrlsSchema = lazySchema(() =>
  z.object({
    request: z.string().max(MAX_URL_CHARS).optional(),
    headers: z.record(z.string().max(100), z.string().max(MAX_URL_CHARS)).optional(),
  }),
);

/** One classified outside exchange. */
export const observationSchema = lazySchema(() =>
  z.object({
    action: actionSchema,
    transport: transportOutcomeSchema,
    /** What the exchange produced, classified once by the adapters; the core reacts to it (`answer-policy.ts`). */
    signal: answerSignalSchema,
    /** When the answer (or the failure) arrived, epoch ms, read by the activity. */
    receivedAtMs: z.number().int().nonnegative(),
    durationMs: z.number().nonnegative().optional(),
    /** How many HTTP requests this exchange sent, counting retries done below the workflow (B2); 1 when absent. */
    requestsSent: z.number().int().min(0).max(1000).optional(),
    /**
     * The request was sent twice (T4): the provider refused the first attempt's credential (its answer here), the
     * credential was renewed and the request, safe to resend, was resent once; the rest is the second exchange.
     */
    credentialRenewed: credentialRenewedSchema.optional(),
    httpStatus: z.number().int().min(100).max(599).optional(),
    /** A stable category for failures: `connect_refused`, `dns`, `timeout_before_send`, `timeout_after_send`, `reset`, `foreign_origin`, `body_too_large`, `http_4xx`, `http_5xx`... */
    errorCategory: z.string().max(100).optional(),
    providerRequestId: z.string().max(500).optional(),
    /** The raw `Retry-After` header value, if any (seconds or HTTP-date; validated by the planner). */
    retryAfter: z.string().max(200).optional(),
    /** The provider's job ID, when the answer names one. */
    remoteJobId: z.string().max(500).optional(),
    /** Absolute poll URL from the answer (Location, Operation-Location, body field, the request URL), whole (C4, V1). */
    statusUrl: z.string().max(MAX_URL_CHARS).optional(),
    /** How answers at `statusUrl` are read: a reading of the adapter, when not its default one (V1). */
    pollReading: z.string().max(40).optional(),
    /** What the create exchange named that later result sources need (V2): the request URL and header URLs. */
    createUrls: createUrlsSchema.optional(),
    /** The provider's state, verbatim (M2). */
    remoteState: z.string().max(500).optional(),
    /** Its P1 category; absent when the body could not be read (see `parseProblem`). */
    category: remoteStateCategorySchema.optional(),
    /** Why the body could not be used: not JSON, an HTML error page, a missing or mistyped field (S2, F8). */
    parseProblem: z.string().max(2000).optional(),
    /** Progress in [0, 1], for operators only (P8). */
    progress: z.number().min(0).max(1).optional(),
    /** The provider's own timestamp for this state, as received. */
    providerTimestamp: z.string().max(100).optional(),
    /** The job's own expiry, as received (P7). */
    expiresAt: z.string().max(100).optional(),
    /** Provider poll hints, as received (P3): validated by the planner. */
    hints: z
      .object({
        pollAfterSeconds: z.unknown().optional(),
        nextCheckAt: z.unknown().optional(),
      })
      .optional(),
    resultReference: resultReferenceSchema.optional(),
    /** A short remark for the journal on how this observation came about (a collect that needed no request). */
    note: z.string().max(500).optional(),
    /** The provider's error for a failed job or a refused call (S2, H3-H5), kept verbatim and short. */
    providerError: z
      .object({ code: z.string().max(200).optional(), message: z.string().max(2000).optional() })
      .optional(),
  }),
);
/** An observation. */
export type Observation = z.infer<typeof observationSchema>;
