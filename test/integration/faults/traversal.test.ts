/**
 * R6 on every route that takes an operation ID: the CLI (`bin/asyncjob start`), the client, an agent's MCP
 * `start_operation` tool, and the workflow started directly (as a parent workflow or another SDK would). Each ID of
 * the traversal corpus is refused before anything exists (no workflow, no journal entry), and no file appears
 * outside the artifact root: its parent folder is listed before and after.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { processDeps } from '../../../src/cli/deps';
import { runCli } from '../../../src/cli/run-cli';
import { AsyncJobInputError } from '../../../src/client';
import { FileArtifactStore } from '../../../src/adapters/artifacts/artifact-store';
import { agentNamed, agentPolicyFrom, agentServerFactory } from '../../../src/mcp';
import { TRAVERSAL_CORPUS } from '../../security/traversal-corpus';
import { startFaultWorld, type FaultWorld, type WorkerProcess } from './fault-harness';

const BIN = path.join(__dirname, '..', '..', '..', 'bin', 'asyncjob');

/** Runs `bin/asyncjob` as a user would; resolves with its exit code and output. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('R6: no operation ID reaches the filesystem, on any route', () => {
  let world: FaultWorld;
  let worker: WorkerProcess;
  let parentBefore: string[];
  let mcp: McpClient;

  beforeAll(async () => {
    world = await startFaultWorld('traversal');
    worker = world.spawnWorker();
    await worker.ready;
    parentBefore = readdirSync(path.dirname(world.artifactsDir)).sort();
    const factory = agentServerFactory({
      client: world.client,
      storeLocation: `sqlite:${world.storeFile}`,
      artifacts: new FileArtifactStore(world.artifactsDir),
      env: {},
      log: () => undefined,
    });
    const policy = agentPolicyFrom(
      {
        version: 1,
        authorisedBy: 'policy:traversal-test',
        stdioIdentity: 'agent:traversal',
        agents: [
          {
            identity: 'agent:traversal',
            providers: [
              {
                name: world.provider('rest'),
                maxCreateDeadline: '1m',
                maxResultDeadline: '10m',
                maxStatusRequests: 10,
              },
            ],
          },
        ],
      },
      'traversal-test',
      {},
    );
    const server = factory(agentNamed(policy, 'agent:traversal')!);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    mcp = new McpClient({ name: 'traversal-test', version: '1.0.0' });
    await mcp.connect(clientSide);
  });

  afterAll(async () => {
    await mcp?.close();
    worker?.kill('SIGTERM');
    await worker?.exited;
    await world?.stop();
  });

  /** Nothing of `operationId` exists anywhere: no workflow, no journal. */
  async function nothingExists(operationId: string): Promise<void> {
    await expect(world.temporal.workflow.getHandle(operationId).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
    expect(await world.store.entries(operationId)).toEqual([]);
  }

  it.each(TRAVERSAL_CORPUS.filter((id) => !id.includes('\u0000')).map((id) => [JSON.stringify(id).slice(0, 30), id]))(
    'R6: the client refuses the operation ID %s before anything is created',
    async (_label, operationId) => {
      const request = { ...world.request('rest'), operationId };
      await expect(world.client.start(request)).rejects.toBeInstanceOf(AsyncJobInputError);
      if (operationId.length > 0 && operationId.length <= 1000) await nothingExists(operationId);
    },
  );

  it('R6: a NUL byte in an operation ID is refused by the client', async () => {
    const request = { ...world.request('rest'), operationId: 'op\u0000x' };
    await expect(world.client.start(request)).rejects.toBeInstanceOf(AsyncJobInputError);
  });

  /** `asyncjob start` for `operationId`, every other argument valid. */
  const startArgs = (operationId: string): string[] => [
    'start',
    '--provider',
    world.provider('rest'),
    '--operation-id',
    operationId,
    '--payload',
    '{"report":"x"}',
    '--started-by',
    'service:traversal-test',
    '--authorised-by',
    'policy:traversal-test',
    '--create-deadline',
    '1m',
    '--result-deadline',
    '10m',
  ];

  it('R6: `asyncjob start` refuses each ID with exit 2, naming the operation ID', async () => {
    // The whole corpus through the CLI's own entry function with the real process world (a NUL byte cannot be a
    // process argument), and two IDs through `bin/asyncjob` itself.
    const env = { TEMPORAL_ADDRESS: inject('temporalAddress'), ASYNCJOB_TASK_QUEUE: world.taskQueue };
    Object.assign(process.env, env);
    for (const operationId of TRAVERSAL_CORPUS) {
      let out = '';
      const deps = { ...processDeps(), stdout: (t: string) => (out += t), stderr: (t: string) => (out += t) };
      expect(await runCli(startArgs(operationId), deps), JSON.stringify(operationId)).toBe(2);
      expect(out).toMatch(/operationId/);
    }
    for (const operationId of ['..', 'a/b']) {
      const run = await cli(startArgs(operationId), env);
      expect(run.code, `${JSON.stringify(operationId)}: ${run.out}`).toBe(2);
      expect(run.out).toMatch(/operationId/);
    }
  });

  it('R6: the MCP start_operation tool refuses each ID', async () => {
    for (const operationId of TRAVERSAL_CORPUS) {
      const result = (await mcp.callTool({
        name: 'start_operation',
        arguments: { operationId, provider: world.provider('rest'), payload: { report: 'x' } },
      })) as CallToolResult;
      expect(result.isError, JSON.stringify(operationId)).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(/operationId/);
    }
  });

  it('R6: the workflow started directly refuses a request whose operation ID could name a path', async () => {
    // The whole corpus, each as the workflow ID too, as a parent workflow would start it: the server takes every one
    // as a workflow ID, so the workflow's own check is what refuses it.
    const failures = await Promise.all(
      TRAVERSAL_CORPUS.map(async (operationId) => {
        const request = { ...world.request('rest'), operationId };
        const failure = await world.temporal.workflow
          .execute('AsyncJobWorkflow', {
            taskQueue: world.taskQueue,
            workflowId: operationId,
            args: [{ request, idempotencyToken: 'tok'.repeat(10), traceId: '0af7651916cd43dd8448eb211c80319c' }],
          })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        return { operationId, failure };
      }),
    );
    for (const { operationId, failure } of failures) {
      const label = JSON.stringify(operationId);
      expect(failure, label).toBeInstanceOf(WorkflowFailedError);
      expect(String((failure as WorkflowFailedError).cause?.message), label).toMatch(/operationId/);
      expect(await world.store.entries(operationId), label).toEqual([]);
    }
  });

  it('R6: no file was created beside the artifact root by any route', () => {
    expect(readdirSync(path.dirname(world.artifactsDir)).sort()).toEqual(parentBefore);
  });
});
