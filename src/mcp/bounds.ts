/**
 * G1: what an agent asks for, held to the bounds its operator set, before anything is created or sent. Each
 * refusal names the bound it broke and the most the agent may ask, so the agent can correct itself. Pure.
 */
import type { StartRequest } from '../core/operation';
import { AgentToolError } from './errors';
import type { AgentGrant, ProviderGrant } from './policy';

/** What `start_operation` takes (validated by its input schema). */
export interface AgentStartInput {
  operationId: string;
  provider: string;
  payload: Record<string, unknown>;
  clientReference?: string;
  /** Operation variables for the provider's request templates (C5); checked by the client and the workflow. */
  variables?: Record<string, string>;
  /** From now; defaults to the largest the policy allows. */
  createDeadlineMs?: number;
  /** From now; defaults to the largest the policy allows. */
  resultDeadlineMs?: number;
  /** Defaults to the largest the policy allows. */
  maxStatusRequests?: number;
}

/** What `request_extension` asks for (validated by its input schema). */
export interface AgentExtensionInput {
  extendMs?: number;
  extraStatusRequests?: number;
}

/** The provider grant of `provider`, or a refusal naming the providers the agent may use. */
function grantFor(agent: AgentGrant, provider: string): ProviderGrant {
  const grant = agent.providers.find((p) => p.name === provider);
  if (grant === undefined)
    throw new AgentToolError(
      'ASYNCJOB_ERR_POLICY_REFUSED',
      `bound providers: ${agent.identity} may not use provider ${provider} (allowed: ${agent.providers.map((p) => p.name).join(', ')})`,
      'providers',
    );
  return grant;
}

function atMost(agent: AgentGrant, bound: string, field: string, asked: number, allowed: number, unit: string): void {
  if (asked > allowed)
    throw new AgentToolError(
      'ASYNCJOB_ERR_POLICY_REFUSED',
      `bound ${bound}: ${field} ${asked}${unit} is over what ${agent.identity} may ask (at most ${allowed}${unit})`,
      bound,
    );
}

/**
 * The start request for an agent's start, with the agent as `startedBy` and the policy's authority as
 * `authorisedBy` (G3), the operator's poll policy and the agent's budget; or throws
 * {@link AgentToolError} `ASYNCJOB_ERR_POLICY_REFUSED` naming the broken bound (G1).
 */
export function boundedStartRequest(agent: AgentGrant, input: AgentStartInput): StartRequest {
  const grant = grantFor(agent, input.provider);
  const createMs = input.createDeadlineMs ?? grant.maxCreateDeadlineMs;
  const resultMs = input.resultDeadlineMs ?? grant.maxResultDeadlineMs;
  const statusRequests = input.maxStatusRequests ?? grant.maxStatusRequests;
  atMost(agent, 'maxCreateDeadline', 'createDeadlineMs', createMs, grant.maxCreateDeadlineMs, ' ms');
  atMost(agent, 'maxResultDeadline', 'resultDeadlineMs', resultMs, grant.maxResultDeadlineMs, ' ms');
  atMost(agent, 'maxStatusRequests', 'maxStatusRequests', statusRequests, grant.maxStatusRequests, '');
  return {
    operationId: input.operationId,
    provider: input.provider,
    payload: input.payload,
    ...(input.clientReference !== undefined ? { clientReference: input.clientReference } : {}),
    ...(input.variables !== undefined ? { variables: input.variables } : {}),
    startedBy: agent.identity,
    authorisedBy: agent.authorisedBy,
    createDeadline: { afterMs: createMs },
    resultDeadline: { afterMs: resultMs },
    policy: { ...grant.pollPolicy, maxStatusRequests: statusRequests },
  };
}

/** An extension request held to the same bounds as a start at the provider (G1); throws when over. */
export function checkExtension(agent: AgentGrant, provider: string, input: AgentExtensionInput): void {
  const grant = grantFor(agent, provider);
  if (input.extendMs !== undefined)
    atMost(agent, 'maxResultDeadline', 'extendMs', input.extendMs, grant.maxResultDeadlineMs, ' ms');
  if (input.extraStatusRequests !== undefined)
    atMost(agent, 'maxStatusRequests', 'extraStatusRequests', input.extraStatusRequests, grant.maxStatusRequests, '');
}

/** Refuses a cancel when the policy does not let the agent request one (G1). */
export function checkCancel(agent: AgentGrant): void {
  if (!agent.mayCancel)
    throw new AgentToolError(
      'ASYNCJOB_ERR_POLICY_REFUSED',
      `bound mayCancel: ${agent.identity} may not request cancels (ask a person: asyncjob cancel)`,
      'mayCancel',
    );
}
