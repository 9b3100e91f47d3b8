/**
 * Runs the `aws-json` scenarios through a running asyncjob and judges each one: asyncjob's outcome must be the
 * expected one (and the stored result pass the scenario's check), every request must have been signed, the
 * proxy's faults must have been played, moto must have refused no signature (except where the scenario signs with
 * a wrong secret, where it must have), and moto must hold exactly the jobs a correct client leaves (one per
 * successful operation, none for a refused start).
 */
import { formatResultTable, startAndAwait, storyOf, type Harness, type Outcome } from '../harness';
import type { MotoServer } from '../moto';
import { awsProviderNameOf } from './adapters';
import type { FaultProxy, ProxiedRequest } from './fault-proxy';
import type { AwsScenario, ScenarioContext } from './scenarios';

/** The bounds every scenario runs with: polls a fraction of a second apart, room for a 6 s execution. */
export const AWS_SCENARIO_POLICY = {
  baseDelayMs: 200,
  maxDelayMs: 1_000,
  maxStatusRequests: 60,
  maxTransportFailures: 6,
  notFoundWindowMs: 500,
  decisionDeadlineMs: 1_000,
};

/** One judged scenario. */
export interface AwsScenarioResult {
  scenario: AwsScenario;
  operationId: string;
  outcome: Outcome;
  /** What the scenario's proxy saw. */
  requests: readonly ProxiedRequest[];
  pass: boolean;
  why: string;
  story: string;
}

/** The create target of each document (how the proxy's log tells a start from a read). */
const START_TARGETS: Readonly<Record<AwsScenario['document'], string>> = {
  'amazon-transcribe': 'Transcribe.StartTranscriptionJob',
  'amazon-textract': 'Textract.StartDocumentTextDetection',
  'aws-step-functions': 'AWSStepFunctions.StartExecution',
};

/** How many jobs moto holds for the scenario. */
async function jobsAtProvider(
  scenario: AwsScenario,
  requests: readonly ProxiedRequest[],
  moto: MotoServer,
  context: ScenarioContext,
): Promise<number> {
  if (scenario.document !== 'aws-step-functions') {
    // Each accepted start of these APIs is a new job (Transcribe refuses a reused name with 400 ConflictException).
    const target = START_TARGETS[scenario.document];
    return requests.filter((r) => r.target === target && r.fate !== 'throttled' && r.status === 200).length;
  }
  // Each scenario starts executions of its own state machine; a resent name of a running execution is not new.
  const stateMachineArn = String(scenario.payload(context).stateMachineArn);
  const listed = await moto.call({
    service: 'states',
    target: 'AWSStepFunctions.ListExecutions',
    jsonVersion: '1.0',
    body: { stateMachineArn },
  });
  const executions = listed.json?.executions;
  if (listed.status !== 200 || !Array.isArray(executions))
    throw new Error(`ListExecutions answered ${listed.status}: ${listed.text.slice(0, 200)}`);
  return executions.length;
}

function judgeOutcome(scenario: AwsScenario, outcome: Outcome): string[] {
  if (scenario.expected === 'succeeded') {
    if (!outcome.succeeded)
      return [`expected succeeded, got ${outcome.got}${outcome.detail ? ` (${outcome.detail})` : ''}`];
    if (scenario.result === undefined) return [];
    if (outcome.result === undefined) return ['no result stored'];
    if ('unparseable' in outcome.result) return [`the stored result is not JSON: ${outcome.result.unparseable}`];
    const problem = scenario.result(outcome.result.json);
    return problem === undefined ? [] : [problem];
  }
  if (outcome.succeeded) return ['expected not succeeded, got succeeded'];
  if (outcome.got.startsWith('timeout') || outcome.got === 'error')
    return [`expected a failure or an escalation with a reason, got ${outcome.got} (${outcome.detail})`];
  if (outcome.got === 'escalated:deadline_exceeded' || outcome.got === 'escalated:request_budget_exhausted')
    return [`ended only by our bounds (${outcome.detail}), the failure itself was not recognised`];
  const read = outcome.summary?.remoteState;
  if (scenario.providerState !== undefined && read?.toUpperCase() !== scenario.providerState)
    return [
      `ended ${outcome.got}, but not on the provider's ${scenario.providerState} (last state read: ${read ?? 'none'})`,
    ];
  return [];
}

