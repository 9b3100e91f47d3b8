/**
 * What each agent-facing tool does, apart from MCP: one instance per agent identity, speaking to Temporal only
 * through the typed client. The agent is `startedBy` of its starts and `requestedBy` of its requests (G3); it
 * sees only operations it started (the record's `authorisation.startedBy`); it can ask for authority but never
 * grant it: there is no decide here (G2).
 */
import type { ArtifactStore } from '../adapters/artifacts/artifact-store';
import {
  AsyncJobWaitTimeout,
  FingerprintMismatchError,
  JoinMismatchError,
  OperationFailedError,
  OperationNotFoundError,
} from '../client/errors';
import type { QueryOptions, StartOptions, StartedRun, WatchOptions } from '../client';
import type { OperationRecord, StartRequest } from '../core/operation';
import type { VariableDeclarations } from '../core/operation-variables';
import type { CancelRequest, ExtensionRequest } from '../workflows/messages';
import { type AuditStory } from './audit-story';
import {
  type AgentExtensionInput,
  type AgentStartInput,
  boundedStartRequest,
  checkCancel,
  checkExtension,
} from './bounds';
import { AgentToolError } from './errors';
import type { AgentGrant } from './policy';
import { recordedResultOf } from '../client/read-result';
import { readResultBody, type ResultBody } from './result-body';
import { agentOperation, changeToken, resultSummaryView, type AgentOperation, type ResultSummaryView } from './views';

/** The client calls the tools make; `AsyncJobClient` provides them all. */
export interface AgentClient {
  start(request: StartRequest, options?: StartOptions): Promise<StartedRun>;
  get(operationId: string, options?: QueryOptions): Promise<OperationRecord>;
  watch(operationId: string, options?: WatchOptions): AsyncIterable<OperationRecord>;
  cancel(operationId: string, request: CancelRequest): Promise<{ accepted: true; localState: string }>;
  requestExtension(operationId: string, request: ExtensionRequest): Promise<{ accepted: true; localState: string }>;
}

/** What the tools run with. */
export interface AgentToolsDeps {
  client: AgentClient;
  agent: AgentGrant;
  artifacts: ArtifactStore;
  story(operationId: string): Promise<AuditStory>;
  /**
   * The operation variables a provider's adapter declares, when this server can read its document (C5): a start's
   * variables are checked against them before anything is created. Absent or undefined: the workflow checks them.
   */
  declaredVariables?(provider: string): Promise<VariableDeclarations | undefined>;
}

/** The answer of `wait_for_change`. */
export interface WaitAnswer {
  changed: boolean;
  timedOut: boolean;
  operation: AgentOperation;
}

/** The answer of `get_result`. */
export interface ResultAnswer {
  operationId: string;
  localState: string;
  final: boolean;
  summary: ResultSummaryView | null;
  body: ResultBody | null;
  bodyWithheld: string | null;
}

/** The tools of one agent identity. */
export class AgentTools {
  constructor(private readonly deps: AgentToolsDeps) {}

  get agent(): AgentGrant {
    return this.deps.agent;
  }

  /** The operation variables a provider's adapter declares, when this server can read its document (C5). */
  async declaredVariables(provider: string): Promise<VariableDeclarations | undefined> {
    return this.deps.declaredVariables?.(provider);
  }

  /** The record of an operation this agent started; any other is reported as not found (nothing of it shown). */
  async ownRecord(operationId: string): Promise<OperationRecord> {
    let record: OperationRecord | undefined;
    try {
      record = await this.deps.client.get(operationId);
    } catch (err) {
      // A workflow that failed before it could answer has no record that says who started it.
      if (!(err instanceof OperationNotFoundError) && !(err instanceof OperationFailedError)) throw err;
    }
    if (record === undefined || record.authorisation.startedBy !== this.agent.identity)
      throw new AgentToolError(
        'ASYNCJOB_ERR_NOT_FOUND',
        `no operation ${operationId} started by ${this.agent.identity}`,
      );
    return record;
  }

  /** Starts (or joins) an operation inside the agent's bounds (G1); refuses before anything is created. */
  async start(input: AgentStartInput): Promise<{ operationId: string; joined: boolean; operation: AgentOperation }> {
    const request = boundedStartRequest(this.agent, input);
    const declaredVariables = await this.declaredVariables(request.provider);
    let started: StartedRun;
    try {
      started = await this.deps.client.start(request, declaredVariables !== undefined ? { declaredVariables } : {});
    } catch (err) {
      if (err instanceof FingerprintMismatchError || err instanceof JoinMismatchError)
        await this.refuseTaken(input.operationId);
      throw err;
    }
    const record = await this.ownRecord(started.operationId);
    return { operationId: started.operationId, joined: started.joined, operation: agentOperation(record) };
  }

