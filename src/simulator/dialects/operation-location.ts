/**
 * The `operation-location` dialect (Azure style, docs/dialects.md): `POST /v1/analyze` with
 * `Repeatability-Request-ID`, `202` + `Operation-Location` + `Retry-After`, or Azure's data-plane
 * create-or-replace `PUT /v1/analyses/:name`, `201` + `Operation-Location` with the resource (no
 * `provisioningState`: only the monitor says when it is done); `GET /v1/operations/:id`,
 * `DELETE /v1/operations/:id`, results at `resourceLocation`.
 */
import { TERMINAL_STATES, type SimJob } from '../jobs';
import { errorResponse, iso, pascalCase, type Dialect, type DialectContext, type SimResponse } from './types';
import { resultResponse } from './result';

const OP = /^\/v1\/operations\/([A-Za-z0-9_-]+)$/;
const RESULT = /^\/v1\/results\/([A-Za-z0-9_-]+)$/;
const RESOURCE = /^\/v1\/analyses\/([A-Za-z0-9_-]+)$/;

/** The state words that are not the simulator's own in Pascal case (Azure's spelling). */
const STATES: Record<string, string> = { queued: 'NotStarted', cancelled: 'Canceled', expired: 'Failed' };

function publicState(state: string): string {
  return STATES[state] ?? pascalCase(state);
}

function retryAfter(job: SimJob): string {
  const step = job.script.steps[job.stepIndex]!;
  return String(step.retryAfterSeconds ?? job.script.retryAfterSeconds);
}

function createAnswer(job: SimJob, ctx: DialectContext): SimResponse {
  return {
    status: 202,
    headers: {
      'operation-location': `${ctx.linkBase}/v1/operations/${job.id}`,
      'retry-after': retryAfter(job),
      'repeatability-result': 'accepted',
    },
  };
}

/**
 * The answer to a create-or-replace PUT: `201 Created` with the monitor in `Operation-Location` and the resource
 * as written, without a `provisioningState` (the canonical Azure data-plane shape).
 */
function createOrReplaceAnswer(job: SimJob, name: string, ctx: DialectContext): SimResponse {
  const answer = createAnswer(job, ctx);
  return {
    status: 201,
    headers: answer.headers,
    json: { id: `/v1/analyses/${name}`, name, createdDateTime: iso(job.createdAtMs) },
  };
}

/** The operation-location dialect. */
export const operationLocationDialect: Dialect = {
  name: 'operation-location',
  route(method, path) {
    if (path === '/v1/analyze') return method === 'POST' ? { action: 'create' } : undefined;
    let m = RESOURCE.exec(path);
    if (m && method === 'PUT') return { action: 'create', resource: m[1] };
    m = OP.exec(path);
    if (m && method === 'GET') return { action: 'status', jobId: m[1] };
    if (m && method === 'DELETE') return { action: 'cancel', jobId: m[1] };
    m = RESULT.exec(path);
    if (m && method === 'GET') return { action: 'result', jobId: m[1] };
    return undefined;
  },
  tokenOf(route, req) {
    if (route.action !== 'create') return undefined;
    const id = req.headers['repeatability-request-id'];
    return typeof id === 'string' && id !== '' ? id : undefined;
  },
  newJobId: (hex) =>
    `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`,
  publicJobId: (raw) => raw,
  publicState,
  reusedToken: errorResponse(
    409,
    { error: { code: 'Conflict', message: 'Repeatability-Request-ID was used with a different request' } },
    { 'repeatability-result': 'rejected' },
  ),
  created: (job, route, ctx) =>
    route.resource === undefined ? createAnswer(job, ctx) : createOrReplaceAnswer(job, route.resource, ctx),
  handle(route, req, ctx) {
    switch (route.action) {
      case 'reconcile':
        return errorResponse(404, { error: { code: 'NotFound', message: 'no such endpoint' } });
      case 'status': {
        const job = ctx.job!;
        const state = ctx.jobs.state(job);
        const step = job.script.steps[job.stepIndex]!;
        const body: Record<string, unknown> = {
          id: job.id,
          status: publicState(state),
          createdDateTime: iso(job.createdAtMs),
          lastUpdatedDateTime: iso(job.updatedAtMs),
          percentCompleted: step.progress ?? (state === 'succeeded' ? 100 : 0),
        };
        if (state === 'failed') body['error'] = { ...job.script.error };
        if (state === 'expired') body['error'] = { code: 'OperationExpired', message: 'the operation expired' };
        if (state === 'succeeded') body['resourceLocation'] = `${ctx.linkBase}/v1/results/${job.id}`;
        const headers: Record<string, string> = TERMINAL_STATES.has(state) ? {} : { 'retry-after': retryAfter(job) };
        return { status: 200, json: body, headers };
      }
      case 'cancel': {
        const out = ctx.jobs.requestCancel(ctx.job!, ctx.nowMs, ctx.fault?.kind === 'cancel_race');
        if (out.kind === 'already_terminal') {
          return errorResponse(409, {
            error: { code: 'Conflict', message: `the operation is already ${publicState(out.state)}` },
          });
        }
        return { status: 202 };
      }
      case 'result':
        return resultResponse(ctx.job!, ctx, 'operation-location');
    }
  },
};
