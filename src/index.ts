/**
 * asyncjob's public API for services (the client), for operators' own workers (the worker wiring, activities,
 * store and providers), and for integration tests (the simulator).
 */
export { AsyncJobClient } from './client';
export { createActivities } from './activities';
export type { AsyncJobActivities, ProviderFacts } from './activities/types';
export { createWorkers, runWorkers, runWorker, shutdownWorkers, DEFAULT_TASK_QUEUE, workflowsPath } from './worker';
export { loadConfig, type Config } from './config';
export { openStore } from './adapters/store/open-store';
export type { OperationStore } from './adapters/store/operation-store';
export { FileArtifactStore, type ArtifactStore } from './adapters/artifacts/artifact-store';
export { createProviderRegistry, loadProviderRegistry } from './adapters/providers/registry';
export {
  loadProviderContract,
  adapterFromContract,
  providerContractSchema,
  type ProviderContract,
} from './adapters/providers';
export { startSimulator, type Simulator } from './simulator';
export { startWebhookReceiver } from './webhooks/receiver';
export { verifyWebhookSignature, signWebhook } from './webhooks/signature';
export { startRequestSchema, type StartRequest, type OperationRecord } from './core/operation';
export { decisionSchema, type Decision } from './core/escalation';
export type { OperationSummary, CancelRequest, WebhookHint, MessageAnswer } from './workflows/messages';
