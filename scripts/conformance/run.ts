/**
 * Drives scenarios through a running asyncjob against a running test server, and judges each one: asyncjob's
 * outcome must match the expected one (and the stored result the expected JSON), and the scenario's coverage
 * counters must have gone up, which proves the server really played the scenario.
 */
import { isDeepStrictEqual } from 'node:util';
import { providerNameOf } from './adapters';
import { formatResultTable, startAndAwait, storyOf, type Harness, type Outcome } from './harness';
import { countersOf, type Scenario } from './scenarios';
import type { TestServer } from './testserver';

/** The bounds every scenario runs with: short polls and deadlines, a short decision window after an escalation. */
export const SCENARIO_POLICY = {
  baseDelayMs: 50,
  maxDelayMs: 200,
  maxStatusRequests: 30,
  maxTransportFailures: 6,
  notFoundWindowMs: 500,
  decisionDeadlineMs: 1_000,
};

/** One judged scenario. */
export interface ScenarioResult {
  scenario: Scenario;
  operationId: string;
  outcome: Outcome;
  /** Counters that did not go up. */
  countersMissed: string[];
  pass: boolean;
  /** Why it failed (empty when it passed). */
  why: string;
  /** The audit story (what `asyncjob audit show` prints). */
  story: string;
}

/** Options of {@link runScenarios}. */
export interface RunOptions {
  /** A prefix making operation IDs unique per run. */
  runId: string;
  /** How long to wait for all operations to end, counted from the last start (default 180 s). */
  waitTimeoutMs?: number;
  /** Per-scenario progress. */
  onResult?: (result: ScenarioResult) => void;
}

const describe = (value: unknown): string => {
  const text = JSON.stringify(value);
  return text === undefined ? 'nothing' : text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

function judge(scenario: Scenario, outcome: Outcome, countersMissed: string[]): string {
  const problems: string[] = [];
  if (scenario.expected === 'succeeded') {
    if (!outcome.succeeded)
      problems.push(`expected succeeded, got ${outcome.got}${outcome.detail ? ` (${outcome.detail})` : ''}`);
    else if (scenario.result !== undefined) {
      if (outcome.result === undefined) problems.push(`no result stored, expected ${describe(scenario.result)}`);
      else if ('unparseable' in outcome.result)
        problems.push(`the stored result is not JSON: ${describe(outcome.result.unparseable)}`);
      else if (!isDeepStrictEqual(outcome.result.json, scenario.result))
        problems.push(`stored result ${describe(outcome.result.json)}, expected ${describe(scenario.result)}`);
    }
  } else if (outcome.succeeded) {
    problems.push(
      `expected not succeeded, got succeeded${outcome.result && 'json' in outcome.result ? ` with ${describe(outcome.result.json)}` : ''}`,
    );
  } else if (outcome.got.startsWith('timeout') || outcome.got === 'error') {
    problems.push(`expected a failure or an escalation with a reason, got ${outcome.got} (${outcome.detail})`);
  } else if (outcome.got === 'escalated:deadline_exceeded' || outcome.got === 'escalated:request_budget_exhausted') {
    problems.push(`ended only by our bounds (${outcome.detail}), the failure itself was not recognised`);
  } else if (
    scenario.providerState !== undefined &&
    outcome.summary?.remoteState?.toLowerCase() !== scenario.providerState.toLowerCase()
  ) {
    problems.push(
      `ended ${outcome.got}, but not on the provider's ${scenario.providerState} (last state read: ${outcome.summary?.remoteState ?? 'none'}${outcome.detail ? `; ${outcome.detail}` : ''})`,
    );
  }
  if (countersMissed.length > 0)
    problems.push(`coverage counter${countersMissed.length > 1 ? 's' : ''} ${countersMissed.join(', ')} not hit`);
  return problems.join('; ');
}

/** Starts one operation per scenario, waits for them all, reads the coverage, and judges each. */
export async function runScenarios(
  harness: Harness,
  server: TestServer,
  scenarios: readonly Scenario[],
  options: RunOptions,
): Promise<ScenarioResult[]> {
  const before = await server.coverage();
  const ended = await startAndAwait(
    harness,
    scenarios,
    { runId: options.runId, waitTimeoutMs: options.waitTimeoutMs ?? 180_000 },
    (scenario) => ({
      provider: providerNameOf(scenario),
      payload: scenario.method === 'DELETE' ? {} : { location: 'West US' },
      policy: SCENARIO_POLICY,
    }),
  );
  // Counters are read after every operation ended, so late requests (a final GET) are counted.
  const after = await server.coverage();
  const results: ScenarioResult[] = [];
  for (const { scenario, operationId, outcome } of ended) {
    const countersMissed = countersOf(scenario).filter((counter) => !((after[counter] ?? 0) > (before[counter] ?? 0)));
    const why = judge(scenario, outcome, countersMissed);
    const story = await storyOf(harness, operationId).catch(
      (error: unknown) => `(no story: ${(error as Error).message})`,
    );
    const result: ScenarioResult = { scenario, operationId, outcome, countersMissed, pass: why === '', why, story };
    options.onResult?.(result);
    results.push(result);
  }
  return results;
}

/** The table: scenario, method, route, expected, got, pass (and why, for failures). */
export function formatTable(results: readonly ScenarioResult[]): string {
  const rows = results.map((r) => ({
    cells: [r.scenario.name, r.scenario.method, r.scenario.route, r.scenario.expected, r.outcome.got],
    pass: r.pass,
    why: r.why,
  }));
  return formatResultTable(['scenario', 'method', 'route', 'expected', 'got'], rows);
}
