/**
 * The provider simulator: a real HTTP async-job API (three dialects, scripted lifecycles, fault injection,
 * webhooks, request accounting) for tests, the demo, benchmarks and users checking their own integration.
 */
export { startSimulator, SimulatorOptionsError } from './server';
export type { Simulator, SimulatorOptions, JobSummary, DeliverWebhookOptions } from './server';
export { scenarioSchema, parseScenario, parseScenarioText, loadScenarioFile, ScenarioError } from './scenario';
export type { Scenario, ScenarioInput, JobScript, Step, ResultPayload, DialectName } from './scenario';
export { faultSchema, faultRuleSchema, parseFaultHeader, FAULT_HEADER } from './faults';
export type { Fault, FaultRule } from './faults';
export type { RequestRecord, RequestFilter } from './accounting';
export { signWebhook } from './webhooks';
export { renderPayload } from './payloads';
