/**
 * `start_operation` carries operation variables (C5): its input schema takes and documents them, the agent's start
 * request holds them, the adapter's declarations (when the server reads the document) go with the start so a misfit
 * is refused before anything is created, and the operation an agent sees shows the variables and any refusal.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { StartOptions, StartedRun } from '../../src/client';
import { newOperationRecord, type OperationRecord, type StartRequest } from '../../src/core/operation';
import { variableDeclarationsSchema } from '../../src/core/operation-variables';
import { loadAgentPolicy } from '../../src/mcp';
import { AgentTools, type AgentClient } from '../../src/mcp/agent-tools';
import { boundedStartRequest } from '../../src/mcp/bounds';
import { createAgentServer } from '../../src/mcp/server';
import { startInputShape } from '../../src/mcp/tool-schemas';
import { agentOperation } from '../../src/mcp/views';

const policy = loadAgentPolicy('examples/agents/policy.yaml', { REPORT_WRITER_MCP_TOKEN: 'writer-token-0123456789' });
const agent = policy.agents[0]!;
const input = {
  operationId: 'op-7',
  provider: 'demo-reports',
  payload: { report: 'sales' },
  variables: { region: 'eu-west-1' },
};

/** A client that records its starts and answers `get` with the record the start would make. */
class FakeAgentClient implements Partial<AgentClient> {
  starts: { request: StartRequest; options: StartOptions | undefined }[] = [];
  record: OperationRecord | undefined;
  async start(request: StartRequest, options?: StartOptions): Promise<StartedRun> {
    this.starts.push({ request, options });
    const made = newOperationRecord({
      request,
      nowMs: Date.now(),
      idempotencyToken: 'AAECAwQFBgcICQoLDA0ODw',
      traceId: '0af7651916cd43dd8448eb211c80319c',
    });
    if (made.kind !== 'ok') throw new Error(JSON.stringify(made.issues));
    this.record = made.record;
    return {
      operationId: request.operationId,
      runId: 'run-1',
      joined: false,
      requestFingerprint: made.record.requestFingerprint,
      traceId: made.record.traceId,
      executionStatus: 'RUNNING',
      replaced: null,
    };
  }
  async get(): Promise<OperationRecord> {
    return this.record!;
  }
}

function toolsWith(client: FakeAgentClient, declared?: unknown): AgentTools {
  return new AgentTools({
    client: client as unknown as AgentClient,
    agent,
    artifacts: {} as never,
    story: async () => {
      throw new Error('not used');
    },
    ...(declared !== undefined ? { declaredVariables: async () => variableDeclarationsSchema.parse(declared) } : {}),
  });
}

describe('start_operation and operation variables (C5)', () => {
  it('C5: the input schema takes variables as strings and says they are never a secret', () => {
    const schema = z.object(startInputShape);
    expect(schema.safeParse(input).success).toBe(true);
    expect(schema.safeParse({ ...input, variables: { region: 5 } }).success).toBe(false);
    const json = JSON.stringify(z.toJSONSchema(schema));
    expect(json).toContain('"variables"');
    expect(json).toContain('never a secret');
  });

  it('C5: the start request an agent makes carries its variables', () => {
    expect(boundedStartRequest(agent, input).variables).toEqual({ region: 'eu-west-1' });
    const { variables: _none, ...withoutVariables } = input;
    expect(boundedStartRequest(agent, withoutVariables)).not.toHaveProperty('variables');
  });

  it("C5: the start goes with the adapter's declarations, and the agent sees the variables as recorded", async () => {
    const client = new FakeAgentClient();
    const declared = { region: { default: 'us-east-1' } };
    const answer = await toolsWith(client, declared).start(input);
    expect(client.starts[0]!.request.variables).toEqual({ region: 'eu-west-1' });
    expect(client.starts[0]!.options).toEqual({ declaredVariables: variableDeclarationsSchema.parse(declared) });
    expect(answer.operation.variables).toEqual({ region: 'eu-west-1' });
    expect(answer.operation.refusal).toBeNull();
  });

  it('C5: without a readable document the start goes without declarations (the workflow checks them)', async () => {
    const client = new FakeAgentClient();
    await toolsWith(client).start(input);
    expect(client.starts[0]!.options).toEqual({});
  });

  it('C5: a refused operation shows the agent its code and each variable', () => {
    const made = newOperationRecord({
      request: { ...boundedStartRequest(agent, input) },
      nowMs: Date.now(),
      idempotencyToken: 'AAECAwQFBgcICQoLDA0ODw',
      traceId: '0af7651916cd43dd8448eb211c80319c',
    });
    if (made.kind !== 'ok') throw new Error('not made');
    const issues = [{ path: 'variables.region', message: 'not declared: the adapter declares no variables' }];
    const view = agentOperation({
      ...made.record,
      localState: 'failed',
      refusal: { code: 'ASYNCJOB_ERR_INVALID_VARIABLE', issues },
    });
    expect(view).toMatchObject({ final: true, refusal: { code: 'ASYNCJOB_ERR_INVALID_VARIABLE', issues } });
  });

  it("C5: list_providers shows each provider's declared variables when the server reads its document", async () => {
    const listed = async (declared?: unknown) => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await createAgentServer(toolsWith(new FakeAgentClient(), declared), () => undefined).connect(serverSide);
      const mcp = new McpClient({ name: 'variables-test', version: '1.0.0' });
      await mcp.connect(clientSide);
      try {
        const result = await mcp.callTool({ name: 'list_providers', arguments: {} });
        return (result.structuredContent as { providers: Record<string, unknown>[] }).providers[0];
      } finally {
        await mcp.close();
      }
    };
    const declared = {
      region: { description: 'where the job runs', pattern: '^[a-z]{2}-[a-z]+-[0-9]$', required: true },
      scope: { reserved: true, default: 'tenants/acme' },
    };
    expect((await listed(declared))?.variables).toEqual([
      {
        name: 'region',
        description: 'where the job runs',
        type: 'string',
        required: true,
        pattern: '^[a-z]{2}-[a-z]+-[0-9]$',
        maxLength: 500,
        mayHoldSlash: false,
      },
      { name: 'scope', type: 'string', required: false, default: 'tenants/acme', maxLength: 500, mayHoldSlash: true },
    ]);
    expect(await listed()).not.toHaveProperty('variables');
  });
});
