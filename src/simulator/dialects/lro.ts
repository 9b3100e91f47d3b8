/**
 * The `lro` dialect (Google AIP-151 style, docs/dialects.md): `POST /v1/operations:start` with `request_id` in
 * the body, `GET /v1/operations/:id`, `POST /v1/operations/:id:cancel`, results at `response.result_uri`,
 * `GET /v1/operations?request_id=`.
 */
import { TERMINAL_STATES, type SimJob } from '../jobs';
import { errorResponse, iso, type Dialect, type DialectContext } from './types';
import { resultResponse } from './result';

const OP = /^\/v1\/operations\/([A-Za-z0-9_-]+)$/;
const CANCEL = /^\/v1\/operations\/([A-Za-z0-9_-]+):cancel$/;
const RESULT = /^\/v1\/results\/([A-Za-z0-9_-]+)$/;

/** The state words that are not the simulator's own in upper case. */
const STATES: Record<string, string> = { queued: 'PENDING' };

function publicState(state: string): string {
  return STATES[state] ?? state.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
}

/** The AIP-151 operation resource for a job. */
function operation(job: SimJob, ctx: DialectContext): Record<string, unknown> {
  const state = ctx.jobs.state(job);
  const step = job.script.steps[job.stepIndex]!;
  const metadata: Record<string, unknown> = {
    state: publicState(state),
    progress_percent: step.progress ?? (state === 'succeeded' ? 100 : 0),
    update_time: iso(job.updatedAtMs),
  };
  const expiresAt = ctx.jobs.expiresAtMs(job);
  if (expiresAt !== undefined) metadata['expire_time'] = iso(expiresAt);
  const op: Record<string, unknown> = { name: `operations/${job.id}`, done: TERMINAL_STATES.has(state), metadata };
  if (state === 'succeeded') {
    const { advertised } = ctx.payloadOf(job);
    const response: Record<string, unknown> = {
      result_uri: `${ctx.linkBase}/v1/results/${job.id}`,
      sha256: advertised.sha256Hex,
      size_bytes: advertised.sizeBytes,
    };
    if (advertised.recordCount !== undefined) response['record_count'] = advertised.recordCount;
    op['response'] = response;
  } else if (state === 'failed') {
    op['error'] = { code: 2, message: job.script.error.message, details: [{ reason: job.script.error.code }] };
  } else if (state === 'cancelled') {
    op['error'] = { code: 1, message: 'the operation was cancelled' };
  } else if (state === 'expired') {
    op['error'] = { code: 4, message: 'the operation expired' };
  }
  return op;
}

/** The lro dialect. */
export const lroDialect: Dialect = {
  name: 'lro',
  route(method, path) {
    if (path === '/v1/operations:start') return method === 'POST' ? { action: 'create' } : undefined;
    if (path === '/v1/operations') return method === 'GET' ? { action: 'reconcile' } : undefined;
    let m = CANCEL.exec(path);
    if (m && method === 'POST') return { action: 'cancel', jobId: m[1] };
    m = OP.exec(path);
    if (m && method === 'GET') return { action: 'status', jobId: m[1] };
    m = RESULT.exec(path);
    if (m && method === 'GET') return { action: 'result', jobId: m[1] };
    return undefined;
  },
  tokenOf(route, req) {
    if (route.action === 'reconcile') return req.query.get('request_id') ?? undefined;
    if (route.action !== 'create' || req.body === null || typeof req.body !== 'object') return undefined;
    const id = (req.body as Record<string, unknown>)['request_id'];
    return typeof id === 'string' && id !== '' ? id : undefined;
  },
  newJobId: (hex) => hex,
  publicJobId: (raw) => `operations/${raw}`,
  publicState,
  reusedToken: errorResponse(409, {
    error: { code: 409, status: 'ABORTED', message: 'request_id was used with a different request' },
  }),
  created: (job, _route, ctx) => ({ status: 200, json: operation(job, ctx) }),
  handle(route, req, ctx) {
    switch (route.action) {
      case 'reconcile': {
        const token = req.query.get('request_id');
        if (token === null || token === '')
          return errorResponse(400, {
            error: { code: 400, status: 'INVALID_ARGUMENT', message: 'request_id is required' },
          });
        const operations = ctx.jobs.byIdempotencyToken(token).map((j) => {
          ctx.jobs.advance(j, ctx.nowMs);
          return operation(j, ctx);
        });
        return { status: 200, json: { operations } };
      }
      case 'status':
        return { status: 200, json: operation(ctx.job!, ctx) };
      case 'cancel':
        // Idempotent by contract: a finished operation keeps its outcome, the answer is still 200 {}.
        ctx.jobs.requestCancel(ctx.job!, ctx.nowMs, ctx.fault?.kind === 'cancel_race');
        return { status: 200, json: {} };
      case 'result':
        return resultResponse(ctx.job!, ctx, 'lro');
    }
  },
};
