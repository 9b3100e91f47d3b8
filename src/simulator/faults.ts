/**
 * Fault injection for the provider simulator: the fault vocabulary (zod), the rules that switch faults on per
 * scenario, per job script or per request (`X-Sim-Fault` header), and the choice of the fault for one request.
 */
import { z } from 'zod';
import { issueText } from '../core/issues';

/** The provider actions a fault rule can target. */
const simActionSchema = z.enum(['create', 'status', 'cancel', 'result', 'reconcile']);
/** A provider action as the simulator routes and records it. */
export type SimAction = z.infer<typeof simActionSchema>;

/**
 * One fault. What each does:
 * - `drop`: the request is processed (a create really creates the job: F1), then the socket is destroyed
 *   before any byte of the answer is written.
 * - `reset`: the connection is reset (TCP RST) before the request is processed.
 * - `http_error`: answer `status` (429, 503, 401, 403, 500, 502, ...) before processing, optionally with a
 *   Retry-After in seconds, as an HTTP-date `retryAfterDateInSeconds` from now, or a raw (possibly invalid) value.
 * - `not_found_for`: answer 404 while the job is younger than `ms` (a read-after-create consistency window).
 * - `delay`: wait `ms` before processing and answering normally (client timeouts).
 * - `malformed`: process, then answer with a broken body: non-JSON text, an HTML error page, the normal body
 *   without its state and ID fields, the normal body with wrong types, or a huge body of `sizeBytes` streamed.
 * - `different_job_id`: a create repeating a known token is answered with a brand-new job (U3).
 * - `cancel_race`: the cancel is accepted but the job finishes `succeeded` (F3).
 * - `result_mismatch`: the advertised checksum, size or record count does not match the payload served.
 * - `truncated`: the result is sent with its full Content-Length but only half the bytes, then the socket closes.
 * - `foreign_location`: every URL in the answer (Location, status_url, result_url, Operation-Location,
 *   resourceLocation, result_uri) points at the configured foreign base URL instead of the simulator.
 */
export const faultSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('drop') }),
  z.object({ kind: z.literal('reset') }),
  z.object({
    kind: z.literal('http_error'),
    status: z.number().int().min(400).max(599),
    retryAfterSeconds: z.number().int().min(0).optional(),
    retryAfterDateInSeconds: z.number().int().optional(),
    retryAfterRaw: z.string().optional(),
  }),
  z.object({ kind: z.literal('not_found_for'), ms: z.number().int().min(0) }),
  z.object({ kind: z.literal('delay'), ms: z.number().int().min(0).max(600_000) }),
  z.object({
    kind: z.literal('malformed'),
    body: z.enum(['non_json', 'html', 'missing_fields', 'wrong_types', 'huge']),
    status: z.number().int().min(100).max(599).optional(),
    sizeBytes: z
      .number()
      .int()
      .min(1)
      .max(1024 * 1024 * 1024)
      .optional(),
  }),
  z.object({ kind: z.literal('different_job_id') }),
  z.object({ kind: z.literal('cancel_race') }),
  z.object({ kind: z.literal('result_mismatch'), field: z.enum(['checksum', 'size', 'count']) }),
  z.object({ kind: z.literal('truncated') }),
  z.object({ kind: z.literal('foreign_location') }),
]);
/** One fault (see {@link faultSchema}). */
export type Fault = z.infer<typeof faultSchema>;

/**
 * A rule switching a fault on for an action: on its `nth` occurrence (1-based) or on `every` one (the default).
 * Occurrences are counted per job for status/cancel/result, per idempotency token for create (so "the first
 * create attempt of each token drops"), and per simulator for reconcile and for creates without a token.
 */
export const faultRuleSchema = z.object({
  on: simActionSchema,
  nth: z.union([z.number().int().min(1), z.literal('every')]).default('every'),
  fault: faultSchema,
});
/** A fault rule (see {@link faultRuleSchema}). */
export type FaultRule = z.infer<typeof faultRuleSchema>;

/** The name of the request header that switches a fault on for that one request. */
export const FAULT_HEADER = 'x-sim-fault';

/** The result of reading the `X-Sim-Fault` header: absent, a valid fault, or a message naming the problem. */
export type FaultHeaderResult =
  { kind: 'none' } | { kind: 'fault'; fault: Fault } | { kind: 'invalid'; message: string };

/**
 * Parses an `X-Sim-Fault` header: either a JSON fault object, or `<kind>` optionally followed by
 * `:<key>=<value>,<key>=<value>` (numbers are converted), e.g. `http_error:status=503,retryAfterSeconds=2`.
 * Pure; safe to repeat.
 */
export function parseFaultHeader(value: string | string[] | undefined): FaultHeaderResult {
  if (value === undefined) return { kind: 'none' };
  const raw = (Array.isArray(value) ? value.join(',') : value).trim();
  if (raw === '') return { kind: 'none' };
  let candidate: unknown;
  if (raw.startsWith('{')) {
    try {
      candidate = JSON.parse(raw);
    } catch {
      return { kind: 'invalid', message: 'X-Sim-Fault: not valid JSON' };
    }
  } else {
    const colon = raw.indexOf(':');
    const kind = colon === -1 ? raw : raw.slice(0, colon);
    const obj: Record<string, unknown> = { kind };
    if (colon !== -1) {
      for (const part of raw.slice(colon + 1).split(',')) {
        const eq = part.indexOf('=');
        if (eq <= 0) return { kind: 'invalid', message: `X-Sim-Fault: parameter "${part}" is not key=value` };
        const key = part.slice(0, eq).trim();
        const v = part.slice(eq + 1).trim();
        obj[key] = /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
      }
    }
    candidate = obj;
  }
  const parsed = faultSchema.safeParse(candidate);
  if (!parsed.success) {
    const detail = issueText(parsed.error.issues.map((i) => ({ ...i, path: ['fault', ...i.path] })));
    return { kind: 'invalid', message: `X-Sim-Fault: ${detail}` };
  }
  return { kind: 'fault', fault: parsed.data };
}

/**
 * Picks the fault for one occurrence of `action` from `rules`, counting occurrences in `counters` under
 * `scopeKey` (one counter per rule and scope). The first matching rule wins. Mutates `counters`.
 */
export function pickRuleFault(
  rules: readonly FaultRule[],
  action: SimAction,
  scopeKey: string,
  counters: Map<string, number>,
): Fault | undefined {
  let chosen: Fault | undefined;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    if (rule.on !== action) continue;
    const key = `${i}|${scopeKey}`;
    const count = (counters.get(key) ?? 0) + 1;
    counters.set(key, count);
    if (chosen === undefined && (rule.nth === 'every' || rule.nth === count)) chosen = rule.fault;
  }
  return chosen;
}

/** A short label for a fault, as recorded in the accounting (`http_error:503`, `malformed:html`). */
export function faultLabel(fault: Fault): string {
  switch (fault.kind) {
    case 'http_error':
      return `http_error:${fault.status}`;
    case 'malformed':
      return `malformed:${fault.body}`;
    case 'result_mismatch':
      return `result_mismatch:${fault.field}`;
    default:
      return fault.kind;
  }
}
