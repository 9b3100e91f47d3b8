/**
 * Request accounting: one record per request the simulator received, kept in a bounded ring (oldest dropped
 * first), so tests can assert "exactly one job", "no request before Retry-After elapsed" and "no credentials
 * sent to another origin". The bearer token itself is never stored, only whether it was present and correct;
 * the same for the session cookie of session mode.
 */
import type { SimAction } from './faults';

/** Whether a request carried the Authorization header and whether it was the configured bearer token. */
export type AuthorizationSeen = 'absent' | 'valid' | 'invalid';

/** Session mode: whether a request carried the job's session cookie, and whether it was the current value. */
export type SessionSeen = 'absent' | 'valid' | 'invalid';

/** One recorded request. */
export interface RequestRecord {
  /** Sequence number (1-based) over the simulator's life since the last reset. */
  seq: number;
  /** When the request arrived (simulator clock, ms since the epoch). */
  atMs: number;
  /** The sending host's address, as the connection shows it. */
  from?: string;
  method: string;
  path: string;
  /** The query string without the leading `?` (empty when none). */
  query: string;
  /** The provider action it was routed to, `sim` for the reserved `/_sim/` endpoints, `unknown` for no route. */
  action: SimAction | 'sim' | 'unknown';
  /** The provider job ID concerned, when known (public form: `job_...`, `operations/...`). */
  jobId?: string;
  /** The idempotency token sent (Idempotency-Key, request_id or Repeatability-Request-ID). */
  idempotencyKey?: string;
  traceId?: string;
  traceparent?: string;
  authorization: AuthorizationSeen;
  /** Session mode only, on job actions: the session cookie absent, current, or not (never its value). */
  session?: SessionSeen;
  /** The request headers named by the scenario's `recordHeaders` that were present (lower-case names). */
  headers?: Record<string, string>;
  /** The status answered; undefined when the connection was dropped or reset before an answer. */
  status?: number;
  /** The fault applied, as a label (`drop`, `http_error:503`, ...). */
  fault?: string;
  /** The X-Request-Id answered. */
  requestId: string;
}

/** A filter for {@link Accounting.list}: every given field must match. */
export interface RequestFilter {
  action?: RequestRecord['action'];
  jobId?: string;
  idempotencyKey?: string;
  method?: string;
  sinceSeq?: number;
}

/** A bounded, in-memory list of {@link RequestRecord}s. */
export class Accounting {
  private ring: RequestRecord[] = [];
  private start = 0;
  private seq = 0;
  private droppedCount = 0;

  constructor(private readonly maxRecords: number) {}

  /** Allocates the next sequence number (records are pushed when the answer is known). */
  nextSeq(): number {
    this.seq += 1;
    return this.seq;
  }

  /** Appends a record, dropping the oldest when full. O(1). */
  push(record: RequestRecord): void {
    if (this.ring.length < this.maxRecords) {
      this.ring.push(record);
      return;
    }
    this.ring[this.start] = record;
    this.start = (this.start + 1) % this.maxRecords;
    this.droppedCount += 1;
  }

  /** The records in arrival order, optionally filtered. */
  list(filter: RequestFilter = {}): RequestRecord[] {
    const ordered =
      this.start === 0 ? this.ring.slice() : [...this.ring.slice(this.start), ...this.ring.slice(0, this.start)];
    return ordered
      .filter(
        (r) =>
          (filter.action === undefined || r.action === filter.action) &&
          (filter.jobId === undefined || r.jobId === filter.jobId) &&
          (filter.idempotencyKey === undefined || r.idempotencyKey === filter.idempotencyKey) &&
          (filter.method === undefined || r.method === filter.method.toUpperCase()) &&
          (filter.sinceSeq === undefined || r.seq > filter.sinceSeq),
      )
      .sort((a, b) => a.seq - b.seq);
  }

  /** How many records were dropped because the cap was reached. */
  dropped(): number {
    return this.droppedCount;
  }

  /** Forgets every record and restarts the sequence. */
  clear(): void {
    this.ring = [];
    this.start = 0;
    this.seq = 0;
    this.droppedCount = 0;
  }
}
