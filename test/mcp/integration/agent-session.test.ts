/**
 * Agents over MCP end to end (G1, G2, G3): the SDK's own MCP client talks to `asyncjob mcp` over stdio (a
 * spawned process) and over Streamable HTTP, against a real dev server, a real worker and the simulator. Every
 * tool output is checked by the SDK client against its declared output schema, and the provider credential is
 * searched for in every tool output, the journal and the workflow histories.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OperationNotFoundError } from '../../../src/client';
import { FileArtifactStore } from '../../../src/adapters/artifacts/artifact-store';
import { agentServerFactory, loadAgentPolicy, startHttpServer, type RunningHttpServer } from '../../../src/mcp';
import { runOn } from '../../integration/front-door-cli';
import { uniqueId } from '../../setup/temporal';
import { SIM_TOKEN, startHarness, type Harness } from '../../workflows/harness';

const ALPHA_TOKEN = `alpha-${createHash('sha256').update(String(Math.random())).digest('hex').slice(0, 24)}`;
const BETA_TOKEN = `beta-${createHash('sha256').update(String(Math.random())).digest('hex').slice(0, 24)}`;
const scripts = {
  progressing: {
    steps: [{ state: 'queued', polls: 1 }, { state: 'running', polls: 2, progress: 50 }, { state: 'succeeded' }],
    result: {
      kind: 'json',
      body: {
        rows: [
          { region: 'north', sales: 1200 },
          { region: 'south', sales: 900 },
        ],
      },
    },
  },
  forever: { steps: [{ state: 'running' }] },
  // Running for 35 reads (5-10 s at this policy): the agent's extension request comes long before the job ends,
  // even with reads inside one activity (no workflow round trip between them) on a busy machine.
  longer: { steps: [{ state: 'running', polls: 35 }, { state: 'succeeded' }] },
};

/** Every tool answer of the run, for the secret search and (ASYNCJOB_MCP_TRANSCRIPT=1) the docs' transcript. */
const outputs: string[] = [];

type ToolAnswer = { error: string | null; data: Record<string, unknown> };

async function call(
  client: Client,
  who: string,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolAnswer> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = JSON.stringify(result);
  outputs.push(text);
  if (process.env.ASYNCJOB_MCP_TRANSCRIPT === '1')
    console.log(
      `${who} -> ${name} ${JSON.stringify(args)}\n<- ${result.isError ? (result.content[0] as { text: string }).text : JSON.stringify(result.structuredContent)}\n`,
    );
  if (result.isError) return { error: (result.content[0] as { text: string }).text, data: {} };
  return { error: null, data: result.structuredContent as Record<string, unknown> };
}

type Operation = {
  localState: string;
  final: boolean;
  changeToken: string;
  escalation: { reason: string; text: string } | null;
  approvals: { approvedBy: string; option: string }[];
};

/** The states of a job being polled (`observing` is shown once the workflow's copy is refreshed, P8). */
const POLLING_STATES = ['accepted', 'observing'];

/** Waits with wait_for_change until `until` holds, as an agent would: no loop on get_operation. */
async function waitUntil(
  client: Client,
  who: string,
  operationId: string,
  until: (op: Operation) => boolean,
): Promise<Operation> {
  const now = (await call(client, who, 'get_operation', { operationId })).data.operation as Operation;
  if (until(now)) return now;
  let since = now.changeToken;
  for (let round = 0; round < 40; round++) {
    const { error, data } = await call(client, who, 'wait_for_change', {
      operationId,
      waitMs: 10_000,
      sinceChangeToken: since,
    });
    expect(error).toBeNull();
    const operation = data.operation as Operation;
    if (until(operation)) return operation;
    since = operation.changeToken;
  }
  throw new Error(`operation ${operationId} never reached the expected state`);
}

