/**
 * A request to a provider endpoint, from arrival to answer: authenticate, route to the active dialect, read
 * the body, choose the fault, apply the faults that act before the provider (reset, HTTP error, delay,
 * not-found window), refuse a job action without its session, let the dialect answer, then apply the faults
 * that act on the answer (drop, malformed, truncated).
 */
import type { Dialect, DialectContext, SimRequest, SimResponse, SimRoute } from './dialects/types';
import { dialectContext } from './dialect-context';
import type { Exchange } from './exchange';
import { FAULT_HEADER, faultLabel, parseFaultHeader, type Fault, type FaultHeaderResult } from './faults';
import { hasCode } from '../core/errors';
import { readJsonBody } from './http-io';
import type { SimJob } from './jobs';
import { faultForRequest } from './request-fault';
import { selectScriptName } from './scenario';
import type { SimulatorState } from './state';
import { answerMalformed, answerTruncated, httpErrorAnswer } from './transport-faults';

/** A request accepted for the provider: authenticated, routed, body parsed, fault header valid. */
interface Admitted {
  /** The dialect active when the request arrived (a scenario installed meanwhile does not change it). */
  dialect: Dialect;
  route: SimRoute;
  request: SimRequest;
  token: string | undefined;
  headerFault: Exclude<FaultHeaderResult, { kind: 'invalid' }>;
}

/** What the provider works with once the fault is chosen. */
interface Subject {
  job: SimJob | undefined;
  scriptName: string | undefined;
  fault: Fault | undefined;
}

/** Handles one provider request; every path records the request exactly once. */
export async function handleProviderRequest(state: SimulatorState, exchange: Exchange): Promise<void> {
  const admitted = await admit(state, exchange);
  if (admitted === undefined) return;
  const subject = chooseSubject(state, exchange, admitted);
  if ((await applyFaultBeforeProcessing(state, exchange, subject)) === 'ended') return;
  const { route } = admitted;
  const { job } = subject;
  if (route.jobId !== undefined && !job) {
    return exchange.answer({ status: 404, json: { error: { code: 'not_found', message: `no job ${route.jobId}` } } });
  }
  // Session mode: a job action that needs the session is refused without it, before the job sees the request
  // (a refused status read is not counted and does not move a poll-based step).
  const needsSession = job !== undefined && state.sessions.required(route.action);
  if (job !== undefined && needsSession && refusedWithoutSession(state, exchange, job)) return;
  const response = dialectAnswer(state, exchange, admitted, subject, needsSession);
  answerAfterProcessing(exchange, subject.fault, response);
}

/** Authenticates, routes and reads the body; answers 401, 404, 413 or 400 itself (then undefined). */
async function admit(state: SimulatorState, exchange: Exchange): Promise<Admitted | undefined> {
  const { req, record } = exchange;
  if (record.authorization !== 'valid') {
    req.resume();
    exchange.answer({ status: 401, json: { error: { code: 'unauthenticated' } } });
    return undefined;
  }
  const dialect = state.dialect;
  const route = dialect.route(record.method, record.path);
  if (!route) {
    req.resume();
    exchange.answer({
      status: 404,
      json: { error: { code: 'not_found', message: `no endpoint ${record.method} ${record.path}` } },
    });
    return undefined;
  }
  record.action = route.action;
  const read = await readBody(state, exchange);
  if (read === undefined) return undefined;
  const request: SimRequest = { headers: req.headers, query: new URLSearchParams(record.query), body: read.body };
  const token = dialect.tokenOf(route, request);
  if (token !== undefined) record.idempotencyKey = token;
  const headerFault = parseFaultHeader(req.headers[FAULT_HEADER]);
  if (headerFault.kind === 'invalid') {
    exchange.answer({ status: 400, json: { error: { code: 'sim_bad_fault', message: headerFault.message } } });
    return undefined;
  }
  return { dialect, route, request, token, headerFault };
}

/** The parsed JSON body, or undefined after answering 413 (too large) or 400 (not JSON). */
async function readBody(state: SimulatorState, exchange: Exchange): Promise<{ body: unknown } | undefined> {
  try {
    return { body: await readJsonBody(exchange.req, state.maxBodyBytes) };
  } catch (err) {
    if (hasCode(err, 'ASYNCJOB_ERR_BODY_TOO_LARGE'))
      exchange.answer({ status: 413, json: { error: { code: 'payload_too_large' } } });
    else
      exchange.answer({
        status: 400,
        json: { error: { code: 'invalid_json', message: 'the request body is not JSON' } },
      });
    return undefined;
  }
}

