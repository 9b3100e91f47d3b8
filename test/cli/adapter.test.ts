/**
 * `asyncjob adapter validate|explain`: contracts loaded as the worker loads them (files and names, preset merged,
 * `${VAR}` in baseUrl), every problem with its field path, stable JSON shapes and exit codes, no Temporal.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from '../../src/cli/args';
import { EXIT } from '../../src/cli/exit-codes';
import { runCli } from '../../src/cli/run-cli';
import { FakeClient, fakeDeps } from './fixtures';

let dir: string;
const file = (name: string): string => path.join(dir, name);

const THINGS = `preset: azure-lro
name: things
baseUrl: https://management.example.com
credential: { scheme: bearer, secretEnv: AZURE_TOKEN }
create: { method: PUT, path: "/things/{clientReference}" }
`;

const REPORTS = `name: reports
baseUrl: \${REPORTS_URL}/api
credential: { scheme: none }
create: { path: /jobs, jobId: [{ from: body, field: id }] }
status: { path: "/jobs/{jobId}", stateField: state, stateTable: { pending: [running], success: [done] } }
result: { url: [{ from: template, path: "/jobs/{jobId}/result" }] }
reconciliation: { method: none }
collectSafeToRepeat: true
`;

const BROKEN = `name: broken
baseUrl: https://x.example
credential: { scheme: bearer, secretEnv: X, secretFile: /y }
create: { path: /jobs, jobId: [{ from: body, field: id }] }
status: { path: "/jobs/{id}", stateField: state, stateTable: { pending: [run], success: [1] }, pollEvery: 5 }
result: { url: [{ from: template, path: "/jobs/{jobId}/out" }] }
reconciliation: { method: none }
`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-adapter-cli-'));
  await writeFile(file('things.yaml'), THINGS);
  await writeFile(file('reports.yaml'), REPORTS);
  await writeFile(file('broken.yaml'), BROKEN);
  await writeFile(file('misnamed.yaml'), THINGS);
  await writeFile(
    file('leaky.json'),
    JSON.stringify({
      preset: 'http-202-location',
      name: 'leaky',
      baseUrl: 'https://l.example',
      credential: { scheme: 'none' },
      create: { path: '/x', headers: { 'X-Api-Key': { value: 'sk-live-123456' } } },
    }),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `asyncjob ...argv` with `env` as the environment; Temporal is never needed. */
async function run(argv: string[], env: Record<string, string> = {}) {
  const client = new FakeClient();
  const io = fakeDeps(client);
  let connected = false;
  const deps = { ...io.deps, env, connect: async () => ((connected = true), client) };
  const code = await runCli(argv, deps);
  expect(connected).toBe(false);
  return { code, stdout: io.stdout(), stderr: io.stderr(), json: io.json };
}

describe('asyncjob adapter: arguments', () => {
  it('parses validate with several files and explain with one, with --base-url and --require-env', () => {
    expect(parseCommandLine(['adapter', 'validate', 'a.yaml', 'b.json', '--json'])).toEqual({
      command: 'adapter',
      action: 'validate',
      files: ['a.yaml', 'b.json'],
      requireEnv: false,
      json: true,
      verbose: false,
    });
    expect(
      parseCommandLine(['adapter', 'explain', 'a.yaml', '--base-url', 'http://127.0.0.1:1', '--require-env']),
    ).toEqual({
      command: 'adapter',
      action: 'explain',
      files: ['a.yaml'],
      baseUrl: 'http://127.0.0.1:1',
      requireEnv: true,
      json: false,
      verbose: false,
    });
    expect(parseCommandLine(['adapter', '--help'])).toEqual({ command: 'help', topic: 'adapter' });
  });

  it('refuses a missing action, an unknown one, no file, and two files for explain (exit 2)', async () => {
    expect(() => parseCommandLine(['adapter'])).toThrow(UsageError);
    expect(() => parseCommandLine(['adapter', 'check', 'a.yaml'])).toThrow(/unknown action "check"/);
    expect(() => parseCommandLine(['adapter', 'validate'])).toThrow(/needs a contract file/);
    expect(() => parseCommandLine(['adapter', 'explain', 'a.yaml', 'b.yaml'])).toThrow(/explain takes one file/);
    const r = await run(['adapter', 'validate', '--nope']);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stderr).toMatch(/^asyncjob: Unknown option '--nope'.*\(asyncjob help adapter\)\n$/);
  });
});

