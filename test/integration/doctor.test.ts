/**
 * `asyncjob doctor` against the run's real dev server: a healthy setup passes every check with exit 0; a
 * namespace that does not exist, or one without asyncjob's search attributes, is a setup problem (exit 1) with
 * the command that fixes it.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { BUILT_IN_PRESETS } from '../../src/adapters/providers/presets';
import { openStore } from '../../src/adapters/store/open-store';
import { runDoctorCli, type DoctorReport } from '../../src/doctor/cli';
import { freePort } from '../../src/dev/temporal-server';
import { uniqueId } from '../setup/temporal';

async function doctor(argv: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runDoctorCli(argv, { stdout: (t) => void (out += t), stderr: (t) => void (out += t), env });
  return { code, out };
}

describe('asyncjob doctor on the dev server', () => {
  let env: Record<string, string>;

  beforeAll(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-doctor-it-'));
    const provider = 'reports';
    const contractFile = path.join(dir, `${provider}.yaml`);
    await writeFile(
      contractFile,
      JSON.stringify({
        ...(BUILT_IN_PRESETS.rest as Record<string, unknown>),
        name: provider,
        baseUrl: 'https://reports.example',
        credential: { scheme: 'bearer', secretFile: path.join(dir, 'token') },
      }),
    );
    await writeFile(path.join(dir, 'token'), 'reports-token-doctor\n');
    // A healthy setup names who may decide (D2); without a policy the doctor warns.
    const policyFile = path.join(dir, 'policy.yaml');
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
    const store = `sqlite:${path.join(dir, 'asyncjob.db')}`;
    await (await openStore(store)).close(); // as a worker leaves it: created and migrated
    env = {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      ASYNCJOB_PROVIDERS: contractFile,
      ASYNCJOB_STORE: store,
      ASYNCJOB_ARTIFACTS_DIR: path.join(dir, 'artifacts'),
      ASYNCJOB_WEBHOOK_PORT: String(await freePort()),
      ASYNCJOB_WEBHOOK_HOST: '127.0.0.1',
      ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: 'whsec-doctor',
      ASYNCJOB_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
      ASYNCJOB_DECIDER_POLICY: policyFile,
    };
  });

  it('passes a healthy setup: every line ok, exit 0', async () => {
    const { code, out } = await doctor([], env);
    expect(code, out).toBe(0);
    const lines = out.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('all checks passed');
    for (const line of lines.slice(0, -1)) expect(line, out).toMatch(/^ok {7}/);
    for (const check of [
      'configuration',
      'provider reports',
      'decider-policy',
      'temporal',
      'namespace',
      'search-attributes',
      'store',
      'artifacts',
      'webhook-port',
      'metrics-port',
    ]) {
      expect(out).toContain(`ok       ${check}: `);
    }
    expect(out).toMatch(/temporal: Temporal \S+ answers at /);
    expect(out).toContain(
      'AsyncJobState, AsyncJobProvider, AsyncJobProviderJobId, AsyncJobEscalationReason, AsyncJobResultDeadline registered',
    );
    expect(out).toMatch(/store: SQLite store .* opens, its schema is current/);
    expect(out).not.toContain('reports-token-doctor');

    const json = await doctor(['--json'], env);
    const report = JSON.parse(json.out) as DoctorReport;
    expect(report).toMatchObject({ schema: 'asyncjob.doctor/v1', ok: true, exitCode: 0 });
    expect(report.checks.every((c) => c.status === 'ok' && c.fix === null)).toBe(true);
  });

  it('reports a namespace that does not exist, with the command that creates it, and exits 1', async () => {
    const namespace = uniqueId('doctor-missing');
    const { code, out } = await doctor([], { ...env, TEMPORAL_NAMESPACE: namespace });
    expect(code, out).toBe(1);
    expect(out).toContain(
      `PROBLEM  namespace: namespace ${namespace} does not exist at ${env.TEMPORAL_ADDRESS} (fix: temporal operator namespace create --namespace ${namespace} --address ${env.TEMPORAL_ADDRESS}`,
    );
    expect(out).toContain('skipped  search-attributes: the namespace cannot be read');
    expect(out.trimEnd().split('\n').at(-1)).toBe('1 problem: exit 1 (a setup problem)');
  });

  it("reports a namespace without asyncjob's search attributes, with the commands that register them", async () => {
    const namespace = uniqueId('doctor-bare');
    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS! });
    try {
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs('1 day'),
      });
    } finally {
      await connection.close();
    }
    let result = await doctor(['--json'], { ...env, TEMPORAL_NAMESPACE: namespace });
    // A new namespace becomes visible to the frontend within a few seconds.
    for (
      let i = 0;
      i < 40 &&
      (JSON.parse(result.out) as DoctorReport).checks.some((c) => c.check === 'namespace' && c.status !== 'ok');
      i++
    ) {
      await new Promise((r) => setTimeout(r, 500));
      result = await doctor(['--json'], { ...env, TEMPORAL_NAMESPACE: namespace });
    }
    const report = JSON.parse(result.out) as DoctorReport;
    expect(result.code, result.out).toBe(1);
    const attributes = report.checks.find((c) => c.check === 'search-attributes')!;
    expect(attributes).toMatchObject({ status: 'problem', kind: 'setup' });
    expect(attributes.message).toContain('AsyncJobState');
    expect(attributes.fix).toContain(`temporal operator search-attribute create --namespace ${namespace}`);
    expect(attributes.fix).toContain('--name AsyncJobResultDeadline --type Datetime');
  });
});
