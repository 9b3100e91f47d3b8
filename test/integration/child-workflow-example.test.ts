/**
 * examples/child-workflow runs as docs/child-workflows.md tells a user to run it, against a worker serving the
 * demo's provider (`demo-reports`, the demo's scripts) as `npm start` does: the close's two jobs run as children,
 * the review's escalation goes unanswered past its decision deadline, and the report is compensated.
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

const TOKEN = 'child-workflow-example-token';

describe('examples/child-workflow against a worker serving demo-reports', () => {
  let sim: Simulator;
  let worker: DocumentWorker;
  const taskQueue = uniqueId('wf-child-example');

  beforeAll(async () => {
    sim = await startSimulator({ dialect: 'rest', token: TOKEN, scenario: DEMO_SCENARIO as never });
    worker = await startDocumentWorker({
      taskQueue,
      dataDir: await mkdtemp(path.join(tmpdir(), 'asyncjob-child-example-')),
      providers: [{ name: 'demo-reports', path: 'rest' }],
      baseUrls: { 'demo-reports': sim.url },
      env: { ASYNCJOB_SIMULATOR_TOKEN: TOKEN },
      forbiddenValues: [TOKEN],
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await sim?.stop();
  });

  it('the month-end close runs its two jobs in parallel as children, and compensates the report when the review ends without a decision', async () => {
    const command = docCommand('docs/child-workflows.md', 'npx tsx examples/child-workflow/run.ts').text;
    const run = await runShell(command, {
      env: {
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        ASYNCJOB_TASK_QUEUE: taskQueue,
      },
      timeoutMs: 120_000,
    });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^compliance-review-\S+: ASYNCJOB_ERR_ESCALATION_EXPIRED$/m);
    // The report was still running (cancelled at the provider, once) or had been delivered (withdrawn).
    const report = /^(sales-report-\S+): (cancelled|withdrawn|ASYNCJOB_ERR_OPERATION_CANCELLED)$/m.exec(run.stdout);
    expect(report, run.stdout).not.toBeNull();
    expect(run.stdout).toMatch(/^month-end close \S+: compensated$/m);
    const record = await worker.client.get(report![1]!);
    if (record.localState === 'cancelled') {
      expect(record.cancel?.requestedBy).toMatch(/^workflow:[^/]+\/month-end-close-/);
      expect(sim.requests({ action: 'cancel' }).filter((r) => r.jobId?.endsWith(record.jobId!))).toHaveLength(1);
    } else {
      expect(record.localState).toBe('succeeded');
      expect(run.stdout).toContain(`withdrawn: the result of ${report![1]}`);
    }
  });
});
