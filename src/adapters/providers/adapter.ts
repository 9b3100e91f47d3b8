/**
 * The provider adapter seam: what activities call to build requests and interpret answers. A declarative
 * contract becomes an adapter with {@link adapterFromContract}; a provider that data cannot describe may be
 * written as a TypeScript object implementing {@link ProviderAdapter} and registered instead (the escape hatch).
 * Every function is pure (no I/O, no clock) and safe to repeat.
 */
import { type Observation } from '../../core/observation';
import { type Action } from '../../core/journal';
import { type AdapterCapabilities } from '../../core/escalation';
import { type PollPolicyInput } from '../../core/policy';
import {
  buildCancelRequest,
  buildCreateRequest,
  buildReconcileRequest,
  buildResultRequest,
  buildStatusRequest,
  refusedObservation,
  type BuildResult,
  type CreateRequestInput,
  type JobRequestInput,
  type ResultRequestInput,
} from './build';
import { type AnswerFormat, type CredentialReference, type ProviderContract, type Reconciliation } from './contract';
import {
  answerFormatFor,
  countBatchItems,
  interpretCancel,
  interpretCreate,
  interpretReconcile,
  interpretStatus,
  readResultIntegrity,
  type AnswerFormatContext,
  type BatchCount,
  type CreateContext,
  type ProviderAnswer,
  type StatusContext,
  type ReconcileContext,
  type ReconcileInterpretation,
  type ResultIntegrity,
} from './interpret';

/** A provider adapter: the facts the worker needs about a provider, and the pure build/interpret functions. */
export interface ProviderAdapter {
  /** The provider's name (the key activities and the store use). */
  readonly name: string;
  /** The only origin requests and credentials go to. */
  readonly baseUrl: string;
  /** The credential by reference; the worker resolves it. */
  readonly credential: CredentialReference;
  /** The response header carrying the provider's request ID, lower-case. */
  readonly requestIdHeader: string;
  /** Whether a cancel endpoint exists (E2 offers "cancel at provider" only then) and is idempotent. */
  readonly cancel: { supported: false } | { supported: true; idempotent: boolean };
  /** What the escalation options may offer for this provider (E2: "cancel at provider" only with a cancel, R5). */
  readonly capabilities: AdapterCapabilities;
  /** The reconciliation method (U2). */
  readonly reconciliationMethod: Reconciliation['method'];
  /** H3: after acceptance, a 404 within this window means "not visible yet", in ms. */
  readonly notFoundWindowMs: number;
  /** R5: whether collecting the result may be repeated. */
  readonly collectSafeToRepeat: boolean;
  /** P2 tuning for this provider, when it has any. */
  readonly policy?: PollPolicyInput;
  /** The declarative contract, when the adapter was made from one (webhook settings, result rules...). */
  readonly contract?: ProviderContract;
  buildCreateRequest(input: CreateRequestInput): BuildResult;
  buildStatusRequest(input: JobRequestInput): BuildResult;
  buildCancelRequest(input: JobRequestInput): BuildResult;
  buildResultRequest(input: ResultRequestInput): BuildResult;
  buildReconcileRequest(input: Partial<CreateRequestInput> & { nowMs: number }): BuildResult;
  /**
   * V6: how the answer to `action` is to be read (its reading's `format`), for the HTTP layer; undefined (or no
   * such function): JSON when its content type says so.
   */
  answerFormat?(action: Action, context?: AnswerFormatContext): AnswerFormat | undefined;
  interpretCreate(answer: ProviderAnswer, context?: CreateContext): Observation;
  interpretStatus(answer: ProviderAnswer, context?: StatusContext): Observation;
  interpretCancel(answer: ProviderAnswer, context?: { jobId?: string }): Observation;
  interpretReconcile(answer: ProviderAnswer, context?: ReconcileContext): ReconcileInterpretation;
  readResultIntegrity(headers: Readonly<Record<string, string>>): ResultIntegrity;
  countBatchItems(json: unknown): BatchCount | undefined;
  refusedObservation(action: Action, result: Extract<BuildResult, { kind: 'refused' }>, atMs: number): Observation;
}

/** The provider's P2/H3 tuning: its `policy`, with the top-level `notFoundWindowMs` as the window's default. */
function providerPolicyOf(contract: ProviderContract): PollPolicyInput | undefined {
  if (contract.notFoundWindowMs === undefined) return contract.policy;
  return { notFoundWindowMs: contract.notFoundWindowMs, ...contract.policy };
}

/** Makes a {@link ProviderAdapter} from a validated contract. Pure. */
export function adapterFromContract(contract: ProviderContract): ProviderAdapter {
  return Object.freeze({
    name: contract.name,
    baseUrl: contract.baseUrl,
    credential: contract.credential,
    requestIdHeader: contract.requestIdHeader,
    cancel:
      contract.cancel === undefined
        ? { supported: false as const }
        : { supported: true as const, idempotent: contract.cancel.idempotent },
    capabilities: {
      cancel: contract.cancel !== undefined,
      repeatableCollect: contract.collectSafeToRepeat,
      sameTokenResend: contract.create.idempotencyToken !== undefined || contract.create.idempotent,
    },
    reconciliationMethod: contract.reconciliation.method,
    notFoundWindowMs: contract.notFoundWindowMs ?? contract.policy?.notFoundWindowMs ?? 0,
    collectSafeToRepeat: contract.collectSafeToRepeat,
    ...(providerPolicyOf(contract) === undefined ? {} : { policy: providerPolicyOf(contract) }),
    contract,
    buildCreateRequest: (input: CreateRequestInput) => buildCreateRequest(contract, input),
    buildStatusRequest: (input: JobRequestInput) => buildStatusRequest(contract, input),
    buildCancelRequest: (input: JobRequestInput) => buildCancelRequest(contract, input),
    buildResultRequest: (input: ResultRequestInput) => buildResultRequest(contract, input),
    buildReconcileRequest: (input: Partial<CreateRequestInput> & { nowMs: number }) =>
      buildReconcileRequest(contract, input),
    answerFormat: (action: Action, context?: AnswerFormatContext) => answerFormatFor(contract, action, context),
    interpretCreate: (answer: ProviderAnswer, context?: CreateContext) =>
      interpretCreate(contract, answer, 'create', context),
    interpretStatus: (answer: ProviderAnswer, context?: StatusContext) => interpretStatus(contract, answer, context),
    interpretCancel: (answer: ProviderAnswer, context?: { jobId?: string }) =>
      interpretCancel(contract, answer, context),
    interpretReconcile: (answer: ProviderAnswer, context?: ReconcileContext) =>
      interpretReconcile(contract, answer, context),
    readResultIntegrity: (headers: Readonly<Record<string, string>>) => readResultIntegrity(contract, headers),
    countBatchItems: (json: unknown) => countBatchItems(contract, json),
    refusedObservation,
  });
}
