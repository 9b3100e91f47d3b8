/**
 * examples/nexus-caller runs as docs/nexus.md tells a user to run it, against a worker serving the demo's provider
 * (`demo-reports`, the demo's scripts) and the `asyncjob` Nexus service as `npm start` does: the command creates
 * the callers' namespace and the endpoint, and its caller workflow runs a report to succeeded through Nexus.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO_SCENARIO } from '../../src/dev/demo-scenario';
import { startSimulator, type Simulator } from '../../src/simulator';
import { docCommand } from '../docs/doc-commands';
import { runShell } from '../docs/shell';
import { uniqueId } from '../setup/temporal';
import { startDocumentWorker, type DocumentWorker } from '../workflows/document-worker';

const TOKEN = 'nexus-caller-example-token';

describe('examples/nexus-caller against a worker serving demo-reports and the Nexus service', () => {
  let sim: Simulator;
  let worker: DocumentWorker;
  const taskQueue = uniqueId('wf-nexus-example');

  beforeAll(async () => {
    sim = await startSimulator({ dialect: 'rest', token: TOKEN, scenario: DEMO_SCENARIO as never });
    worker = await startDocumentWorker({
      taskQueue,
      dataDir: await mkdtemp(path.join(tmpdir(), 'asyncjob-nexus-example-')),
      providers: [{ name: 'demo-reports', path: 'rest' }],
      baseUrls: { 'demo-reports': sim.url },
      env: { ASYNCJOB_SIMULATOR_TOKEN: TOKEN },
      forbiddenValues: [TOKEN],
      nexus: true,
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await sim?.stop();
  });

  it('N4: the command creates the namespace and endpoint, and the caller runs a report to succeeded as its recorded starter', async () => {
    const command = docCommand('docs/nexus.md', 'npx tsx examples/nexus-caller/run.ts').text;
    const env = {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      ASYNCJOB_TASK_QUEUE: taskQueue,
      ASYNCJOB_NEXUS_ENDPOINT: uniqueId('asyncjob-example').replace(/[^A-Za-z0-9-]/g, '-'),
    };
    const run = await runShell(command, { env, timeoutMs: 120_000 });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`created Nexus endpoint ${env.ASYNCJOB_NEXUS_ENDPOINT}`);
    const ended = /^(nexus-report-\S+): succeeded \(job \S+\)$/m.exec(run.stdout);
    expect(ended, run.stdout).not.toBeNull();
    const starter = /^started by (workflow:asyncjob-callers\/report-caller-\S+)$/m.exec(run.stdout)![1];
    expect((await worker.client.get(ended![1]!)).authorisation.startedBy).toBe(starter);
  });
});
