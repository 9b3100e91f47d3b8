/**
 * `asyncjob worker` as users run it: a separate process configured only from the environment, serving a provider
 * from a contract file, with Prometheus metrics, the webhook receiver and a decider policy file, shutting down
 * gracefully on SIGTERM, and never printing the provider's credential.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { writeRestContract } from './rest-contract';
import { openStore } from '../../src/adapters/store/open-store';
import { AsyncJobClient } from '../../src/client';
import { freePort } from '../../src/dev/temporal-server';
import { loadDeciderPolicy } from '../../src/policy/decider-policy-file';
import { startSimulator, type Simulator } from '../../src/simulator';
import { connectTestEnvironment, uniqueId, weeklyReportRequest } from '../setup/temporal';

const TOKEN = `proc-secret-${randomBytes(12).toString('hex')}`;

describe('asyncjob worker process', () => {
  let sim: Simulator;
  let worker: ChildProcess;
  let output = '';
  let exited: Promise<number | null>;
  const taskQueue = uniqueId('proc');
  const provider = `reports-${uniqueId('p').toLowerCase()}`.slice(0, 60);
  let metricsPort = 0;
  let webhookPort = 0;
  let store = '';
  let policyFile = '';

  beforeAll(async () => {
    sim = await startSimulator({ dialect: 'rest', token: TOKEN, seed: 3 });
    const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-proc-'));
    const contractFile = await writeRestContract(dir, provider, sim.url);
    policyFile = path.join(dir, 'policy.yaml');
    await writeFile(
      policyFile,
      [
        'version: 1',
        'deciders:',
        '  rules:',
        '    - { name: ops, who: [ops@example.com], options: [extend, close] }',
        '',
      ].join('\n'),
    );
    store = `sqlite:${path.join(dir, 'asyncjob.db')}`;
    metricsPort = await freePort();
    webhookPort = await freePort();
    worker = spawn(process.execPath, [path.join(__dirname, '..', '..', 'bin', 'asyncjob'), 'worker'], {
      env: {
        PATH: process.env.PATH,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        ASYNCJOB_TASK_QUEUE: taskQueue,
        ASYNCJOB_STORE: store,
        ASYNCJOB_ARTIFACTS_DIR: path.join(dir, 'artifacts'),
        ASYNCJOB_PROVIDERS: contractFile,
        ASYNCJOB_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
        ASYNCJOB_WEBHOOK_PORT: String(webhookPort),
        ASYNCJOB_WEBHOOK_HOST: '127.0.0.1',
        ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: 'whsec-proc',
        REPORTS_TOKEN: TOKEN,
        ASYNCJOB_DECIDER_POLICY: policyFile,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    worker.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    worker.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    exited = new Promise((resolve) => worker.once('exit', (code) => resolve(code)));
    const end = Date.now() + 60_000;
    while (!output.includes('asyncjob worker: task queue') && Date.now() < end && worker.exitCode === null)
      await new Promise((r) => setTimeout(r, 100));
    expect(output).toContain('asyncjob worker: task queue');
  });

  afterAll(async () => {
    if (worker && worker.exitCode === null) worker.kill('SIGKILL');
    await sim?.stop();
  });

  it('runs an operation to a verified result, exports our metrics, serves webhooks, and stops gracefully; D2: the operation keeps the decider policy the worker read and logged', async () => {
    const env = await connectTestEnvironment();
    const operationId = uniqueId('op-proc');
    try {
      const client = new AsyncJobClient({ client: env.client, taskQueue });
      await client.start(weeklyReportRequest(operationId, provider));
      const summary = await client.result(operationId);
      expect(summary.localState).toBe('succeeded');
    } finally {
      await env.teardown();
    }

    const deciders = loadDeciderPolicy(policyFile);
    expect(output).toContain(`asyncjob worker: decider policy ${policyFile}, digest: ${deciders.digest}, 1 rule`);
    expect(output).not.toContain('no decider policy');
    const reader = await openStore(store, { mustExist: true });
    try {
      const intent = (await reader.entries(operationId)).map((e) => e.entry.body).find((b) => b.kind === 'intent');
      expect(intent?.kind === 'intent' && intent.deciderPolicy).toEqual(deciders);
    } finally {
      await reader.close();
    }

    const metrics = await (await request(`http://127.0.0.1:${metricsPort}/metrics`)).body.text();
    expect(metrics).toMatch(/asyncjob_provider_requests\{[^}]*action="status"/);
    expect(metrics).toMatch(/asyncjob_provider_requests\{[^}]*action="create"[^}]*outcome="response"/);

    const refused = await request(`http://127.0.0.1:${webhookPort}/webhooks/${provider}`, {
      method: 'POST',
      body: '{"event_id":"e","job_id":"j"}',
      headers: { 'x-signature': 't=1,v1=' + '0'.repeat(64) },
    });
    expect(refused.statusCode).toBe(401);
    await refused.body.dump();

    // Structured logs: JSON lines naming the provider calls, never the credential.
    expect(output).toMatch(/\{"ts":"[^"]+","level":"info","msg":"provider call"/);

    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).not.toContain(TOKEN);
  });
});