/** The job concerned, the script a create selects, and the fault; recorded on the request. */
function chooseSubject(state: SimulatorState, exchange: Exchange, admitted: Admitted): Subject {
  const { dialect, route, request, token, headerFault } = admitted;
  const { record } = exchange;
  const job = route.jobId !== undefined ? state.jobs.get(route.jobId) : undefined;
  if (job) record.jobId = dialect.publicJobId(job.id);
  const scriptName = route.action === 'create' ? selectScriptName(state.scenario, request.body) : undefined;
  const fault = faultForRequest(headerFault, state.scenario, state.ruleCounters, { route, job, scriptName, token });
  if (fault) record.fault = faultLabel(fault);
  return { job, scriptName, fault };
}

/** Faults that answer (or break the connection) before the provider does anything. */
async function applyFaultBeforeProcessing(
  state: SimulatorState,
  exchange: Exchange,
  { fault, job }: Subject,
): Promise<'ended' | 'continue'> {
  const { res } = exchange;
  switch (fault?.kind) {
    case 'reset':
      exchange.recordOnly();
      res.socket?.resetAndDestroy();
      return 'ended';
    case 'http_error':
      exchange.answer(httpErrorAnswer(fault, state.clock()));
      return 'ended';
    case 'delay':
      await state.delays.hold(fault.ms);
      if (res.destroyed || !res.socket || res.socket.destroyed) {
        exchange.recordOnly();
        return 'ended';
      }
      return 'continue';
    case 'not_found_for':
      if (job && state.clock() - job.createdAtMs < fault.ms) {
        exchange.answer({ status: 404, json: { error: { code: 'not_found', message: 'no such job' } } });
        return 'ended';
      }
      return 'continue';
    default:
      return 'continue';
  }
}

/** Records whether the session cookie was right; answers 400 and returns true when it was not. */
function refusedWithoutSession(state: SimulatorState, exchange: Exchange, job: SimJob): boolean {
  const session = state.sessions.seen(exchange.req, job.id);
  exchange.record.session = session;
  if (session === 'valid') return false;
  exchange.answer({
    status: 400,
    json: {
      error: { code: 'session_required', message: 'this request needs the session cookie set by the create answer' },
    },
  });
  return true;
}

/** The dialect's answer: a create is made (or found again for its token) here, the same for every dialect. */
function answerOf(dialect: Dialect, route: SimRoute, request: SimRequest, ctx: DialectContext): SimResponse {
  if (route.action !== 'create') return dialect.handle({ ...route, action: route.action }, request, ctx);
  const outcome = ctx.createOrRepeat(dialect.tokenOf(route, request), request.body);
  return outcome.kind === 'conflict' ? dialect.reusedToken : dialect.created(outcome.job, route, ctx);
}

/** Advances the job to now and lets the dialect answer; adds the session cookie the answer opens or rotates. */
function dialectAnswer(
  state: SimulatorState,
  exchange: Exchange,
  { dialect, route, request }: Admitted,
  { job, scriptName, fault }: Subject,
  needsSession: boolean,
): SimResponse {
  const nowMs = state.clock();
  if (job) state.jobs.advance(job, nowMs, route.action === 'status');
  const ctx = dialectContext(state, nowMs, fault, job, scriptName ?? state.scenario.defaultScript);
  const answered = answerOf(dialect, route, request, ctx);
  if (ctx.job && !exchange.record.jobId) exchange.record.jobId = dialect.publicJobId(ctx.job.id);
  return state.sessions.withCookie(route.action, needsSession, ctx.job, answered);
}

/** Faults that act after the provider processed the request, else the answer as the provider gave it. */
function answerAfterProcessing(exchange: Exchange, fault: Fault | undefined, response: SimResponse): void {
  if (fault?.kind === 'drop') {
    exchange.recordOnly();
    exchange.res.socket?.destroy();
    return;
  }
  if (fault?.kind === 'malformed') return answerMalformed(exchange, response, fault);
  if (fault?.kind === 'truncated') return answerTruncated(exchange, response);
  exchange.answer(response);
}
