/**
 * The `rest` dialect (docs/dialects.md): `POST /v1/jobs` with `Idempotency-Key`, `GET /v1/jobs/:id`,
 * `POST /v1/jobs/:id/cancel`, `GET /v1/jobs/:id/result`, `GET /v1/jobs?client_reference=`, and the single lookup
 * `GET /v1/jobs/by-reference/:reference`.
 */
import { TERMINAL_STATES, type SimJob } from '../jobs';
import { errorResponse, iso, type Dialect, type DialectContext, type SimResponse, type SimRoute } from './types';
import { resultResponse } from './result';

const JOB = /^\/v1\/jobs\/([A-Za-z0-9_-]+)$/;
const CANCEL = /^\/v1\/jobs\/([A-Za-z0-9_-]+)\/cancel$/;
const RESULT = /^\/v1\/jobs\/([A-Za-z0-9_-]+)\/result$/;
const BY_REFERENCE = /^\/v1\/jobs\/by-reference\/([^/]+)$/;

function statusBody(job: SimJob, ctx: DialectContext): Record<string, unknown> {
  const state = ctx.jobs.state(job);
  const step = job.script.steps[job.stepIndex]!;
  const body: Record<string, unknown> = {
    job_id: job.id,
    state,
    updated_at: iso(job.updatedAtMs),
    progress: step.progress ?? (state === 'succeeded' ? 100 : 0),
  };
  if (!TERMINAL_STATES.has(state)) {
    if (step.pollAfterSeconds !== undefined) body['poll_after_seconds'] = step.pollAfterSeconds;
    if (step.nextCheckAt !== undefined) {
      body['next_check_at'] =
        typeof step.nextCheckAt === 'string' ? step.nextCheckAt : iso(ctx.nowMs + step.nextCheckAt.inMs);
    }
  }
  const expiresAt = ctx.jobs.expiresAtMs(job);
  if (expiresAt !== undefined) body['expires_at'] = iso(expiresAt);
  if (state === 'succeeded') body['result_url'] = `${ctx.linkBase}/v1/jobs/${job.id}/result`;
  if (state === 'failed') body['error'] = { ...job.script.error };
  return body;
}

function createAnswer(job: SimJob, ctx: DialectContext): SimResponse {
  if (job.script.sync) {
    const { rendered } = ctx.payloadOf(job);
    return { status: 200, json: { job_id: job.id, state: ctx.jobs.state(job), result: rendered.json ?? null } };
  }
  return {
    status: 202,
    // The documented Location is relative; under foreign_location it is absolute on the other origin.
    headers: { location: `${ctx.fault?.kind === 'foreign_location' ? ctx.linkBase : ''}/v1/jobs/${job.id}` },
    json: { job_id: job.id, state: ctx.jobs.state(job), status_url: `${ctx.linkBase}/v1/jobs/${job.id}` },
  };
}

/** The route of a single lookup by client reference (the path segment percent-decoded). */
function referenceRoute(segment: string): SimRoute {
  try {
    return { action: 'reconcile', reference: decodeURIComponent(segment) };
  } catch {
    return { action: 'reconcile', reference: segment };
  }
}

/** A single lookup: the first job created with this client reference, or 404 when there is none. */
function lookupAnswer(reference: string, ctx: DialectContext): SimResponse {
  const job = ctx.jobs.byReference(reference)[0];
  if (job === undefined)
    return errorResponse(404, { error: { code: 'not_found', message: `no job for client reference ${reference}` } });
  return {
    status: 200,
    json: { job_id: job.id, state: ctx.jobs.advance(job, ctx.nowMs), created_at: iso(job.createdAtMs) },
  };
}

/** The rest dialect. */
export const restDialect: Dialect = {
  name: 'rest',
  route(method, path) {
    if (path === '/v1/jobs') {
      if (method === 'POST') return { action: 'create' };
      if (method === 'GET') return { action: 'reconcile' };
      return undefined;
    }
    let m = BY_REFERENCE.exec(path);
    if (m && method === 'GET') return referenceRoute(m[1]!);
    m = JOB.exec(path);
    if (m && method === 'GET') return { action: 'status', jobId: m[1] };
    m = CANCEL.exec(path);
    if (m && method === 'POST') return { action: 'cancel', jobId: m[1] };
    m = RESULT.exec(path);
    if (m && method === 'GET') return { action: 'result', jobId: m[1] };
    return undefined;
  },
  tokenOf(route, req) {
    if (route.action !== 'create') return undefined;
    const key = req.headers['idempotency-key'];
    return typeof key === 'string' && key !== '' ? key : undefined;
  },
  newJobId: (hex) => `job_${hex}`,
  publicJobId: (raw) => raw,
  publicState: (state) => state,
  reusedToken: errorResponse(422, {
    error: { code: 'idempotency_key_reused', message: 'this Idempotency-Key was used with a different request body' },
  }),
  created: (job, _route, ctx) => createAnswer(job, ctx),
  handle(route, req, ctx) {
    switch (route.action) {
      case 'reconcile': {
        if (route.reference !== undefined) return lookupAnswer(route.reference, ctx);
        const ref = req.query.get('client_reference');
        if (ref === null || ref === '')
          return errorResponse(400, { error: { code: 'invalid_request', message: 'client_reference is required' } });
        const jobs = ctx.jobs.byReference(ref).map((j) => ({
          job_id: j.id,
          state: ctx.jobs.advance(j, ctx.nowMs),
          created_at: iso(j.createdAtMs),
        }));
        return { status: 200, json: { jobs } };
      }
      case 'status':
        return { status: 200, json: statusBody(ctx.job!, ctx) };
      case 'cancel': {
        const job = ctx.job!;
        const out = ctx.jobs.requestCancel(job, ctx.nowMs, ctx.fault?.kind === 'cancel_race');
        if (out.kind === 'already_terminal')
          return errorResponse(409, { error: { code: 'already_terminal' }, state: out.state });
        return { status: 202, json: { job_id: job.id, state: 'cancelling' } };
      }
      case 'result':
        return resultResponse(ctx.job!, ctx, 'rest');
    }
  },
};
