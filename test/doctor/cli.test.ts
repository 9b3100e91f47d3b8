/**
 * `asyncjob doctor` without a Temporal server: a broken setup is reported one line per check with a fix and a
 * non-zero exit (2 for a bad environment, 5 when only Temporal is unreachable), and the store, artifact and
 * port checks tell a healthy piece from a broken one. The healthy whole is in test/integration/doctor.test.ts.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_IN_PRESETS } from '../../src/adapters/providers/presets';
import { openStore } from '../../src/adapters/store/open-store';
import { checkArtifacts, checkPort, checkStore } from '../../src/doctor/checks';
import { DOCTOR_USAGE, runDoctorCli, type DoctorReport } from '../../src/doctor/cli';
import { exitCodeOf, problem, ok } from '../../src/doctor/findings';
import { freePort } from '../../src/dev/temporal-server';

let dir: string;
let contractFile: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-doctor-'));
  contractFile = path.join(dir, 'reports.json');
  await writeFile(
    contractFile,
    JSON.stringify({
      ...(BUILT_IN_PRESETS.rest as Record<string, unknown>),
      name: 'reports',
      baseUrl: 'https://reports.example',
      credential: { scheme: 'bearer', secretEnv: 'REPORTS_TOKEN' },
    }),
  );
});

async function doctor(
  argv: string[],
  env: Record<string, string>,
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runDoctorCli(argv, {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    env,
    timeoutMs: 1500,
  });
  return { code, out, err };
}

describe('asyncjob doctor, offline', () => {
  it('prints its usage with --help (exit 0) and refuses an unknown option (exit 2)', async () => {
    expect(await doctor(['--help'], {})).toEqual({ code: 0, out: DOCTOR_USAGE, err: '' });
    const bad = await doctor(['--fix'], {});
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('unknown option --fix');
  });

  it('reports a broken setup one line per check, with fixes, and exits 2 for the bad environment', async () => {
    const closed = await freePort();
    const env = {
      TEMPORAL_ADDRESS: `127.0.0.1:${closed}`,
      ASYNCJOB_PROVIDERS: contractFile,
      ASYNCJOB_STORE: `sqlite:${path.join(dir, 'broken', 'asyncjob.db')}`,
      ASYNCJOB_ARTIFACTS_DIR: path.join(dir, 'artifacts'),
    };
    const { code, out } = await doctor([], env);
    expect(code).toBe(2);
    const lines = out.trimEnd().split('\n');
    expect(lines.find((l) => l.startsWith('PROBLEM  provider reports:'))).toMatch(
      /REPORTS_TOKEN is not set.*\(fix: set REPORTS_TOKEN/,
    );
    expect(lines.find((l) => l.startsWith('PROBLEM  temporal:'))).toMatch(
      new RegExp(`cannot reach Temporal at 127\\.0\\.0\\.1:${closed}.*\\(fix: start it`),
    );
    expect(lines).toContain('skipped  namespace: Temporal cannot be reached');
    expect(lines.find((l) => l.startsWith('ok       configuration:'))).toBeDefined();
    expect(lines.at(-1)).toBe('2 problems, 2 warnings: exit 2 (a bad environment)');
  });

  it('exits 5 when only Temporal cannot be reached, and says so in --json', async () => {
    const closed = await freePort();
    const { code, out } = await doctor(['--json'], {
      TEMPORAL_ADDRESS: `127.0.0.1:${closed}`,
      ASYNCJOB_PROVIDERS: contractFile,
      REPORTS_TOKEN: 'reports-token-value',
      ASYNCJOB_STORE: `sqlite:${path.join(dir, 'five', 'asyncjob.db')}`,
      ASYNCJOB_ARTIFACTS_DIR: path.join(dir, 'artifacts'),
    });
    expect(code).toBe(5);
    const report = JSON.parse(out) as DoctorReport;
    expect(report).toMatchObject({ schema: 'asyncjob.doctor/v1', ok: false, exitCode: 5 });
    expect(report.checks.find((c) => c.check === 'temporal')).toMatchObject({
      status: 'problem',
      kind: 'connection',
      subject: null,
    });
    expect(report.checks.find((c) => c.check === 'provider')).toMatchObject({
      status: 'ok',
      subject: 'reports',
      fix: null,
      kind: null,
    });
    expect(report.checks.map((c) => c.check)).toEqual([
      'configuration',
      'provider',
      'decider-policy',
      'temporal',
      'namespace',
      'search-attributes',
      'store',
      'artifacts',
      'webhook-port',
      'metrics-port',
    ]);
    expect(out).not.toContain('reports-token-value');
  });

  it('skips what depends on an invalid configuration, and exits 2', async () => {
    const { code, out } = await doctor(['--json'], {
      ASYNCJOB_STORE: 'mysql://nope',
      ASYNCJOB_PROVIDERS: contractFile,
      REPORTS_TOKEN: 'x',
    });
    const report = JSON.parse(out) as DoctorReport;
    expect(code).toBe(2);
    expect(report.checks.find((c) => c.check === 'configuration')).toMatchObject({
      status: 'problem',
      kind: 'environment',
    });
    expect(report.checks.find((c) => c.check === 'temporal')).toMatchObject({ status: 'skipped' });
  });

  it('puts a bad environment before an unreachable server, and both before a setup problem', () => {
    const env = problem('provider', 'environment', 'x', 'y');
    const conn = problem('temporal', 'connection', 'x', 'y');
    const setup = problem('namespace', 'setup', 'x', 'y');
    expect(exitCodeOf([ok('a', 'fine'), { check: 'store', status: 'warn', message: 'w', fix: 'f' }])).toBe(0);
    expect(exitCodeOf([setup])).toBe(1);
    expect(exitCodeOf([setup, conn])).toBe(5);
    expect(exitCodeOf([setup, conn, env])).toBe(2);
  });
});

describe('the store check (read-only)', () => {
  it('warns about a store not created yet, and creates nothing', async () => {
    const file = path.join(dir, 'fresh', 'asyncjob.db');
    const finding = await checkStore(`sqlite:${file}`);
    expect(finding).toMatchObject({ check: 'store', status: 'warn' });
    expect(finding.message).toContain('not created yet');
    await expect(import('node:fs/promises').then((fs) => fs.stat(path.dirname(file)))).rejects.toThrow();
  });

  it('passes a store whose migrations are current', async () => {
    const file = path.join(dir, 'current.db');
    await (await openStore(`sqlite:${file}`)).close();
    expect(await checkStore(`sqlite:${file}`)).toMatchObject({ status: 'ok' });
  });

  it('warns about pending migrations and refuses a store migrated by a newer asyncjob', async () => {
    const file = path.join(dir, 'newer.db');
    await (await openStore(`sqlite:${file}`)).close();
    const db = new Database(file);
    db.prepare('DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)').run();
    db.close();
    const pending = await checkStore(`sqlite:${file}`);
    expect(pending).toMatchObject({ status: 'warn' });
    expect(pending.message).toMatch(/1 migration pending/);
    const db2 = new Database(file);
    db2
      .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, ?, ?)')
      .run('from the future', new Date().toISOString());
    db2.close();
    const newer = await checkStore(`sqlite:${file}`);
    expect(newer).toMatchObject({ status: 'problem', kind: 'setup' });
    expect(newer.message).toContain('9999');
  });

  it('names a file that is not a store', async () => {
    const file = path.join(dir, 'not-a-db.db');
    await writeFile(file, 'this is not sqlite at all, just text that is long enough to be read as a header');
    expect(await checkStore(`sqlite:${file}`)).toMatchObject({ status: 'problem', kind: 'setup' });
  });

  it('names an unreachable PostgreSQL without its password', async () => {
    const closed = await freePort();
    const finding = await checkStore(`postgres://asyncjob:pw-secret-771@127.0.0.1:${closed}/asyncjob`);
    expect(finding).toMatchObject({ status: 'problem', kind: 'setup' });
    expect(finding.message).not.toContain('pw-secret-771');
  });
});

describe('the artifact and port checks', () => {
  it('passes a writable or creatable directory and refuses a file', async () => {
    await mkdir(path.join(dir, 'arts'));
    expect(await checkArtifacts(path.join(dir, 'arts'))).toMatchObject({ status: 'ok' });
    expect(await checkArtifacts(path.join(dir, 'later', 'arts'))).toMatchObject({ status: 'ok' });
    expect(await checkArtifacts(contractFile)).toMatchObject({ status: 'problem', kind: 'setup' });
  });

  it('says which port is in use', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const busy = await checkPort('webhook-port', 'ASYNCJOB_WEBHOOK_PORT', '127.0.0.1', port, 'webhook receiver');
      expect(busy).toMatchObject({ status: 'problem', kind: 'setup' });
      expect(busy.message).toContain(`127.0.0.1:${port} is in use`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(
      await checkPort('webhook-port', 'ASYNCJOB_WEBHOOK_PORT', '127.0.0.1', port, 'webhook receiver'),
    ).toMatchObject({ status: 'ok' });
  });
});
