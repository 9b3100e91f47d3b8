/**
 * Signals, queries and updates of {@link AsyncJobWorkflow}, with stable wire names, shared by the workflow,
 * the client, the CLI and the tests. Inputs are validated with zod inside the workflow (signals) or in the
 * update validators (so a caller learns at once whether it was accepted).
 */
import { type ErrorCode } from '../core/codes';
import { z } from 'zod';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { type Decision, type OpenEscalation } from '../core/escalation';
import { actorInputSchema } from '../core/actor';
import type { DecisionTransport } from '../core/decision-check';
import { startRequestSchema, type OperationRecord, type RecordedTransition } from '../core/operation';
import type { ProviderFacts } from '../activities/types';
import type { operationSummary } from '../core/step';
import { lazySchema } from '../core/lazy-schema';
import { extensionRequestSchema, type ExtensionRequest } from '../core/step-extension';

/** A cancel request (X1: who, why, expected effect). */
export const cancelRequestSchema = lazySchema(() =>
  z
    .object({
      requestedBy: actorInputSchema,
      reason: z.string().trim().min(1).max(2000),
      expectedEffect: z.string().trim().min(1).max(2000).optional(),
    })
    .strict(),
);
/** A cancel request. */
export type CancelRequest = z.infer<typeof cancelRequestSchema>;

/** A webhook hint forwarded by the receiver (W1): it only makes the next status read happen now. */
export const webhookHintSchema = lazySchema(() =>
  z
    .object({
      eventId: z.string().min(1).max(500),
      remoteJobId: z.string().min(1).max(500).optional(),
      state: z.string().max(500).optional(),
      occurredAt: z.string().max(100).optional(),
      /** When the receiver got it (ISO-8601): a status read sent after it already confirms it (W1). */
      receivedAt: z.string().max(40).optional(),
    })
    .strict(),
);
/** A webhook hint. */
export type WebhookHint = z.infer<typeof webhookHintSchema>;

export { type Decision };

/**
 * The workflow's input: the caller's start request (validated again inside the workflow), the idempotency token
 * and the trace ID made by the client (I1, I4, T1). No secrets: credentials stay in the worker (T4).
 */
export const asyncJobWorkflowInputSchema = lazySchema(() =>
  z
    .object({
      request: startRequestSchema,
      /**
       * >= 128 bits, base64url (I1); bound to the request fingerprint (I2). Absent when the starter is workflow code
       * (`asyncjob/workflow`), which cannot draw one: the worker draws it before anything is recorded.
       */
      idempotencyToken: z.string().min(22).max(200).optional(),
      /** One trace per operation (T1); never the token (I4). */
      traceId: z.string().regex(/^[0-9a-f]{32}$/, 'must be 32 lowercase hex characters (a W3C trace ID)'),
      /** Continue as new past this many history events even if the server does not suggest it. */
      historyEventLimit: z.number().int().min(100).max(50_000).optional(),
    })
    .strict(),
);
/** The workflow's input. */
export type AsyncJobWorkflowInput = z.infer<typeof asyncJobWorkflowInputSchema>;

/** What a run hands to the next one through continue-as-new. */
export interface CarriedState {
  record: OperationRecord;
  provider: ProviderFacts;
  /** Messages received but not yet processed, in arrival order. */
  pending: PendingMessage[];
}

/** A message waiting for the main loop (processed in arrival order, between outside calls). */
export type PendingMessage =
  | { kind: 'cancel'; request: CancelRequest; id: number }
  | { kind: 'decide'; decision: unknown; transport: DecisionTransport; id: number }
  | { kind: 'webhook'; hint: WebhookHint; receivedAtMs: number; id: number }
  | { kind: 'extension'; request: ExtensionRequest; id: number };

/** An extension request: more time or checks asked for by a caller without approval authority (G2). */
export { extensionRequestSchema, type ExtensionRequest };

/** The answer of the cancel, decide and extension updates. */
export type MessageAnswer =
  { accepted: true; localState: string } | { accepted: false; code: ErrorCode; message: string };

/** The operation's final (or current) summary: never the result body. */
export type OperationSummary = ReturnType<typeof operationSummary>;

/** Asks for cancellation at the provider (fire and forget; the `cancelOperation` update tells the outcome). */
export const cancelSignal = defineSignal<[CancelRequest]>('cancel');
/** Answers the open escalation (fire and forget; refused decisions are recorded). */
export const decideSignal = defineSignal<[Decision]>('decide');
/** A webhook hint: read the status now. */
export const webhookSignal = defineSignal<[WebhookHint]>('webhook');

/** Cancel with an answer: refused at once (validator) when it cannot be honoured. */
export const cancelUpdate = defineUpdate<MessageAnswer, [CancelRequest]>('cancelOperation');
/** Decide with an answer: refused at once when the option was not offered or is out of bounds (A2). */
export const decideUpdate = defineUpdate<MessageAnswer, [Decision]>('decideOperation');
/** Ask a human for more time or checks (G2): answered once the escalation is raised or joined. */
export const extensionUpdate = defineUpdate<MessageAnswer, [ExtensionRequest]>('requestExtension');

/** The whole record: local and remote state, counters, budgets, deadlines, schedule, escalation. */
export const stateQuery = defineQuery<OperationRecord>('state');
/** The open escalation, or null. */
export const escalationQuery = defineQuery<(OpenEscalation & { text: string }) | null>('escalation');
/** The transitions kept in the record (the full history is in the store). */
export const historyQuery = defineQuery<RecordedTransition[]>('history');
