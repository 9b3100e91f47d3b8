/**
 * `asyncjob/testing`: the provider simulator for integration tests of your own (a real HTTP async-job API with
 * three dialects, scripted lifecycles, fault injection, webhooks and request accounting), and `signWebhook` to
 * sign a webhook the way the receiver verifies it.
 */
import './supported-node';
export {
  startSimulator,
  SimulatorOptionsError,
  scenarioSchema,
  parseScenario,
  parseScenarioText,
  loadScenarioFile,
  ScenarioError,
  faultSchema,
  faultRuleSchema,
  FAULT_HEADER,
  type Simulator,
  type SimulatorOptions,
  type JobSummary,
  type DeliverWebhookOptions,
  type Scenario,
  type ScenarioInput,
  type JobScript,
  type Step,
  type ResultPayload,
  type DialectName,
  type Fault,
  type FaultRule,
  type RequestRecord,
  type RequestFilter,
} from './simulator';
export { signWebhook } from './webhooks/signature';
