/**
 * `asyncjob worker` refuses a configuration it cannot serve: a process with a missing credential variable (and a
 * missing base URL variable, and a missing webhook secret) exits 2 before connecting anywhere, naming each of
 * them; an unreachable Temporal exits 5, as for every command. A worker that runs logs each webhook refusal with
 * its reason (a JSON line, never the body or the signature) and counts it on its metrics endpoint.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { BUILT_IN_PRESETS } from '../../src/adapters/providers/presets';
import { freePort } from '../../src/dev/temporal-server';
import { uniqueId } from '../setup/temporal';

const BIN = path.join(__dirname, '..', '..', 'bin', 'asyncjob');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `asyncjob worker` with exactly `env` (plus PATH and HOME); `until` may stop it early (SIGTERM). */
function runWorker(
  env: Record<string, string>,
  options: { timeoutMs?: number; whileRunning?: (output: () => string) => Promise<void> } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'worker'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (options.whileRunning) {
      void (async () => {
        const end = Date.now() + 60_000;
        while (!stderr.includes('asyncjob worker: task queue') && child.exitCode === null && Date.now() < end)
          await new Promise((r) => setTimeout(r, 100));
        try {
          if (child.exitCode === null) await options.whileRunning!(() => stderr);
        } catch (err) {
          reject(err as Error);
        } finally {
          child.kill('SIGTERM');
        }
      })();
    }
  });
}