/** A history as text with every payload's base64 data decoded, so it is searched as the text it carries. */
function decodedHistory(history: unknown): string {
  const text = JSON.stringify(history);
  const payloads = [...text.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map((m) =>
    Buffer.from(m[1]!, 'base64').toString('utf8'),
  );
  return [text, ...payloads].join('\n');
}

describe('agents over MCP (G1, G2, G3)', () => {
  let h: Harness;
  let policyFile: string;
  let stdio: Client;
  let http: RunningHttpServer;
  const httpClients: Client[] = [];
  const operationIds: string[] = [];
  const env = (): Record<string, string> => ({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    ASYNCJOB_TASK_QUEUE: h.taskQueue,
    ASYNCJOB_STORE: `sqlite:${path.join(h.dataDir, 'asyncjob.db')}`,
    ASYNCJOB_ARTIFACTS_DIR: path.join(h.dataDir, 'artifacts'),
    ALPHA_MCP_TOKEN: ALPHA_TOKEN,
  });

  async function httpClient(token: string | undefined): Promise<Client> {
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(http.url), {
        requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
      }),
    );
    httpClients.push(client);
    return client;
  }

  beforeAll(async () => {
    h = await startHarness('mcp', { scenarios: { rest: { scripts } } as never });
    const provider = h.provider('rest');
    const grant = (maxStatusRequests: number) =>
      `      - name: ${provider}\n        maxCreateDeadline: 20s\n        maxResultDeadline: 60s\n        maxStatusRequests: ${maxStatusRequests}\n        pollPolicy: { baseDelayMs: 150, maxDelayMs: 300, notFoundWindowMs: 2000, cancelDeadlineMs: 5000, maxHintMs: 60000 }\n`;
    policyFile = path.join(h.dataDir, 'agents.yaml');
    writeFileSync(
      policyFile,
      `version: 1\nauthorisedBy: policy:mcp-tests\nstdioIdentity: agent:alpha\nagents:\n` +
        `  - identity: agent:alpha\n    token: { secretEnv: ALPHA_MCP_TOKEN }\n    providers:\n${grant(40)}    mayCancel: true\n    results: { read: body, maxBodyBytes: 4096 }\n    maxWait: 15s\n` +
        `  - identity: agent:beta\n    token: { sha256: ${createHash('sha256').update(BETA_TOKEN).digest('hex')} }\n    providers:\n${grant(5)}    mayCancel: false\n`,
    );
    stdio = new Client({ name: 'test-agent', version: '1.0.0' });
    await stdio.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['bin/asyncjob', 'mcp', '--policy', policyFile],
        env: { ...(process.env as Record<string, string>), ...env() },
        stderr: 'pipe',
      }),
    );
    http = await startHttpServer({
      policy: loadAgentPolicy(policyFile, env()),
      serverFor: agentServerFactory({
        client: h.client,
        storeLocation: env().ASYNCJOB_STORE!,
        artifacts: new FileArtifactStore(env().ASYNCJOB_ARTIFACTS_DIR!),
        env: env(),
        log: () => undefined,
      }),
      log: () => undefined,
    });
  });
  afterAll(async () => {
    await Promise.all(httpClients.map((c) => c.close()));
    await stdio?.close();
    await http?.close();
    await h?.stop();
  });

  it('G2, G3: the tools declare input and output schemas; none decides, none takes a credential', async () => {
    const { tools } = await stdio.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'get_audit_story',
      'get_operation',
      'get_result',
      'list_providers',
      'request_cancel',
      'request_extension',
      'start_operation',
      'wait_for_change',
    ]);
    for (const tool of tools) {
      expect(tool.outputSchema, tool.name).toBeDefined();
      expect(tool.description!.length, tool.name).toBeGreaterThan(80);
      const credentialLike = Object.keys(tool.inputSchema.properties ?? {}).filter((key) =>
        /secret|password|credential|authori[sz]ation|api.?key|bearer|^token$|approv/i.test(key),
      );
      expect(credentialLike, tool.name).toEqual([]);
    }
    const { data } = await call(stdio, 'alpha', 'list_providers');
    expect(data).toMatchObject({
      identity: 'agent:alpha',
      mayCancel: true,
      providers: [{ name: h.provider('rest'), maxStatusRequests: 40 }],
    });
  });

  it('G3: over stdio an agent starts a job, waits with wait_for_change, reads the validated result and the story naming it', async () => {
    const operationId = uniqueId('mcp-report');
    operationIds.push(operationId);
    const request = {
      operationId,
      provider: h.provider('rest'),
      payload: { report: 'monthly-sales', scenario: 'progressing' },
    };
    const started = await call(stdio, 'alpha', 'start_operation', request);
    expect(started.error).toBeNull();
    expect(started.data).toMatchObject({ operationId, joined: false, operation: { startedBy: 'agent:alpha' } });
    expect((await call(stdio, 'alpha', 'start_operation', request)).data).toMatchObject({ joined: true });
    expect((await call(stdio, 'alpha', 'start_operation', { ...request, payload: { report: 'other' } })).error).toMatch(
      /^ASYNCJOB_ERR_FINGERPRINT_MISMATCH: /,
    );

    const done = await waitUntil(stdio, 'alpha', operationId, (op) => op.final);
    expect(done.localState).toBe('succeeded');
    const result = await call(stdio, 'alpha', 'get_result', { operationId });
    expect(result.data).toMatchObject({
      summary: { validation: 'valid' },
      body: { truncated: false },
      bodyWithheld: null,
    });
    expect(JSON.parse((result.data.body as { text: string }).text)).toMatchObject({
      rows: [{ region: 'north' }, { region: 'south' }],
    });
    expect(JSON.stringify(result.data)).not.toContain('file://');

    const story = await call(stdio, 'alpha', 'get_audit_story', { operationId });
    expect(story.data).toMatchObject({ chainIntact: true });
    expect(story.data.text).toContain('started by agent:alpha');
    expect(story.data.text).toContain('authorised by policy:mcp-tests');
    expect(story.data.text).toMatch(/result_collecting -> succeeded/);
  });

  it('G1: a start outside the policy is refused naming the bound, and nothing is created', async () => {
    const alpha = await httpClient(ALPHA_TOKEN);
    const operationId = uniqueId('mcp-too-long');
    const refused = await call(alpha, 'alpha', 'start_operation', {
      operationId,
      provider: h.provider('rest'),
      payload: { report: 'yearly' },
      resultDeadlineMs: 3_600_000,
    });
    expect(refused.error).toMatch(
      /^ASYNCJOB_ERR_POLICY_REFUSED: bound maxResultDeadline: resultDeadlineMs 3600000 ms is over .* \(at most 60000 ms\)$/,
    );
    await expect(h.client.describeOperation(operationId)).rejects.toBeInstanceOf(OperationNotFoundError);
    const elsewhere = await call(alpha, 'alpha', 'start_operation', {
      operationId,
      provider: h.provider('lro'),
      payload: {},
    });
    expect(elsewhere.error).toMatch(/^ASYNCJOB_ERR_POLICY_REFUSED: bound providers: /);
  });

  it('an HTTP request without a known bearer token is refused (401), and the SDK client cannot connect with one', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer not-a-known-token' },
      { authorization: `Basic ${ALPHA_TOKEN}` },
    ];
    for (const headers of attempts) {
      const answer = await fetch(http.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(initialize),
      });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await answer.text()).toContain('ASYNCJOB_ERR_UNAUTHENTICATED');
    }
    await expect(httpClient('not-a-known-token')).rejects.toThrow();

    // A session belongs to the agent that opened it: another agent's token cannot act through it.
    const betaTransport = new StreamableHTTPClientTransport(new URL(http.url), {
      requestInit: { headers: { authorization: `Bearer ${BETA_TOKEN}` } },
    });
    const beta = new Client({ name: 'test-agent', version: '1.0.0' });
    await beta.connect(betaTransport);
    httpClients.push(beta);
    const hijack = await fetch(http.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${ALPHA_TOKEN}`,
        'mcp-session-id': betaTransport.sessionId!,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    expect(hijack.status).toBe(403);
    expect(await hijack.text()).toContain('ASYNCJOB_ERR_UNAUTHENTICATED: this session belongs to another agent');
  });

  it('G1, G3: another agent cannot read, wait on, cancel or take over an operation it did not start; it may not cancel at all', async () => {
    const beta = await httpClient(BETA_TOKEN);
    const operationId = operationIds[0]!;
    for (const [tool, args] of [
      ['get_operation', { operationId }],
      ['wait_for_change', { operationId, waitMs: 100 }],
      ['get_result', { operationId }],
      ['get_audit_story', { operationId }],
    ] as const) {
      const { error } = await call(beta, 'beta', tool, args);
      expect(error, tool).toBe(`ASYNCJOB_ERR_NOT_FOUND: no operation ${operationId} started by agent:beta`);
    }
    expect((await call(beta, 'beta', 'request_cancel', { operationId, reason: 'mine now' })).error).toMatch(
      /^ASYNCJOB_ERR_POLICY_REFUSED: bound mayCancel/,
    );
    const taken = await call(beta, 'beta', 'start_operation', {
      operationId,
      provider: h.provider('rest'),
      payload: { report: 'monthly-sales', scenario: 'progressing' },
    });
    expect(taken.error).toBe(
      `ASYNCJOB_ERR_OPERATION_ID_TAKEN: operation ID ${operationId} is used by another caller; choose another operation ID`,
    );
    // The same agent over HTTP reads what it started over stdio: identity, not transport, decides.
    const alpha = await httpClient(ALPHA_TOKEN);
    expect((await call(alpha, 'alpha', 'get_operation', { operationId })).data).toMatchObject({
      operation: { localState: 'succeeded' },
    });
  });

  it('G3, X1: an agent cancel is recorded with the agent as requestedBy; a second one is refused with the workflow code', async () => {
    const operationId = uniqueId('mcp-cancel');
    operationIds.push(operationId);
    await call(stdio, 'alpha', 'start_operation', {
      operationId,
      provider: h.provider('rest'),
      payload: { report: 'q', scenario: 'forever' },
    });
    const polling = await waitUntil(stdio, 'alpha', operationId, (op) => POLLING_STATES.includes(op.localState));
    // Nothing an agent acts on changes while the job runs: the wait is bounded and says it timed out.
    const quiet = await call(stdio, 'alpha', 'wait_for_change', {
      operationId,
      sinceChangeToken: polling.changeToken,
      waitMs: 600,
    });
    expect(quiet.data).toMatchObject({ changed: false, timedOut: true, operation: { localState: polling.localState } });
    const resource = await stdio.readResource({ uri: `asyncjob://operations/${operationId}` });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({
      operationId,
      startedBy: 'agent:alpha',
    });
    const cancelled = await call(stdio, 'alpha', 'request_cancel', {
      operationId,
      reason: 'the user no longer needs it',
    });
    expect(cancelled.data).toMatchObject({ accepted: true, operation: { cancel: { requestedBy: 'agent:alpha' } } });
    expect((await call(stdio, 'alpha', 'request_cancel', { operationId, reason: 'again' })).error).toMatch(
      /^ASYNCJOB_ERR_CANCEL_ALREADY_REQUESTED: /,
    );
    const end = await waitUntil(stdio, 'alpha', operationId, (op) => op.final);
    expect(end.localState).toBe('cancelled');
  });

  it('asyncjob mcp --http serves the same tools at the URL it prints, to a known token only', async () => {
    const child = spawn(process.execPath, ['bin/asyncjob', 'mcp', '--policy', policyFile, '--http'], {
      env: { ...process.env, ...env() },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString('utf8');
          const match = /listening on (http:\/\/\S+)/.exec(stderr);
          if (match) resolve(match[1]!);
        });
        child.once('exit', (code) => reject(new Error(`asyncjob mcp exited ${code}: ${stderr}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const agent = new Client({ name: 'test-agent', version: '1.0.0' });
      await agent.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${BETA_TOKEN}` } },
        }),
      );
      expect((await call(agent, 'beta', 'list_providers')).data).toMatchObject({
        identity: 'agent:beta',
        mayCancel: false,
      });
      await agent.close();
      expect((await fetch(url, { method: 'POST', body: '{}' })).status).toBe(401);
      expect(stderr).not.toContain(BETA_TOKEN);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('G2, A1: an agent asks for an extension, cannot grant it, a person approves with asyncjob decide, the agent sees it and the job finishes', async () => {
    const operationId = uniqueId('mcp-extend');
    operationIds.push(operationId);
    await call(stdio, 'alpha', 'start_operation', {
      operationId,
      provider: h.provider('rest'),
      payload: { report: 'q', scenario: 'longer' },
      maxStatusRequests: 40,
    });
    await waitUntil(stdio, 'alpha', operationId, (op) => POLLING_STATES.includes(op.localState));
    const asked = await call(stdio, 'alpha', 'request_extension', {
      operationId,
      reason: 'the export is larger than usual',
      extendMs: 30_000,
      extraStatusRequests: 4,
    });
    expect(asked.error).toBeNull();
    expect(asked.data).toMatchObject({ accepted: true });
    const escalated = await waitUntil(stdio, 'alpha', operationId, (op) => op.escalation !== null);
    expect(escalated.escalation?.reason).toBe('extension_requested');
    expect(escalated.escalation?.text).toContain('agent:alpha asks for 30 s more and 4 more status checks');
    // Asking again while a person has not answered joins the open escalation; nothing new is raised.
    const again = await call(stdio, 'alpha', 'request_extension', { operationId, reason: 'still waiting' });
    expect(again.data).toMatchObject({
      accepted: true,
      operation: { escalation: { reason: 'extension_requested' } },
    });
    // No tool grants it, and the requester cannot approve it even where people decide.
    const noDecide = (await stdio.callTool({ name: 'decide_operation', arguments: { operationId } })) as CallToolResult;
    expect(noDecide.isError).toBe(true);
    // Arguments outside a tool's input schema: refused by the SDK before the tool runs, naming the field (agents.md).
    const malformed = await call(stdio, 'alpha', 'get_operation', { operationId: 42 });
    expect(malformed.error).toMatch(
      /^MCP error -32602: Input validation error: Invalid arguments for tool get_operation: [\s\S]*operationId/,
    );
    const own = await runOn(h.client, [
      ...['decide', operationId, '--option', 'extend', '--extend', '30s', '--checks', '4'],
      ...['--by', 'agent:alpha', '--reason', 'approving myself', '--json'],
    ]);
    expect(own.code).toBe(3);
    expect(own.docs[0]).toMatchObject({ code: 'ASYNCJOB_ERR_SELF_APPROVAL' });
    const decided = await runOn(h.client, [
      'decide',
      operationId,
      '--option',
      'extend',
      '--extend',
      '30s',
      '--checks',
      '4',
      '--by',
      'alice@example.com',
      '--reason',
      'larger export expected',
      '--json',
    ]);
    expect(decided.code).toBe(0);
    const seen = await waitUntil(stdio, 'alpha', operationId, (op) => op.approvals.length > 0);
    expect(seen.approvals[0]).toMatchObject({ approvedBy: 'alice@example.com', option: 'extend' });
    expect((await waitUntil(stdio, 'alpha', operationId, (op) => op.final)).localState).toBe('succeeded');
    const story = await call(stdio, 'alpha', 'get_audit_story', { operationId });
    expect(story.data.text).toContain('decision extend by alice@example.com');
  });

  it('G3, T4: the provider credential is in no tool output, the journal or any workflow history', async () => {
    expect(outputs.length).toBeGreaterThan(20);
    for (const output of outputs) {
      expect(output).not.toContain(SIM_TOKEN);
      expect(output).not.toMatch(/\n\s+at .+:\d+:\d+/); // never a stack trace
    }
    const storeDir = h.dataDir;
    const storeFiles = readdirSync(storeDir).filter((f) => f.startsWith('asyncjob.db'));
    const bytes = Buffer.concat(storeFiles.map((f) => readFileSync(path.join(storeDir, f))));
    expect(bytes.includes(Buffer.from(operationIds[0]!))).toBe(true);
    expect(bytes.includes(Buffer.from(SIM_TOKEN))).toBe(false);
    for (const operationId of operationIds) {
      const history = decodedHistory(await h.env.client.workflow.getHandle(operationId).fetchHistory());
      expect(history).toContain('agent:alpha');
      expect(history).not.toContain(SIM_TOKEN);
      expect(history).not.toContain(ALPHA_TOKEN);
    }
  });
});
