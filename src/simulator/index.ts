/**
 * The provider simulator: a real HTTP async-job API (three dialects, scripted lifecycles, fault injection,
 * webhooks, request accounting) for tests, the demo, benchmarks and users checking their own integration.
 */
export { startSimulator, SimulatorOptionsError } from './server';
export type { Simulator, SimulatorOptions, JobSummary, DeliverWebhookOptions } from './server';
export {
  scenarioSchema,
  jobScriptSchema,
  stepSchema,
  resultPayloadSchema,
  dialectNameSchema,
  sessionSchema,
  parseScenario,
  parseScenarioText,
  loadScenarioFile,
  ScenarioError,
} from './scenario';
export type { Scenario, ScenarioInput, JobScript, Step, ResultPayload, DialectName, SessionSettings } from './scenario';
export { faultSchema, faultRuleSchema, parseFaultHeader, FAULT_HEADER } from './faults';
export type { Fault, FaultRule, SimAction } from './faults';
export type { RequestRecord, RequestFilter, AuthorizationSeen, SessionSeen } from './accounting';
export { signWebhook } from './webhooks';
export type { WebhookTarget, WebhookEvent, WebhookDeliveryRecord } from './webhooks';
export { renderPayload } from './payloads';
export type { RenderedPayload } from './payloads';
