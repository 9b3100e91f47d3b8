/**
 * The Nexus set-up of docs/nexus.md as a user takes it, against the run's dev server: the callers' namespace and
 * the endpoints made with the Temporal CLI (`ensureNexusSetup`), `asyncjob worker --nexus-endpoint NAME` and
 * `asyncjob worker` without it as separate processes of the real bin, a caller workflow in the callers' namespace
 * calling `runJob` through an endpoint, and `asyncjob doctor` with ASYNCJOB_NEXUS_ENDPOINT, its findings' fix
 * commands run as printed.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { NexusOperationFailure, TimeoutFailure, TimeoutType } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startUserWorkflowWorker, type UserWorkflowWorker } from './user-workflows';
import type { runJobWithin, runReportThroughNexus } from './nexus/callers';
import { writeRestContract } from './rest-contract';
import { AsyncJobClient } from '../../src/client';
import { OperationNotFoundError } from '../../src/client/errors';
import { workflowActor } from '../../src/core/actor';
import { ensureNexusSetup } from '../../src/dev/nexus-setup';
import { ensureTemporalCli } from '../../src/dev/temporal-cli';
import type { RunJobInput } from '../../src/nexus/service';
import { startSimulator, type Simulator } from '../../src/simulator';
import { connectTestEnvironment, uniqueId, weeklyReportRequest } from '../setup/temporal';

const BIN = path.join(__dirname, '..', '..', 'bin', 'asyncjob');
const TOKEN = `nexus-proc-${randomBytes(12).toString('hex')}`;

/** A running `asyncjob worker` process and everything it has printed. */
interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Spawns `asyncjob ARGS` as a user runs it; resolves once its start line names `taskQueue`. */
async function startWorkerProcess(args: string[], env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = `asyncjob worker: task queue ${env.ASYNCJOB_TASK_QUEUE},`;
  const end = Date.now() + 90_000;
  while (!output.includes(started) && Date.now() < end && child.exitCode === null)
    await new Promise((r) => setTimeout(r, 100));
  expect(output).toContain(started);
  return { child, output: () => output, exited };
}

/** The line in which a worker process says what it serves on `taskQueue`. */
function startLineOf(worker: WorkerProcess, taskQueue: string): string | undefined {
  return worker
    .output()
    .split('\n')
    .find((line) => line.includes(`asyncjob worker: task queue ${taskQueue},`));
}

/** Runs `asyncjob ARGS` to its end: its exit code and what it printed (stdout, then stderr). */
function runAsyncjob(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out: stdout + stderr })));
}

/** The Temporal CLI command a doctor finding prints as its fix, without its "(or ...)" alternative. */
function fixCommandOf(out: string, check: string): string[] {
  const line = out.split('\n').find((l) => l.startsWith(`PROBLEM  ${check}: `));
  expect(line, out).toBeDefined();
  const fix = line!.slice(line!.indexOf('(fix: ') + '(fix: '.length, -1).replace(/ \(or set .*\)$/, '');
  const [program, ...args] = fix.split(' ');
  expect(program).toBe('temporal');
  return args;
}