describe('asyncjob adapter validate', () => {
  it('prints FILE: ok (name, preset, create METHOD path) and exits 0', async () => {
    const r = await run(['adapter', 'validate', file('things.yaml')]);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toBe(
      `${file('things.yaml')}: ok (things, preset azure-lro, create PUT /things/{clientReference})\n`,
    );
  });

  it('lists every problem with its field path and exits 2; the other files are still checked', async () => {
    const r = await run(['adapter', 'validate', file('broken.yaml'), file('things.yaml'), file('absent.yaml')]);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stdout.split('\n')).toEqual([
      `${file('broken.yaml')}: invalid (5 problems)`,
      '  credential.secretEnv: give exactly one of secretEnv or secretFile',
      '  status.stateTable.success[0]: Invalid input: expected string, received number',
      '  status: Unrecognized key: "pollEvery"',
      '  collectSafeToRepeat: Required',
      '  status.path: unknown placeholder {id} (allowed here: {jobId}, {pollUrl}, {token}, {clientReference}, {operationId}; or declare it under variables)',
      `${file('things.yaml')}: ok (things, preset azure-lro, create PUT /things/{clientReference})`,
      `${file('absent.yaml')}: not found`,
      `  (document): no file ${file('absent.yaml')}`,
      '1 of 3 contracts valid',
      '',
    ]);
  });

  it('has a stable JSON shape', async () => {
    const r = await run(['adapter', 'validate', file('things.yaml'), file('broken.yaml'), '--json']);
    expect(r.code).toBe(EXIT.usage);
    const [doc] = r.json();
    expect(doc).toMatchObject({ schema: 'asyncjob.adapter-validate/v1', valid: false });
    const [ok, bad] = doc!.contracts as Record<string, unknown>[];
    expect(ok).toEqual({
      file: file('things.yaml'),
      valid: true,
      code: null,
      name: 'things',
      preset: 'azure-lro',
      create: { method: 'PUT', path: '/things/{clientReference}' },
      baseUrl: 'https://management.example.com',
      issues: [],
      warnings: [],
    });
    expect(bad).toMatchObject({
      valid: false,
      code: 'ASYNCJOB_ERR_ADAPTER_INVALID',
      name: 'broken',
      preset: null,
      create: null,
      baseUrl: null,
    });
    expect(bad!.issues).toContainEqual({ path: 'status', message: 'Unrecognized key: "pollEvery"' });
  });

  it('an unset ${VAR} in baseUrl is a warning (checked with a stand-in); --require-env makes it an error; --base-url replaces it', async () => {
    const warned = await run(['adapter', 'validate', file('reports.yaml'), '--json']);
    expect(warned.code).toBe(EXIT.ok);
    const [doc] = warned.json();
    const [checked] = doc!.contracts as Record<string, unknown>[];
    expect(checked).toMatchObject({ valid: true, baseUrl: 'https://unset.invalid/api' });
    expect(checked!.warnings).toEqual([
      {
        path: 'baseUrl',
        message: expect.stringMatching(
          /^environment variable REPORTS_URL is not set here: checked with a stand-in/,
        ) as unknown,
      },
    ]);

    const strict = await run(['adapter', 'validate', file('reports.yaml'), '--require-env']);
    expect(strict.code).toBe(EXIT.usage);
    expect(strict.stdout).toContain('  baseUrl: environment variable REPORTS_URL is not set\n');

    const set = await run(['adapter', 'validate', file('reports.yaml'), '--require-env', '--json'], {
      REPORTS_URL: 'https://reports.example',
    });
    expect((set.json()[0]!.contracts as Record<string, unknown>[])[0]).toMatchObject({
      valid: true,
      baseUrl: 'https://reports.example/api',
      warnings: [],
    });

    const given = await run([
      'adapter',
      'validate',
      file('reports.yaml'),
      '--base-url',
      'http://127.0.0.1:4010',
      '--json',
    ]);
    expect((given.json()[0]!.contracts as Record<string, unknown>[])[0]).toMatchObject({
      valid: true,
      baseUrl: 'http://127.0.0.1:4010',
      warnings: [],
    });
  });

  it('as the worker: a document whose name: differs from its file name is refused', async () => {
    const r = await run(['adapter', 'validate', file('misnamed.yaml')]);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stdout).toContain('  name: the document is named "things" but found as "misnamed"');
  });

  it('as the worker: a name is searched in ASYNCJOB_PROVIDERS_PATH, then among the built-in presets', async () => {
    const found = await run(['adapter', 'validate', 'reports', '--base-url', 'http://127.0.0.1:1'], {
      ASYNCJOB_PROVIDERS_PATH: dir,
    });
    expect(found.stdout).toBe('reports: ok (reports, no preset, create POST /jobs)\n');
    const builtIn = await run(['adapter', 'validate', 'rest'], { ASYNCJOB_SIMULATOR_URL: 'http://127.0.0.1:4010' });
    expect(builtIn).toMatchObject({ code: EXIT.ok, stdout: 'rest: ok (rest, no preset, create POST /v1/jobs)\n' });
  });

  it('T4: an inline secret is refused by name, never echoed', async () => {
    const r = await run(['adapter', 'validate', file('leaky.json'), '--json']);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stdout).toContain('create.headers.X-Api-Key');
    expect(r.stdout).not.toContain('sk-live-123456');
  });
});

