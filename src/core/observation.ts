/**
 * An observation: what one outside call saw, classified by the provider adapter but not yet judged. This is
 * the seam between the adapters (which produce it from an HTTP exchange) and the wait planner and transition
 * rules in `src/core` (which decide what it means). It crosses the activity -> workflow boundary, so it is
 * zod-validated there. Raw hint values are kept as received: the planner validates them (P3) and records why
 * one was rejected.
 */
import { z } from 'zod';
import { actionSchema, transportOutcomeSchema } from './journal';
import { lazySchema } from './lazy-schema';

/** The P1 category of a provider state, from the adapter's state table; anything not in the table is `unknown`. */
export const remoteStateCategorySchema = lazySchema(() => z.enum(['pending', 'success', 'failure', 'cancelled', 'expired', 'unknown']));
/** A remote state category. */
export type RemoteStateCategory = z.infer<typeof remoteStateCategorySchema>;

/** Where and how to fetch a finished job's result, with the integrity data the provider offers (R1, R2). */
export const resultReferenceSchema = lazySchema(() => z.object({
  /** Absolute URL (checked to be on the provider's origin by the HTTP layer). */
  url: z.string().min(1).max(4000).optional(),
  sha256: z.string().max(200).optional(),
  sizeBytes: z.number().int().nonnegative().optional(),
  recordCount: z.number().int().nonnegative().optional(),
  contentType: z.string().max(200).optional(),
  /** A result given inline (synchronous success, C3, or a small LRO response); kept small by the adapter. */
  inline: z.unknown().optional(),
}));
/** A result reference. */
export type ResultReference = z.infer<typeof resultReferenceSchema>;

/** One classified outside exchange. */
export const observationSchema = lazySchema(() => z.object({
  action: actionSchema,
  transport: transportOutcomeSchema,
  /** When the answer (or the failure) arrived, epoch ms, read by the activity. */
  receivedAtMs: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative().optional(),
  /** How many HTTP requests this exchange sent, counting retries done below the workflow (B2); 1 when absent. */
  requestsSent: z.number().int().min(0).max(1000).optional(),
  httpStatus: z.number().int().min(100).max(599).optional(),
  /** A stable category for failures: `connect_refused`, `dns`, `timeout_before_send`, `timeout_after_send`, `reset`, `foreign_origin`, `body_too_large`, `http_4xx`, `http_5xx`... */
  errorCategory: z.string().max(100).optional(),
  providerRequestId: z.string().max(500).optional(),
  /** The raw `Retry-After` header value, if any (seconds or HTTP-date; validated by the planner). */
  retryAfter: z.string().max(200).optional(),
  /** The provider's job ID, when the answer names one. */
  remoteJobId: z.string().max(500).optional(),
  /** Absolute status URL from the answer (Location, Operation-Location, body field), when it names one (C4). */
  statusUrl: z.string().max(4000).optional(),
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
  /** The provider's error for a failed job or a refused call (S2, H3-H5), kept verbatim and short. */
  providerError: z.object({ code: z.string().max(200).optional(), message: z.string().max(2000).optional() }).optional(),
}));
/** An observation. */
export type Observation = z.infer<typeof observationSchema>;
