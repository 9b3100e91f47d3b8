/**
 * `asyncjob/client`: what a service needs to start, watch, cancel and decide operations, and nothing of the
 * worker side: loading it loads `@temporalio/client` and asyncjob's pure core, never the worker, the activities,
 * the stores, the webhook receiver, undici or a database driver (test/package/client-imports.test.ts).
 */
import './supported-node';
export * from './client';
export { startRequestSchema, type StartRequest, type OperationRecord } from './core/operation';
export { decisionSchema, type Decision } from './core/escalation';
export type { CancelRequest, WebhookHint, MessageAnswer } from './workflows/messages';
export { UnsupportedNodeError, assertSupportedNode } from './node-version';