describe('asyncjob adapter explain', () => {
  it('prints what the adapter sends and reads, the unset variable kept as ${VAR}, the warning on stderr', async () => {
    const r = await run(['adapter', 'explain', file('reports.yaml')]);
    expect(r.code).toBe(EXIT.ok);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('reports');
    expect(lines).toContain('2. Create');
    expect(lines).toContain('   POST ${REPORTS_URL}/api/jobs');
    expect(lines).toContain('   GET ${REPORTS_URL}/api/jobs/{jobId}');
    expect(r.stderr).toMatch(/^warning: baseUrl: environment variable REPORTS_URL is not set here/);
  });

  it('--json: the validate fields, the description and the sections', async () => {
    const r = await run(['adapter', 'explain', file('things.yaml'), '--json']);
    const [doc] = r.json();
    expect(Object.keys(doc!)).toEqual([
      'schema',
      'file',
      'valid',
      'code',
      'name',
      'preset',
      'create',
      'baseUrl',
      'issues',
      'warnings',
      'description',
      'sections',
    ]);
    expect(doc).toMatchObject({
      schema: 'asyncjob.adapter-explain/v1',
      valid: true,
      name: 'things',
      preset: 'azure-lro',
      description: null,
    });
    const sections = doc!.sections as { id: string; title: string; lines: string[] }[];
    expect(sections.map((s) => s.id)).toEqual([
      'provider',
      'create',
      'job',
      'status',
      'result',
      'cancel',
      'reconciliation',
      'webhook',
      'policy',
    ]);
    expect(sections[1]!.lines[0]).toBe('PUT https://management.example.com/things/{clientReference}');
  });

  it('an invalid contract: its problems on stderr, nothing on stdout, exit 2 (JSON: sections null)', async () => {
    const r = await run(['adapter', 'explain', file('broken.yaml')]);
    expect(r).toMatchObject({ code: EXIT.usage, stdout: '' });
    expect(r.stderr).toContain('status.path: unknown placeholder {id}');
    const j = await run(['adapter', 'explain', file('broken.yaml'), '--json']);
    expect(j.json()[0]).toMatchObject({ schema: 'asyncjob.adapter-explain/v1', valid: false, sections: null });
  });
});
