/**
 * The agent-facing MCP server (rules G1-G3): {@link agentServerFactory} assembles, per agent identity,
 * the tools over one shared `AsyncJobClient`, the artifact store (result bodies) and the audit store (stories).
 * `src/cli/mcp-command.ts` runs it over stdio or Streamable HTTP.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { VariableDeclarations } from '../core/operation-variables';
import type { ArtifactStore } from '../adapters/artifacts/artifact-store';
import { AgentTools, type AgentClient } from './agent-tools';
import { readAuditStory } from './audit-story';
import type { AgentGrant } from './policy';
import { createAgentServer } from './server';

export { startHttpServer, type RunningHttpServer } from './http';
export {
  AgentPolicyError,
  agentForToken,
  agentNamed,
  agentPolicyFrom,
  loadAgentPolicy,
  tokenDigest,
  type AgentGrant,
  type AgentPolicy,
} from './policy';

/** What every agent's server shares. */
export interface AgentServerDeps {
  client: AgentClient;
  /** `ASYNCJOB_STORE`: where the audit stories are read. */
  storeLocation: string;
  /** Where result bodies are read: the store the settings name (`openArtifactStore`). */
  artifacts: ArtifactStore;
  /** The environment the audit keys are read from (as `asyncjob audit show` reads them). */
  env: Readonly<Record<string, string | undefined>>;
  /** The operator's log (stderr); never sent to an agent. */
  log(line: string): void;
  /** The operation variables a provider's adapter declares, when its document is readable here (C5). */
  declaredVariables?(provider: string): Promise<VariableDeclarations | undefined>;
}

/** Returns a function that builds the MCP server of one agent. */
export function agentServerFactory(deps: AgentServerDeps): (agent: AgentGrant) => McpServer {
  return (agent) =>
    createAgentServer(
      new AgentTools({
        client: deps.client,
        agent,
        artifacts: deps.artifacts,
        story: (operationId) => readAuditStory(operationId, deps.storeLocation, deps.env, deps.log),
        ...(deps.declaredVariables !== undefined ? { declaredVariables: deps.declaredVariables } : {}),
      }),
      deps.log,
    );
}
