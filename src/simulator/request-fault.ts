/**
 * The fault for one provider request: the `X-Sim-Fault` header's when given, else the first matching rule of
 * the job's script (or, on create, the chosen script's), else of the scenario. Rules count per job, per
 * idempotency token on create, or globally.
 */
import type { SimRoute } from './dialects/types';
import { pickRuleFault, type Fault, type FaultHeaderResult } from './faults';
import type { SimJob } from './jobs';
import { scriptByName, type Scenario } from './scenario';

/** The request facts a fault rule is chosen by. */
export interface FaultSubject {
  route: SimRoute;
  /** The job of a job action, when known. */
  job: SimJob | undefined;
  /** On create, the script the payload selects. */
  scriptName: string | undefined;
  /** The idempotency token the request carries. */
  token: string | undefined;
}

/** The fault applied to a request; `counters` are the scenario's rule counters (mutated). */
export function faultForRequest(
  header: Exclude<FaultHeaderResult, { kind: 'invalid' }>,
  scenario: Scenario,
  counters: Map<string, number>,
  subject: FaultSubject,
): Fault | undefined {
  return header.kind === 'fault' ? header.fault : ruleFault(scenario, counters, subject);
}

function ruleFault(scenario: Scenario, counters: Map<string, number>, subject: FaultSubject): Fault | undefined {
  const { route, job, scriptName, token } = subject;
  const scope = job ? `job:${job.id}` : token !== undefined ? `token:${token}` : 'global';
  const scriptRules = job
    ? job.script.faults
    : scriptName !== undefined
      ? scriptByName(scenario, scriptName).faults
      : [];
  const fromScript = pickRuleFault(
    scriptRules,
    route.action,
    `${job ? '' : `script:${scriptName}|`}${scope}`,
    counters,
  );
  const fromScenario = pickRuleFault(scenario.faults, route.action, `scenario|${scope}`, counters);
  return fromScript ?? fromScenario;
}
