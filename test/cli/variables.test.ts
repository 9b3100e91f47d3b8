/**
 * Operation variables on the command line (C5): `--var NAME=VALUE` parsed and carried into the start request, a
 * misfit refused with exit 2 naming the variable before anything is started when the adapter document is visible
 * (ASYNCJOB_PROVIDERS, as for the worker), and the recorded variables and refusal shown by `status`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/args';
import { EXIT } from '../../src/cli/exit-codes';
import { runCli } from '../../src/cli/run-cli';
import { FakeClient, fakeDeps, record, startArgv, usageError } from './fixtures';

const START = startArgv('reports');

const REPORTS = `name: reports
baseUrl: \${REPORTS_URL}/api
credential: { scheme: none }
variables:
  scope: { pattern: 'tenants/[a-z0-9-]+', reserved: true, required: true }
  region: { default: eu-west-1 }
create: { path: "/{+scope}/jobs", jobId: [{ from: body, field: id }] }
status: { path: "/{+scope}/jobs/{jobId}", stateField: state, stateTable: { pending: [running], success: [done] } }
result: { url: [{ from: template, path: "/{+scope}/jobs/{jobId}/result" }] }
reconciliation: { method: none }
collectSafeToRepeat: true
`;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-variables-cli-'));
  await writeFile(path.join(dir, 'reports.yaml'), REPORTS);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--var NAME=VALUE (C5)', () => {
  it('C5: is repeatable and splits each at its first =, so a value may hold =', () => {
    const cmd = parseCommandLine([...START, '--var', 'scope=tenants/a', '--var', 'filter=a=b', '--var', 'empty=']);
    expect(cmd).toMatchObject({ variables: { scope: 'tenants/a', filter: 'a=b', empty: '' } });
    expect(parseCommandLine(START)).not.toHaveProperty('variables');
  });

  it.each([
    ['no =', ['--var', 'scope'], '--var "scope": expected NAME=VALUE'],
    ['an empty name', ['--var', '=x'], '--var "=x": expected NAME=VALUE'],
    ['a name given twice', ['--var', 'a=1', '--var', 'a=2'], '--var a: given more than once'],
  ])('C5: refuses %s as a usage error naming it', (_what, extra, message) => {
    const error = usageError([...START, ...extra]);
    expect(error.message).toBe(message);
    expect(error.code).toBe('ASYNCJOB_ERR_USAGE');
  });

  it('C5: start carries the variables in the start request', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client);
    const deps = { ...io.deps, env: {} };
    expect(await runCli([...START, '--var', 'scope=tenants/acme'], deps)).toBe(EXIT.ok);
    expect(client.calls[0]?.method).toBe('start');
    expect(client.calls[0]?.args[0]).toMatchObject({ variables: { scope: 'tenants/acme' } });
  });

  it('C5: with the adapter document visible, a variable it refuses exits 2 naming it, and nothing is started', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client);
    const env = { ASYNCJOB_PROVIDERS: path.join(dir, 'reports.yaml') };
    const argv = [...START, '--var', 'scope=tenants/acme/../other', '--var', 'regoin=us', '--json'];
    expect(await runCli(argv, { ...io.deps, env })).toBe(EXIT.usage);
    expect(client.calls).toEqual([]);
    expect(io.stderr()).toMatch(/^asyncjob: invalid operation variables: variables\.regoin: not declared/);
    const [doc] = io.json();
    expect(doc).toMatchObject({ schema: 'asyncjob.error/v1', code: 'ASYNCJOB_ERR_INVALID_VARIABLE', exitCode: 2 });
    expect(doc!.issues).toEqual([
      { path: 'variables.regoin', message: 'not declared: the adapter declares region, scope' },
      { path: 'variables.scope', message: 'does not match the pattern tenants/[a-z0-9-]+' },
    ]);
  });

  it('C5: with the adapter document visible, a missing required variable exits 2; fitting ones start', async () => {
    const env = { ASYNCJOB_PROVIDERS: `other, ${path.join(dir, 'reports.yaml')}` };
    const refused = fakeDeps(new FakeClient());
    expect(await runCli(START, { ...refused.deps, env })).toBe(EXIT.usage);
    expect(refused.stderr()).toBe(
      'asyncjob: invalid operation variables: variables.scope: required by the adapter and not given\n',
    );
    const client = new FakeClient();
    const io = fakeDeps(client);
    expect(await runCli([...START, '--var', 'scope=tenants/acme'], { ...io.deps, env })).toBe(EXIT.ok);
    expect(client.calls).toHaveLength(1);
  });

  it('C5: a document this process cannot see leaves the check to the workflow', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client);
    const env = { ASYNCJOB_PROVIDERS: path.join(dir, 'elsewhere.yaml') };
    expect(await runCli([...START, '--var', 'anything=x'], { ...io.deps, env })).toBe(EXIT.ok);
    expect(client.calls).toHaveLength(1);
  });
});

describe('status shows the variables and a refusal (C5)', () => {
  it('C5: the recorded variables in text and JSON', async () => {
    const client = new FakeClient();
    client.records = [record({ variables: { scope: 'tenants/acme', region: 'eu-west-1' } })];
    const io = fakeDeps(client);
    await runCli(['status', 'op-42'], io.deps);
    expect(io.stdout()).toContain('  variables: scope="tenants/acme", region="eu-west-1"\n');
    const json = fakeDeps(client);
    await runCli(['status', 'op-42', '--json'], json.deps);
    expect(json.json()[0]).toMatchObject({
      operation: { variables: { scope: 'tenants/acme', region: 'eu-west-1' }, refusal: null },
    });
  });

  it('C5: a refused operation shows its code and every issue; no variables, an empty object', async () => {
    const client = new FakeClient();
    const issues = [{ path: 'variables.scope', message: 'required by the adapter and not given' }];
    client.records = [record({ localState: 'failed', refusal: { code: 'ASYNCJOB_ERR_INVALID_VARIABLE', issues } })];
    const io = fakeDeps(client);
    expect(await runCli(['status', 'op-42'], io.deps)).toBe(EXIT.operationEndedBadly);
    expect(io.stdout()).toContain(
      '  refused:   ASYNCJOB_ERR_INVALID_VARIABLE: variables.scope: required by the adapter and not given (nothing was sent)\n',
    );
    expect(io.stdout()).not.toContain('variables:');
    const json = fakeDeps(client);
    await runCli(['status', 'op-42', '--json'], json.deps);
    expect(json.json()[0]).toMatchObject({
      operation: { variables: {}, refusal: { code: 'ASYNCJOB_ERR_INVALID_VARIABLE', issues } },
    });
  });
});
