/**
 * `asyncjob/worker`: what an operator's own worker process needs: the worker wiring (`runWorker` is the
 * `asyncjob worker` command; `createWorkers` builds workers on a connection of yours), the activities' factory,
 * the operation stores, artifacts, provider contracts and their registry, the webhook receiver, the one
 * JSON-lines logger (Temporal's `Logger`) for the SDK and for asyncjob, and the errors: the base class
 * `AsyncJobError` and the registry of stable codes (docs/errors.md).
 */
import './supported-node';
export {
  createWorkers,
  runWorkers,
  runWorker,
  shutdownWorkers,
  DEFAULT_TASK_QUEUE,
  DEFAULT_MAX_CACHED_WORKFLOWS,
  workflowsPath,
  type AsyncJobWorkerOptions,
  type ProviderQueue,
} from './worker';
export { createActivities } from './activities';
export { relayMessageWakes } from './activities/loop-wake';
export { AsyncJobError, exitStatusOf, hasCode } from './core/errors';
export { ERROR_CODES, isErrorCode, type ErrorCode, type ErrorCodeInfo, type ExitCode } from './core/codes';
export type { ActivityDependencies, ActivityLogger, AsyncJobActivities, ProviderFacts } from './activities';
export { loadConfig, ConfigError, configSchema, type Config } from './config';
export { openStore, parseStoreLocation, type OpenStoreOptions, type StoreLocation } from './adapters/store/open-store';
export { StoreError } from './adapters/store/store-errors';
export type { OperationStore } from './adapters/store/operation-store';
export { FileArtifactStore, type ArtifactStore } from './adapters/artifacts/artifact-store';
export {
  S3ArtifactStore,
  type S3ArtifactStoreOptions,
  type S3Encryption,
} from './adapters/artifacts/s3-artifact-store';
export { openArtifactStore, type ArtifactSettings } from './adapters/artifacts/open-artifact-store';
export {
  createProviderRegistry,
  loadProviderRegistry,
  ProviderRegistryError,
  type ProviderRegistry,
  type RegisteredProvider,
  type CreateProviderRegistryOptions,
  type LoadProviderRegistryOptions,
} from './adapters/providers/registry';
export {
  loadProviderContract,
  parseProviderContract,
  adapterFromContract,
  providerContractSchema,
  BUILT_IN_PRESETS,
  type ProviderAdapter,
  type ProviderContract,
} from './adapters/providers';
export {
  startWebhookReceiver,
  type WebhookReceiver,
  type WebhookReceiverOptions,
  type WebhookSettings,
  type WebhookOutcome,
} from './webhooks/receiver';
export { webhookOutcomeReporter, type WebhookOutcomeReporterOptions } from './webhooks/outcome-reporter';
export { verifyWebhookSignature, type SignatureCheck } from './webhooks/signature';
export { createJsonLogger, type JsonLoggerOptions, type LogLevel } from './logging';
