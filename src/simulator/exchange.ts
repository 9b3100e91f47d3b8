/**
 * One request and its answer: the request record opened on arrival (time, path, trace headers, whether the
 * bearer token was right, never the token) and the ways the exchange ends, each recorded exactly once.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Accounting, AuthorizationSeen, RequestRecord } from './accounting';
import type { SimResponse } from './dialects/types';
import { writeResponse } from './http-io';

/** A request in progress, with its record; ends with {@link answer}, {@link recordStatus} or {@link recordOnly}. */
export class Exchange {
  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly record: RequestRecord,
    private readonly accounting: Accounting,
  ) {}

  /** Records the answer's status, then writes the answer. */
  answer(response: SimResponse): void {
    this.recordStatus(response.status);
    writeResponse(this.res, response, this.record.requestId);
  }

  /** Records `status` as answered, for an answer the caller writes itself (a broken body). */
  recordStatus(status: number): void {
    this.record.status = status;
    this.accounting.push(this.record);
  }

  /** Records the request with no answer status (the connection is dropped, reset or gone). */
  recordOnly(): void {
    this.accounting.push(this.record);
  }
}

/** What {@link openExchange} needs to know about the simulator. */
export interface ExchangeSettings {
  accounting: Accounting;
  clock: () => number;
  /** `Bearer <token>` as bytes. */
  bearer: Buffer;
  /** Request headers to copy into the record (lower-case names). */
  recordHeaders: readonly string[];
}

/** Opens the record of an arriving request (action `unknown` until routed). */
export function openExchange(req: IncomingMessage, res: ServerResponse, settings: ExchangeSettings): Exchange {
  const atMs = settings.clock();
  const seq = settings.accounting.nextSeq();
  const rawUrl = req.url ?? '/';
  const queryStart = rawUrl.indexOf('?');
  const record: RequestRecord = {
    seq,
    atMs,
    method: req.method ?? 'GET',
    path: queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart),
    query: queryStart === -1 ? '' : rawUrl.slice(queryStart + 1),
    action: 'unknown',
    authorization: authorizationSeen(req, settings.bearer),
    requestId: `req_${seq}`,
  };
  if (req.socket.remoteAddress !== undefined) record.from = req.socket.remoteAddress;
  const trace = req.headers['x-trace-id'];
  if (typeof trace === 'string') record.traceId = trace;
  const traceparent = req.headers['traceparent'];
  if (typeof traceparent === 'string') record.traceparent = traceparent;
  const recorded = recordedHeaders(req, settings.recordHeaders);
  if (recorded !== undefined) record.headers = recorded;
  return new Exchange(req, res, record, settings.accounting);
}

/** Whether the Authorization header is absent, the configured bearer token (constant-time), or not. */
function authorizationSeen(req: IncomingMessage, bearer: Buffer): AuthorizationSeen {
  const header = req.headers.authorization;
  if (header === undefined) return 'absent';
  const given = Buffer.from(header);
  return given.length === bearer.length && timingSafeEqual(given, bearer) ? 'valid' : 'invalid';
}

/** The request headers the scenario asks to record, or undefined when none are asked for or present. */
function recordedHeaders(req: IncomingMessage, names: readonly string[]): Record<string, string> | undefined {
  if (names.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = req.headers[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