  /** An ID another caller holds is refused without showing anything of that operation. */
  private async refuseTaken(operationId: string): Promise<void> {
    try {
      await this.ownRecord(operationId);
    } catch (err) {
      if (err instanceof AgentToolError && err.code === 'ASYNCJOB_ERR_NOT_FOUND')
        throw new AgentToolError(
          'ASYNCJOB_ERR_OPERATION_ID_TAKEN',
          `operation ID ${operationId} is used by another caller; choose another operation ID`,
        );
      throw err;
    }
  }

  /** The operation now. */
  async getOperation(operationId: string): Promise<AgentOperation> {
    return agentOperation(await this.ownRecord(operationId));
  }

  /**
   * Returns when the operation's change token differs from `sinceChangeToken` (at once if it already does, or if
   * the operation is final), or after `waitMs` (at most the policy's bound) with `timedOut`. Bounded, so an agent
   * never loops on get_operation. Safe to repeat.
   */
  async waitForChange(
    operationId: string,
    sinceChangeToken: string | undefined,
    waitMs: number | undefined,
    signal?: AbortSignal,
  ): Promise<WaitAnswer> {
    const first = await this.ownRecord(operationId);
    const baseline = sinceChangeToken ?? changeToken(first);
    const answer = (record: OperationRecord, timedOut: boolean): WaitAnswer => ({
      changed: changeToken(record) !== baseline,
      timedOut,
      operation: agentOperation(record),
    });
    if (changeToken(first) !== baseline || agentOperation(first).final) return answer(first, false);
    const timeoutMs = Math.min(waitMs ?? this.agent.maxWaitMs, this.agent.maxWaitMs);
    try {
      // untilFinal: an agent waiting on an escalation waits for the person's answer, not for the escalation itself.
      for await (const record of this.deps.client.watch(operationId, {
        timeoutMs,
        untilFinal: true,
        intervalMs: Math.min(timeoutMs, 5_000),
        ...(signal ? { signal } : {}),
      })) {
        if (changeToken(record) !== baseline || agentOperation(record).final) return answer(record, false);
      }
    } catch (err) {
      if (!(err instanceof AsyncJobWaitTimeout)) throw err;
    }
    return answer(await this.deps.client.get(operationId), true);
  }

  /** Records the agent's cancel intent (X1); the workflow's cancel rules apply (X2, X3). */
  async requestCancel(
    operationId: string,
    reason: string,
    expectedEffect: string | undefined,
  ): Promise<{ accepted: true; operation: AgentOperation }> {
    checkCancel(this.agent);
    await this.ownRecord(operationId);
    await this.deps.client.cancel(operationId, {
      requestedBy: this.agent.identity,
      reason,
      ...(expectedEffect !== undefined ? { expectedEffect } : {}),
    });
    return { accepted: true, operation: agentOperation(await this.deps.client.get(operationId)) };
  }

  /**
   * Asks a person for more time or checks (G2): raises or joins an escalation and returns at once. The agent
   * learns the answer through get_operation / wait_for_change; it can never approve its own request.
   */
  async requestExtension(
    operationId: string,
    reason: string,
    asked: AgentExtensionInput,
  ): Promise<{ accepted: true; operation: AgentOperation }> {
    const record = await this.ownRecord(operationId);
    checkExtension(this.agent, record.provider, asked);
    await this.deps.client.requestExtension(operationId, {
      requestedBy: this.agent.identity,
      reason,
      ...(asked.extendMs !== undefined ? { extendMs: asked.extendMs } : {}),
      ...(asked.extraStatusRequests !== undefined ? { extraStatusRequests: asked.extraStatusRequests } : {}),
    });
    return { accepted: true, operation: agentOperation(await this.deps.client.get(operationId)) };
  }

  /** The result summary, and the validated body up to the policy's size where the policy allows it. */
  async getResult(operationId: string, maxBytes: number | undefined): Promise<ResultAnswer> {
    const record = await this.ownRecord(operationId);
    const view = agentOperation(record);
    const base = { operationId, localState: record.localState, final: view.final, summary: view.result };
    const withheld = (why: string): ResultAnswer => ({ ...base, body: null, bodyWithheld: why });
    const result = record.result;
    if (result === null) return withheld('no result has been collected');
    if (this.agent.results.read !== 'body') return withheld(`${this.agent.identity} may read result summaries only`);
    if (record.localState !== 'succeeded') return withheld(`the operation is ${record.localState}, not succeeded`);
    if (result.validation !== 'valid' && result.acceptedBy === undefined)
      return withheld(`the result is ${result.validation} and no person accepted it`);
    if (result.artifactLocation === undefined || result.sha256 === undefined)
      return withheld('the result has no stored body');
    const limit = Math.min(maxBytes ?? this.agent.results.maxBodyBytes, this.agent.results.maxBodyBytes);
    const body = await readResultBody(this.deps.artifacts, operationId, recordedResultOf(record), limit);
    return { ...base, summary: resultSummaryView(result), body, bodyWithheld: null };
  }

  /** The operation's story, as `asyncjob audit show` prints it (T3). */
  async auditStory(operationId: string): Promise<AuditStory & { operationId: string }> {
    await this.ownRecord(operationId);
    return { operationId, ...(await this.deps.story(operationId)) };
  }
}
