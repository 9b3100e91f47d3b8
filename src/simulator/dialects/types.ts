/**
 * What a dialect module provides: routing of its paths to provider actions, where its idempotency token is,
 * its job ID form, and the answers it gives. Dialects compute answers; the server writes them and applies
 * transport-level faults.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Fault, SimAction } from '../faults';
import type { JobStore, SimJob } from '../jobs';
import type { RenderedPayload } from '../payloads';
import type { DialectName } from '../scenario';

/** An answer, before transport faults. `json` is serialised; `raw` is sent as is. */
export interface SimResponse {
  status: number;
  headers?: Record<string, string>;
  json?: unknown;
  raw?: Buffer;
  contentType?: string;
}

/** A routed request: the action and, for job actions, the raw job ID from the path. */
export interface SimRoute {
  action: SimAction;
  jobId?: string;
  /** A create that writes a named resource (a PUT to the resource's URL), as opposed to a POST to a collection. */
  resource?: string;
  /** A reconcile that looks one job up by the client reference in its path (rather than listing by a query). */
  reference?: string;
}

/** The request as a dialect sees it. */
export interface SimRequest {
  headers: IncomingHttpHeaders;
  query: URLSearchParams;
  /** The parsed JSON body (undefined when empty). */
  body: unknown;
}

/** The outcome of a create with an idempotency token. */
export type CreateOutcome =
  { kind: 'created'; job: SimJob } | { kind: 'repeat'; job: SimJob } | { kind: 'conflict'; job: SimJob };

/** What the server gives a dialect handler for one request. */
export interface DialectContext {
  nowMs: number;
  jobs: JobStore;
  /** The fault applied to this request, if any (handlers honour the answer-shaping ones). */
  fault?: Fault;
  /** The base URL for links in answers: the simulator's, or the foreign one under `foreign_location`. */
  linkBase: string;
  /** Creates a job or finds the one for this token (same body: repeat; changed body: conflict). */
  createOrRepeat(token: string | undefined, body: unknown): CreateOutcome;
  /** The job for a job action (already advanced to now; status reads counted). Undefined when unknown. */
  job?: SimJob;
  /** The rendered result payload of a job and what is advertised about it (with any mismatch applied). */
  payloadOf(job: SimJob): { served: Buffer; rendered: RenderedPayload; advertised: Advertised };
}

/** The integrity data advertised for a result (may deliberately disagree with the bytes served). */
export interface Advertised {
  contentType: string;
  sizeBytes: number;
  sha256Hex: string;
  sha256Base64: string;
  recordCount?: number;
}

/** A dialect implementation. */
export interface Dialect {
  name: DialectName;
  /** Maps method and path (no query) to an action, or undefined for no such endpoint. */
  route(method: string, path: string): SimRoute | undefined;
  /** The idempotency token a create or reconcile carries, where this dialect puts it. */
  tokenOf(route: SimRoute, req: SimRequest): string | undefined;
  /** A new raw job ID from hex digits. */
  newJobId(hex: string): string;
  /** The job ID as the dialect shows it (recorded in the accounting). */
  publicJobId(rawId: string): string;
  /** The dialect's state word for a neutral state. */
  publicState(state: string): string;
  /** The answer to a create whose token was used before with another body. */
  reusedToken: SimResponse;
  /** The answer to a create that made `job`, or found it again for a repeat of the same request. */
  created(job: SimJob, route: SimRoute, ctx: DialectContext): SimResponse;
  /** The answer to any other action. */
  handle(route: SimRoute & { action: Exclude<SimAction, 'create'> }, req: SimRequest, ctx: DialectContext): SimResponse;
}

/** A JSON error answer. */
export function errorResponse(status: number, json: unknown, headers?: Record<string, string>): SimResponse {
  return { status, json, headers };
}

/** Converts a neutral state word (`manual_review`) to PascalCase (`ManualReview`). */
export function pascalCase(state: string): string {
  return state
    .split(/[_\-\s]+/)
    .filter((p) => p.length > 0)
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('');
}

/** ISO-8601 UTC for a millisecond time. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
