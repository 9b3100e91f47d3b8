/**
 * A prebuilt workflow bundle end to end: `asyncjob bundle --out FILE` writes it, and `asyncjob worker` started with
 * ASYNCJOB_WORKFLOW_BUNDLE=FILE runs its workflows (no bundling at start), names the bundle in its start line and
 * runs an operation to success. A bundle it cannot run is refused with exit 2 naming the variable, before anything
 * connects.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUILT_IN_PRESETS } from '../../src/adapters/providers/presets';
import { AsyncJobClient } from '../../src/client';
import { startSimulator, type Simulator } from '../../src/simulator';
import { connectTestEnvironment, uniqueId, weeklyReportRequest } from '../setup/temporal';

const BIN = path.join(__dirname, '..', '..', 'bin', 'asyncjob');
const TOKEN = `bundle-secret-${randomBytes(12).toString('hex')}`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `asyncjob ARGS...` with exactly `env` (plus PATH and HOME) to its end. */
function asyncjob(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('asyncjob worker with a prebuilt workflow bundle', () => {
  let dir: string;
  let bundleFile: string;
  let bundled: Run;
  let sim: Simulator;
  let worker: ChildProcess | undefined;
  const provider = `reports-${uniqueId('wb').toLowerCase()}`.slice(0, 60);
  const taskQueue = uniqueId('bundle');

  const workerEnv = () => ({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    ASYNCJOB_TASK_QUEUE: taskQueue,
    ASYNCJOB_STORE: `sqlite:${path.join(dir, 'asyncjob.db')}`,
    ASYNCJOB_ARTIFACTS_DIR: path.join(dir, 'artifacts'),
    ASYNCJOB_PROVIDERS: path.join(dir, `${provider}.json`),
    REPORTS_TOKEN: TOKEN,
  });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-worker-bundle-'));
    bundleFile = path.join(dir, 'workflow-bundle.js');
    sim = await startSimulator({ dialect: 'rest', token: TOKEN, seed: 5 });
    await writeFile(
      path.join(dir, `${provider}.json`),
      JSON.stringify({
        ...(BUILT_IN_PRESETS.rest as Record<string, unknown>),
        name: provider,
        baseUrl: sim.url,
        credential: { scheme: 'bearer', secretEnv: 'REPORTS_TOKEN' },
      }),
    );
    bundled = await asyncjob(['bundle', '--out', bundleFile], {});
  });

  afterAll(async () => {
    if (worker && worker.exitCode === null) worker.kill('SIGKILL');
    await sim?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('asyncjob bundle --out writes the bundle and prints its path and size', () => {
    expect(bundled.stderr).toBe('');
    expect(bundled.code).toBe(0);
    expect(bundled.stdout).toContain(`${bundleFile}: `);
    expect(bundled.stdout).toMatch(/\d+\.\d MiB, the workflows of asyncjob \S+ \(sources sha256:[0-9a-f]{64}\)/);
    expect(bundled.stdout).toContain(`ASYNCJOB_WORKFLOW_BUNDLE=${bundleFile}`);
  });

  it('a worker given ASYNCJOB_WORKFLOW_BUNDLE names it at start and runs an operation to success', async () => {
    let output = '';
    const started = Date.now();
    const child = spawn(process.execPath, [BIN, 'worker'], {
      env: { PATH: process.env.PATH ?? '', ...workerEnv(), ASYNCJOB_WORKFLOW_BUNDLE: bundleFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    worker = child;
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const end = Date.now() + 60_000;
    while (!output.includes('asyncjob worker: task queue') && Date.now() < end && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 100));
    expect(output).toContain(`workflows bundle ${bundleFile} (asyncjob `);
    const startLine = JSON.parse(output.split('\n').find((l) => l.includes('asyncjob worker: task queue'))!) as {
      workflowBundle?: string;
    };
    expect(startLine.workflowBundle).toBe(bundleFile);
    console.log(`worker with a prebuilt bundle polled after ${Date.now() - started} ms`);

    const env = await connectTestEnvironment();
    try {
      const client = new AsyncJobClient({ client: env.client, taskQueue });
      const operationId = uniqueId('op-bundle');
      await client.start(weeklyReportRequest(operationId, provider));
      expect((await client.result(operationId)).localState).toBe('succeeded');
    } finally {
      await env.teardown();
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).not.toContain(TOKEN);
  });

  it('a bundle the worker cannot run is refused with exit 2, naming the variable, before anything connects', async () => {
    const notABundle = path.join(dir, 'not-a-bundle.js');
    await writeFile(notABundle, 'module.exports = {};\n');
    for (const [file, why] of [
      [path.join(dir, 'missing', 'workflow-bundle.js'), 'cannot read'],
      [notABundle, 'is not a Temporal workflow bundle'],
    ] as const) {
      // Temporal is unreachable here: a refusal by the bundle check comes before any connection.
      const run = await asyncjob(['worker'], {
        ...workerEnv(),
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        ASYNCJOB_WORKFLOW_BUNDLE: file,
      });
      expect(run.code).toBe(2);
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^asyncjob: invalid configuration: ASYNCJOB_WORKFLOW_BUNDLE: /);
      expect(lines[0]).toContain(`${file} `);
      expect(lines[0]).toContain(why);
      expect(run.stderr).not.toContain('cannot reach Temporal');
    }
  });
});