describe('asyncjob worker refuses what it cannot serve', () => {
  let dir: string;
  let contractFile: string;
  const provider = `reports-${uniqueId('cfg').toLowerCase()}`.slice(0, 60);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-worker-config-'));
    contractFile = path.join(dir, `${provider}.json`);
    // The rest preset's webhook section comes along: its secret is ASYNCJOB_SIMULATOR_WEBHOOK_SECRET.
    await writeFile(
      contractFile,
      JSON.stringify({
        ...(BUILT_IN_PRESETS.rest as Record<string, unknown>),
        name: provider,
        baseUrl: '${REPORTS_BASE_URL}',
        credential: { scheme: 'bearer', secretEnv: 'REPORTS_TOKEN' },
      }),
    );
  });

  const baseEnv = () => ({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    ASYNCJOB_TASK_QUEUE: uniqueId('cfg'),
    ASYNCJOB_STORE: `sqlite:${path.join(dir, 'asyncjob.db')}`,
    ASYNCJOB_ARTIFACTS_DIR: path.join(dir, 'artifacts'),
    ASYNCJOB_PROVIDERS: contractFile,
  });

  it('exits 2 naming every missing variable at once, before connecting anywhere', async () => {
    const started = Date.now();
    const run = await runWorker({
      ...baseEnv(),
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      ASYNCJOB_WEBHOOK_PORT: String(await freePort()),
    });
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^asyncjob: invalid configuration: /);
    expect(lines[0]).toContain('REPORTS_TOKEN is not set');
    expect(lines[0]).toContain('REPORTS_BASE_URL is not set');
    expect(lines[0]).toContain('ASYNCJOB_SIMULATOR_WEBHOOK_SECRET is not set');
    // No Temporal connection was tried (its address is unreachable): the check comes first.
    expect(run.stderr).not.toContain('cannot reach Temporal');
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('exits 2 for the credential alone, naming it', async () => {
    const run = await runWorker({ ...baseEnv(), REPORTS_BASE_URL: 'https://reports.example' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`REPORTS_TOKEN is not set: provider ${provider}`);
    expect(run.stderr).not.toContain('REPORTS_BASE_URL is not set');
  });

  it('D2: exits 2 for an invalid decider policy, naming every issue of the file, before connecting anywhere', async () => {
    const policyFile = path.join(dir, 'broken-policy.yaml');
    await writeFile(
      policyFile,
      [
        'version: 1',
        'deciders:',
        '  keys:',
        '    alice@example.com: [ed25519:not-a-key]',
        '  rules:',
        '    - { name: oncall, whom: [alice@example.com], options: [extend] }',
        '    - { name: lead, who: [lead@example.com], options: [close], largestExtension: soon }',
        '',
      ].join('\n'),
    );
    const run = await runWorker({
      ...baseEnv(),
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      REPORTS_BASE_URL: 'https://reports.example',
      REPORTS_TOKEN: 'reports-token-policy',
      ASYNCJOB_DECIDER_POLICY: policyFile,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^asyncjob: invalid configuration: /);
    expect(run.stderr).toContain(`ASYNCJOB_DECIDER_POLICY: decider policy ${policyFile} is invalid: `);
    for (const issue of [
      'deciders.keys.alice@example.com.0: must be ed25519: and 64 lowercase hex characters',
      'deciders.rules.0: Unrecognized key: "whom"',
      'deciders.rules.1.largestExtension: "soon" is not a duration',
    ])
      expect(run.stderr).toContain(issue);
    expect(run.stderr).not.toContain('cannot reach Temporal');
  });

  it('exits 5 when Temporal cannot be reached, as every command does', async () => {
    const run = await runWorker({
      ...baseEnv(),
      REPORTS_BASE_URL: 'https://reports.example',
      REPORTS_TOKEN: 'reports-token-5',
      TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
    });
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(/^asyncjob: cannot reach Temporal at 127\.0\.0\.1:\d+/);
    expect(run.stderr).not.toContain('reports-token-5');
  });

  it('logs each webhook refusal with its reason and counts it on the metrics endpoint', async () => {
    const metricsPort = await freePort();
    const webhookPort = await freePort();
    const signature = `t=${Math.floor(Date.now() / 1000)},v1=${'c0ffee'.repeat(10)}abcd`;
    const marker = 'body-marker-5521';
    let metrics = '';
    const run = await runWorker(
      {
        ...baseEnv(),
        REPORTS_BASE_URL: 'https://reports.example',
        REPORTS_TOKEN: 'reports-token-webhooks',
        ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: 'whsec-worker-config',
        ASYNCJOB_WEBHOOK_PORT: String(webhookPort),
        ASYNCJOB_WEBHOOK_HOST: '127.0.0.1',
        ASYNCJOB_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
      },
      {
        whileRunning: async (output) => {
          const post = async (route: string, headers: Record<string, string>) => {
            const res = await request(`http://127.0.0.1:${webhookPort}${route}`, {
              method: 'POST',
              body: JSON.stringify({ event_id: 'e1', job_id: 'j1', note: marker }),
              headers,
            });
            await res.body.dump();
            return res.statusCode;
          };
          expect(await post(`/webhooks/${provider}`, { 'x-signature': signature })).toBe(401);
          expect(await post(`/webhooks/${provider}`, {})).toBe(401);
          expect(await post('/webhooks/someone-else', {})).toBe(404);
          const end = Date.now() + 10_000;
          while ((output().match(/webhook refused/g) ?? []).length < 3 && Date.now() < end)
            await new Promise((r) => setTimeout(r, 100));
          // Counters reach the Prometheus endpoint on the runtime's export interval.
          while (Date.now() < end + 10_000) {
            metrics = await (await request(`http://127.0.0.1:${metricsPort}/metrics`)).body.text();
            if (/asyncjob_webhook_requests\{[^}]*reason="missing_signature"/.test(metrics)) break;
            await new Promise((r) => setTimeout(r, 250));
          }
        },
      },
    );
    expect(run.code).toBe(0);
    const refusals = run.stderr
      .split('\n')
      .filter((l) => l.includes('"msg":"webhook refused"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(refusals.map((r) => r.reason)).toEqual(['bad_signature', 'missing_signature', 'provider_has_no_webhooks']);
    expect(refusals[0]).toMatchObject({ level: 'warn', provider, status: 401, result: 'refused' });
    expect(run.stderr).not.toContain(marker);
    expect(run.stderr).not.toContain('c0ffee');
    expect(run.stderr).not.toContain('reports-token-webhooks');
    expect(metrics).toMatch(
      new RegExp(`asyncjob_webhook_requests\\{[^}]*provider="${provider}"[^}]*reason="bad_signature"[^}]*\\} 1`),
    );
    expect(metrics).toMatch(/asyncjob_webhook_requests\{[^}]*provider="unknown"[^}]*reason="provider_has_no_webhooks"/);
    // The expected SDK warning of an activity-only worker is not shown.
    expect(run.stderr).not.toContain('No workflows registered');
    // D2: started without a decider policy, the worker says once what that allows.
    const warnings = run.stderr.split('\n').filter((l) => l.includes('no decider policy'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({
      level: 'warn',
      fix: expect.stringContaining('ASYNCJOB_DECIDER_POLICY') as string,
    });
  });
});
