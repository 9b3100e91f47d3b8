/**
 * The reserved test endpoints under `/_sim/` (no token; for tests and the demo only): request records, jobs,
 * webhook deliveries, reset, and installing a scenario from a JSON or YAML body.
 */
import type { Accounting, RequestFilter } from './accounting';
import type { Simulator } from './api';
import type { Exchange } from './exchange';
import { readTextBody } from './http-io';
import { parseScenarioText, ScenarioError } from './scenario';

/** What the endpoints act on. */
export interface SimEndpointTarget {
  simulator: Simulator;
  accounting: Accounting;
}

type EndpointHandler = (target: SimEndpointTarget, exchange: Exchange) => Promise<void> | void;

const ENDPOINTS = new Map<string, EndpointHandler>([
  [
    'GET /_sim/requests',
    (target, exchange) => {
      exchange.req.resume();
      const filter = requestFilterOf(new URLSearchParams(exchange.record.query));
      // Listed before this request is recorded, so the answer does not contain itself.
      answerJson(exchange, 200, { requests: target.accounting.list(filter), dropped: target.accounting.dropped() });
    },
  ],
  [
    'GET /_sim/jobs',
    (target, exchange) => {
      exchange.req.resume();
      answerJson(exchange, 200, { jobs: target.simulator.jobs() });
    },
  ],
  [
    'GET /_sim/webhooks',
    (target, exchange) => {
      exchange.req.resume();
      answerJson(exchange, 200, { deliveries: target.simulator.webhookDeliveries() });
    },
  ],
  [
    'POST /_sim/reset',
    (target, exchange) => {
      exchange.req.resume();
      target.simulator.reset();
      answerJson(exchange, 200, { reset: true });
    },
  ],
  ['POST /_sim/scenario', installScenario],
]);

/** Answers a request under `/_sim/` (recorded with action `sim`); 404 for an unknown endpoint. */
export async function handleSimEndpoint(target: SimEndpointTarget, exchange: Exchange): Promise<void> {
  const { method, path } = exchange.record;
  exchange.record.action = 'sim';
  const handler = ENDPOINTS.get(`${method} ${path}`);
  if (handler !== undefined) return handler(target, exchange);
  exchange.req.resume();
  answerJson(exchange, 404, { error: { code: 'not_found', message: `no simulator endpoint ${method} ${path}` } });
}

async function installScenario(target: SimEndpointTarget, exchange: Exchange): Promise<void> {
  const text = await readTextBody(exchange.req);
  const contentType = exchange.req.headers['content-type'] ?? '';
  try {
    const scenario = parseScenarioText(
      text,
      '(POST /_sim/scenario)',
      contentType.includes('yaml') ? 'yaml' : contentType.includes('json') ? 'json' : undefined,
    );
    target.simulator.setScenario(scenario);
    answerJson(exchange, 200, { dialect: target.simulator.dialect, scripts: Object.keys(scenario.scripts) });
  } catch (err) {
    if (err instanceof ScenarioError)
      return answerJson(exchange, 400, { error: { code: err.code, issues: err.issues } });
    throw err;
  }
}

function requestFilterOf(query: URLSearchParams): RequestFilter {
  const filter: RequestFilter = {};
  const action = query.get('action');
  if (action) filter.action = action as RequestFilter['action'];
  const jobId = query.get('jobId');
  if (jobId) filter.jobId = jobId;
  const key = query.get('idempotencyKey');
  if (key) filter.idempotencyKey = key;
  const since = query.get('sinceSeq');
  if (since) filter.sinceSeq = Number(since);
  return filter;
}

function answerJson(exchange: Exchange, status: number, body: unknown): void {
  exchange.answer({ status, json: body });
}