function judgeRequests(scenario: AwsScenario, requests: readonly ProxiedRequest[]): string[] {
  const problems: string[] = [];
  if (requests.length === 0) problems.push('no request reached the provider');
  const unsigned = requests.filter((r) => !r.signed);
  if (unsigned.length > 0) problems.push(`${unsigned.length} request(s) not SigV4-signed`);
  const refused = requests.filter((r) => r.status === 403);
  if (scenario.wrongSecret && !refused.some((r) => r.refusal === 'SignatureDoesNotMatch'))
    problems.push('moto refused no signature, though the secret was wrong');
  if (!scenario.wrongSecret && refused.length > 0)
    problems.push(
      `moto refused ${refused.length} request(s): ${[...new Set(refused.map((r) => r.refusal))].join(', ')}`,
    );
  for (const [fate, plan] of [
    ['throttled', scenario.faults?.throttle],
    ['dropped', scenario.faults?.dropAnswer],
  ] as const) {
    for (const [target, times] of Object.entries(plan ?? {})) {
      const played = requests.filter((r) => r.target === target && r.fate === fate).length;
      if (played !== times) problems.push(`${fate} ${played} of the planned ${times} ${target}`);
    }
  }
  return problems;
}

/** Starts one operation per scenario, waits for them all, and judges each. */
export async function runAwsScenarios(
  harness: Harness,
  moto: MotoServer,
  proxies: Readonly<Record<string, FaultProxy>>,
  scenarios: readonly AwsScenario[],
  context: ScenarioContext,
  options: { runId: string; waitTimeoutMs?: number },
): Promise<AwsScenarioResult[]> {
  const ended = await startAndAwait(
    harness,
    scenarios,
    { runId: options.runId, waitTimeoutMs: options.waitTimeoutMs ?? 180_000 },
    (scenario) => ({
      provider: awsProviderNameOf(scenario),
      payload: scenario.payload(context),
      policy: AWS_SCENARIO_POLICY,
    }),
  );
  const results: AwsScenarioResult[] = [];
  for (const { scenario, operationId, outcome } of ended) {
    const requests = [...(proxies[scenario.name]?.requests ?? [])];
    const problems = [...judgeOutcome(scenario, outcome), ...judgeRequests(scenario, requests)];
    const jobs = await jobsAtProvider(scenario, requests, moto, context);
    const expectedJobs = scenario.expected === 'succeeded' ? 1 : scenario.providerState !== undefined ? 1 : 0;
    if (jobs !== expectedJobs) problems.push(`moto holds ${jobs} job(s) for it, expected ${expectedJobs}`);
    const story = await storyOf(harness, operationId).catch(
      (error: unknown) => `(no story: ${(error as Error).message})`,
    );
    const why = problems.join('; ');
    results.push({ scenario, operationId, outcome, requests, pass: why === '', why, story });
  }
  return results;
}

/** The table: scenario, document, expected, got, requests (throttled/dropped), pass (and why, for failures). */
export function formatAwsTable(results: readonly AwsScenarioResult[]): string {
  const rows = results.map((r) => {
    const count = (fate: ProxiedRequest['fate']) => r.requests.filter((q) => q.fate === fate).length;
    const faults = [`${r.requests.filter((q) => q.signed).length} of ${r.requests.length} signed`];
    if (count('throttled') > 0) faults.push(`${count('throttled')} throttled`);
    if (count('dropped') > 0) faults.push(`${count('dropped')} dropped`);
    const cells = [r.scenario.name, r.scenario.document, r.scenario.expected, r.outcome.got, faults.join(', ')];
    return { cells, pass: r.pass, why: r.why };
  });
  return formatResultTable(['scenario', 'document', 'expected', 'got', 'requests'], rows);
}