describe('asyncjob worker --nexus-endpoint and asyncjob doctor as a user runs them', () => {
  let sim: Simulator;
  let env: TestWorkflowEnvironment;
  let callers: Client;
  let callerWorker: UserWorkflowWorker;
  let served: WorkerProcess;
  let unserved: WorkerProcess;
  let servedEnv: Record<string, string>;
  const address = inject('temporalAddress');
  const namespace = inject('temporalNamespace');
  const callerNamespace = uniqueId('callers').toLowerCase();
  const callerQueue = uniqueId('nexus-proc-callers');
  const provider = `reports-${uniqueId('p').toLowerCase()}`.slice(0, 60);
  const servedQueue = uniqueId('nexus-proc');
  const unservedQueue = uniqueId('nexus-proc-plain');
  const endpointName = (prefix: string) => uniqueId(prefix).replace(/[^A-Za-z0-9-]/g, '-');
  const servedEndpoint = endpointName('asyncjob');
  const unservedEndpoint = endpointName('asyncjob-plain');

  beforeAll(async () => {
    sim = await startSimulator({ dialect: 'rest', token: TOKEN, seed: 5 });
    const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-nexus-proc-'));
    const contractFile = await writeRestContract(dir, provider, sim.url);
    const policyFile = path.join(dir, 'policy.yaml');
    await writeFile(
      policyFile,
      ['version: 1', 'deciders:', '  rules:', '    - { name: ops, who: [ops@example.com], options: [close] }', ''].join(
        '\n',
      ),
    );
    const workerEnv = (taskQueue: string, name: string): Record<string, string> => ({
      PATH: process.env.PATH!,
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: namespace,
      ASYNCJOB_TASK_QUEUE: taskQueue,
      ASYNCJOB_STORE: `sqlite:${path.join(dir, `${name}.db`)}`,
      ASYNCJOB_ARTIFACTS_DIR: path.join(dir, `${name}-artifacts`),
      ASYNCJOB_PROVIDERS: contractFile,
      ASYNCJOB_DECIDER_POLICY: policyFile,
      REPORTS_TOKEN: TOKEN,
    });
    servedEnv = workerEnv(servedQueue, 'served');
    // The operator's set-up: the callers' namespace, and an endpoint in front of each worker's queue.
    for (const [endpoint, targetTaskQueue] of [
      [servedEndpoint, servedQueue],
      [unservedEndpoint, unservedQueue],
    ] as const)
      await ensureNexusSetup({ address, callerNamespace, endpoint, targetNamespace: namespace, targetTaskQueue });
    [served, unserved] = await Promise.all([
      startWorkerProcess(['worker', '--nexus-endpoint', servedEndpoint], servedEnv),
      startWorkerProcess(['worker'], workerEnv(unservedQueue, 'plain')),
    ]);
    env = await connectTestEnvironment();
    callerWorker = await startUserWorkflowWorker(env.nativeConnection, {
      namespace: callerNamespace,
      taskQueue: callerQueue,
      workflowsPath: path.join(__dirname, 'nexus', 'callers.ts'),
    });
    callers = new Client({ connection: env.connection, namespace: callerNamespace });
  });

  afterAll(async () => {
    await callerWorker?.stop();
    for (const worker of [served, unserved]) {
      if (worker?.child.exitCode !== null) continue;
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await env?.teardown();
    await sim?.stop();
  });

  /** A weekly report as a caller workflow asks for it: no starter (the calling workflow is the starter). */
  function runJobInput(): RunJobInput {
    const { startedBy: _ignored, ...request } = weeklyReportRequest(uniqueId('op-nexus-proc'), provider);
    return request;
  }

  it('N4: asyncjob worker --nexus-endpoint serves the asyncjob service: a caller workflow in another namespace runs runJob through the endpoint to succeeded as its recorded starter, and the start line names the endpoint', async () => {
    const startLine = startLineOf(served, servedQueue);
    expect(startLine).toContain(`, Nexus service asyncjob for endpoint ${servedEndpoint}`);

    const input = runJobInput();
    const caller = await callers.workflow.start<typeof runReportThroughNexus>('runReportThroughNexus', {
      taskQueue: callerQueue,
      workflowId: uniqueId('caller'),
      args: [input, servedEndpoint],
    });
    expect(await caller.result()).toMatchObject({ operationId: input.operationId, localState: 'succeeded' });
    const client = new AsyncJobClient({ client: env.client, taskQueue: servedQueue });
    const record = await client.get(input.operationId);
    expect(record.authorisation.startedBy).toBe(workflowActor(callerNamespace, caller.workflowId));
  });

  it('asyncjob worker without the setting does not serve the service: runJob through an endpoint to its queue is never handled, times out, and starts no operation', async () => {
    const startLine = startLineOf(unserved, unservedQueue);
    expect(startLine).toBeDefined();
    expect(startLine).not.toContain('Nexus');
    const input = runJobInput();
    const caller = await callers.workflow.start<typeof runJobWithin>('runJobWithin', {
      taskQueue: callerQueue,
      workflowId: uniqueId('caller-unserved'),
      args: [input, unservedEndpoint, 5_000],
    });
    const err = await caller.result().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const failure = (err as WorkflowFailedError).cause;
    expect(failure).toBeInstanceOf(NexusOperationFailure);
    expect(failure!.cause).toBeInstanceOf(TimeoutFailure);
    expect((failure!.cause as TimeoutFailure).timeoutType).toBe(TimeoutType.SCHEDULE_TO_CLOSE);
    const client = new AsyncJobClient({ client: env.client, taskQueue: unservedQueue });
    await expect(client.get(input.operationId)).rejects.toBeInstanceOf(OperationNotFoundError);
  });

  it('asyncjob doctor with ASYNCJOB_NEXUS_ENDPOINT passes for the endpoint that targets the worker: exit 0', async () => {
    const { code, out } = await runAsyncjob(['doctor'], { ...servedEnv, ASYNCJOB_NEXUS_ENDPOINT: servedEndpoint });
    expect(code, out).toBe(0);
    expect(out).toContain(
      `ok       nexus-endpoint: Nexus endpoint ${servedEndpoint} targets namespace ${namespace}, task queue ${servedQueue}\n`,
    );
    expect(out.trimEnd().split('\n').at(-1)).toBe('all checks passed');
  });

  it('asyncjob doctor reports an endpoint that does not exist with the command that creates it (exit 1); that command, run as printed, makes it pass', async () => {
    const endpoint = endpointName('asyncjob-missing');
    const doctorEnv = { ...servedEnv, ASYNCJOB_NEXUS_ENDPOINT: endpoint };
    const { code, out } = await runAsyncjob(['doctor'], doctorEnv);
    expect(code, out).toBe(1);
    expect(out).toContain(
      `PROBLEM  nexus-endpoint: Nexus endpoint ${endpoint} does not exist at ${address} (fix: temporal operator nexus endpoint create --name ${endpoint} --target-namespace ${namespace} --target-task-queue ${servedQueue} --address ${address})\n`,
    );
    expect(out.trimEnd().split('\n').at(-1)).toBe('1 problem: exit 1 (a setup problem)');

    await promisify(execFile)(ensureTemporalCli().path, fixCommandOf(out, 'nexus-endpoint'));
    const fixed = await runAsyncjob(['doctor'], doctorEnv);
    expect(fixed.code, fixed.out).toBe(0);
    expect(fixed.out).toContain(`ok       nexus-endpoint: Nexus endpoint ${endpoint} targets namespace ${namespace}`);
  });

  it('asyncjob doctor reports an endpoint that targets another task queue with the command that points it at the worker (exit 1); that command, run as printed, makes it pass', async () => {
    const endpoint = endpointName('asyncjob-elsewhere');
    const otherQueue = `${servedQueue}-other`;
    await promisify(execFile)(ensureTemporalCli().path, [
      ...['operator', 'nexus', 'endpoint', 'create', '--name', endpoint],
      ...['--target-namespace', namespace, '--target-task-queue', otherQueue, '--address', address],
    ]);
    const doctorEnv = { ...servedEnv, ASYNCJOB_NEXUS_ENDPOINT: endpoint };
    const { code, out } = await runAsyncjob(['doctor'], doctorEnv);
    expect(code, out).toBe(1);
    expect(out).toContain(
      `PROBLEM  nexus-endpoint: Nexus endpoint ${endpoint} targets namespace ${namespace}, task queue ${otherQueue}, not this worker (namespace ${namespace}, task queue ${servedQueue}) (fix: temporal operator nexus endpoint update --name ${endpoint} --target-namespace ${namespace} --target-task-queue ${servedQueue} --address ${address} (or set ASYNCJOB_NEXUS_ENDPOINT to the endpoint of this worker))\n`,
    );
    expect(out.trimEnd().split('\n').at(-1)).toBe('1 problem: exit 1 (a setup problem)');

    await promisify(execFile)(ensureTemporalCli().path, fixCommandOf(out, 'nexus-endpoint'));
    const fixed = await runAsyncjob(['doctor'], doctorEnv);
    expect(fixed.code, fixed.out).toBe(0);
    expect(fixed.out).toContain(
      `ok       nexus-endpoint: Nexus endpoint ${endpoint} targets namespace ${namespace}, task queue ${servedQueue}\n`,
    );
  });
});
