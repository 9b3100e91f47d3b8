/**
 * The documented commands that need a Temporal server, run as written (test/docs/doc-commands.ts lists them and
 * the substitutions allowed) against the run's dev server, in a namespace of their own so that the documented
 * operation IDs and the provider name `demo-reports` meet no other test. The provider is what `npm start` serves:
 * `asyncjob simulate` with the demo's scenario, and an `asyncjob worker` process serving it as `demo-reports`,
 * configured from the environment as docs/configuration.md says, from the bundle `npx asyncjob bundle` wrote.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SEARCH_ATTRIBUTES } from '../../src/core/search-attribute-names';
import { DEMO_SCENARIO } from '../../src/dev/demo-scenario';
import { findTemporalCli } from '../../src/dev/temporal-cli';
import { freePort } from '../../src/dev/temporal-server';
import { docCommand, substitute, type Substitution } from '../docs/doc-commands';
import { promptedBlockMismatch, runPromptedBlock } from '../docs/prompted-block';
import { dependOnThisPackage, runShell, startShell, stoppedCleanly, userEnv, type ShellServer } from '../docs/shell';
import { uniqueId } from '../setup/temporal';

const run = promisify(execFile);
const RUN_MS = 120_000;
const TOKEN = 'doc-commands-simulator-token';

/** The flags the docs' shortened start commands (`op-42 ...`) stand for: those of the full example above them. */
const ELIDED_42 = `--payload '{"report":"sales"}' --authorised-by alice --create-deadline 5m`;
const ELIDED_43 = `--payload '{"report":"sales"}' --started-by service:billing --authorised-by alice --create-deadline 5m --result-deadline 1h`;

describe('documented commands against a Temporal server, a worker and the simulator', { timeout: 600_000 }, () => {
  let work: string;
  let env: Record<string, string>;
  let simulator: ShellServer;
  let worker: ShellServer;
  const temporal = findTemporalCli();
  const address = inject('temporalAddress');
  const namespace = uniqueId('docs');

  /** Runs a documented command (with substitutions) in the work directory with the worker's environment. */
  const sh = (file: string, text: string, substitutions: Substitution[] = []) =>
    runShell(substitute(docCommand(file, text).text, substitutions), { cwd: work, env, timeoutMs: RUN_MS });

  beforeAll(async () => {
    expect(temporal, 'the Temporal CLI is installed (npm run temporal -- ensure)').toBeDefined();
    work = await mkdtemp(path.join(tmpdir(), 'asyncjob-doc-integration-'));
    dependOnThisPackage(work);
    const cli = (args: string[]) => run(temporal!.path, [...args, '--address', address], { timeout: 60_000 });
    await cli(['operator', 'namespace', 'create', '--namespace', namespace, '--retention', '24h']);
    // One attribute per call: the CLI maps only the first of several names given with one --type.
    for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) {
      const end = Date.now() + 60_000;
      // A new namespace takes a moment to be known to every service of the server.
      for (;;) {
        try {
          await cli([
            'operator',
            'search-attribute',
            'create',
            '--namespace',
            namespace,
            '--name',
            name,
            '--type',
            type,
          ]);
          break;
        } catch (err) {
          if (Date.now() > end) throw err;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    }
    // The mapping reaches every service of the server a moment later: wait until a start carrying one is taken.
    const probe = ['--namespace', namespace, '--workflow-id', `${namespace}-probe`];
    const end = Date.now() + 90_000;
    for (;;) {
      try {
        await cli([
          'workflow',
          'start',
          ...probe,
          '--type',
          'probe',
          '--task-queue',
          `${namespace}-probe`,
          '--search-attribute',
          'AsyncJobProvider="probe"',
          '--search-attribute',
          'AsyncJobResultDeadline="2030-01-01T00:00:00Z"',
        ]);
        break;
      } catch (err) {
        if (Date.now() > end) throw err;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
    await cli(['workflow', 'terminate', ...probe, '--reason', 'probe of the search attributes']);

    const scenario = path.join(work, 'demo-scenario.json');
    await writeFile(scenario, JSON.stringify({ dialect: 'rest', token: TOKEN, ...DEMO_SCENARIO }));
    simulator = startShell(`asyncjob simulate --port 0 --scenario ${scenario}`, { cwd: work, timeoutMs: 600_000 });
    const simulatorUrl = (await simulator.waitFor(/listening on (http:\/\/\S+) \(accounting/, RUN_MS))[1]!;

    await mkdir(path.join(work, 'providers'));
    await writeFile(path.join(work, 'providers', 'demo-reports.yaml'), 'name: demo-reports\npreset: rest\n');
    env = {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: namespace,
      ASYNCJOB_STORE: `sqlite:${path.join(work, 'asyncjob.db')}`,
      ASYNCJOB_ARTIFACTS_DIR: path.join(work, 'artifacts'),
      ASYNCJOB_PROVIDERS: './providers/demo-reports.yaml',
      ASYNCJOB_SIMULATOR_URL: simulatorUrl,
      ASYNCJOB_SIMULATOR_TOKEN: TOKEN,
      // The audit key README.md's Audit section names: it signs the chain and the checkpoints.
      ASYNCJOB_AUDIT_HMAC_KEY_FILE: path.join(work, 'audit-hmac.key'),
    };
    await writeFile(env.ASYNCJOB_AUDIT_HMAC_KEY_FILE!, 'doc-commands-audit-key-of-32-bytes!!');

    const bundled = await sh('README.md', 'npx asyncjob bundle --out workflow-bundle.js');
    expect(bundled.code, bundled.stderr).toBe(0);
    expect(existsSync(path.join(work, 'workflow-bundle.js'))).toBe(true);
    env.ASYNCJOB_WORKFLOW_BUNDLE = 'workflow-bundle.js';

    worker = startShell(docCommand('docs/configuration.md', 'asyncjob worker').text, {
      cwd: work,
      env,
      timeoutMs: 600_000,
    });
    await worker.waitFor(/asyncjob worker: task queue/, RUN_MS);
  }, 300_000);

  afterAll(async () => {
    // 'asyncjob worker' stops gracefully on SIGTERM, exit 0, as docs/cli.md says.
    const stopped = await worker?.stop('SIGTERM', 60_000);
    await simulator?.stop('SIGINT');
    if (stopped) expect(stoppedCleanly(stopped, 'SIGTERM'), worker.output().slice(-3000)).toBe(true);
    if (stopped) expect(stopped.code).toBe(0);
  });

  it('docs/cli.md: asyncjob start --provider demo-reports --operation-id op-42 ... --wait succeeds', async () => {
    const started = await sh(
      'docs/cli.md',
      `asyncjob start --provider demo-reports --operation-id op-42 --payload '{"report":"sales"}' --started-by service:billing --authorised-by alice --create-deadline 5m --result-deadline 1h --wait`,
    );
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toContain('operation op-42 ended: succeeded');
  });

  it('docs/cli.md: the same ID with other settings is refused naming them, exit 3, as shown', async () => {
    await runPromptedBlock(
      'docs/cli.md',
      'asyncjob start --provider demo-reports --operation-id op-42 ... --started-by service:other --result-deadline 2h',
      work,
      [[' ... ', ` ${ELIDED_42} `, 'elided']],
      env,
    );
  });

  it('docs/cli.md: asyncjob start --provider rest --operation-id op-43 ... is refused naming the served providers, exit 2', async () => {
    // Visibility lags a second or so: the served providers are read from recent operations.
    const end = Date.now() + 60_000;
    let mismatch: string | undefined = 'not run';
    while (mismatch !== undefined && Date.now() < end) {
      mismatch = await promptedBlockMismatch(
        'docs/cli.md',
        'asyncjob start --provider rest --operation-id op-43 ...',
        work,
        [[' ...', ` ${ELIDED_43}`, 'elided']],
        env,
      );
    }
    expect(mismatch).toBeUndefined();
  });

  it('docs/cli.md: asyncjob list --provider demo-reports --state succeeded shows op-42', async () => {
    const end = Date.now() + 60_000;
    let mismatch: string | undefined = 'not run';
    while (mismatch !== undefined && Date.now() < end) {
      mismatch = await promptedBlockMismatch(
        'docs/cli.md',
        'asyncjob list --provider demo-reports --state succeeded',
        work,
        [],
        env,
      );
    }
    expect(mismatch).toBeUndefined();
  });

  it('README.md: the escalation walk-through: start, watch (exit 7), decide, decide --option extend, watch (succeeded)', async () => {
    const id = 'try-review-20261201t083503-901e';
    const start = await sh(
      'README.md',
      `npx asyncjob start --provider demo-reports --operation-id try-review-20261201t083503-901e --payload '{"report":"quarterly-review","scenario":"review"}' --started-by you --authorised-by you --create-deadline 1m --result-deadline 30m`,
    );
    expect(start.code, start.stderr).toBe(0);

    const watched = await sh('README.md', `npx asyncjob watch ${id}`);
    // "stops: escalated (unknown_state), exit 7 (needs a decision)"
    expect(docCommand('README.md', `npx asyncjob watch ${id}`).comment).toContain('exit 7');
    expect(watched.code, watched.stderr).toBe(7);
    expect(watched.stdout + watched.stderr).toContain(`operation ${id} escalated (unknown_state)`);

    const shown = await sh('README.md', `npx asyncjob decide ${id}`);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('--option extend --extend 15m --checks 4 --by WHO --reason TEXT');

    const decided = await sh(
      'README.md',
      `npx asyncjob decide ${id} --option extend --extend 15m --checks 4 --by you --reason "reviewed by hand"`,
    );
    expect(decided.code, decided.stderr).toBe(0);

    const after = await sh('README.md', `npx asyncjob watch ${id}`);
    expect(after.code, after.stdout + after.stderr).toBe(0);
    expect(after.stdout).toContain(`operation ${id} ended: succeeded`);
  });

  it('docs/configuration.md: asyncjob status op-42 --json, asyncjob list --escalated, and the agents list filter', async () => {
    const status = await sh('docs/configuration.md', 'asyncjob status op-42 --json');
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      schema: 'asyncjob.status/v1',
      operation: { operationId: 'op-42', localState: 'succeeded' },
    });
    const escalated = await sh('docs/configuration.md', 'asyncjob list --escalated');
    expect(escalated.code, escalated.stderr).toBe(0);
    expect(escalated.stdout).toMatch(/^(OPERATION +STATE|no operations \(state escalated\))/);
    const requested = await sh('docs/agents.md', 'asyncjob list --escalated --reason extension_requested');
    expect(requested.code, requested.stderr).toBe(0);
    expect(requested.stdout).toMatch(/^(OPERATION +STATE|no operations \(state escalated)/);
  });

  it('README.md: asyncjob doctor passes every check for the worker environment', async () => {
    const doctor = await sh('README.md', 'asyncjob doctor');
    expect(doctor.code, doctor.stdout).toBe(0);
    // The README's worker runs without a decider policy: the one warning says so (D2).
    expect(doctor.stdout.trim().split('\n').at(-1)).toBe('all checks passed (1 warning)');
    expect(doctor.stdout).toMatch(/^warn +decider-policy: no decider policy /m);
    expect(doctor.stdout).toMatch(/^ok +temporal: Temporal \S+ answers at /m);
  });

  it('README.md, docs/operating.md: asyncjob audit show ID, audit verify [--operation ID], audit checkpoint --out FILE, audit verify --with-temporal', async () => {
    const show = await sh('README.md', 'asyncjob audit show ID', [['ID', 'op-42', 'placeholder']]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/result_collecting -> succeeded \(job job_\w+\)/);
    const one = await sh('README.md', 'asyncjob audit verify [--operation ID]', [
      ['[--operation ID]', '--operation op-42', 'placeholder'],
    ]);
    expect(one.code, one.stdout + one.stderr).toBe(0);
    const all = await sh('docs/reliability.md', 'asyncjob audit verify');
    expect(all.code, all.stdout + all.stderr).toBe(0);
    const checkpoint = path.join(work, 'checkpoints.jsonl');
    const written = await sh('README.md', 'asyncjob audit checkpoint --out FILE', [
      ['FILE', checkpoint, 'placeholder'],
    ]);
    expect(written.code, written.stderr).toBe(0);
    expect(readFileSync(checkpoint, 'utf8').trim().split('\n')).toHaveLength(1);
    const temporalToo = await sh('docs/operating.md', 'asyncjob audit verify --with-temporal');
    expect(temporalToo.code, temporalToo.stdout + temporalToo.stderr).toBe(0);
  });

  it('docs/cli.md: asyncjob bundle --out /app/workflow-bundle.js, then asyncjob replay-check --bundle /app/workflow-bundle.js and asyncjob replay-check', async () => {
    const app: Substitution = ['/app', path.join(work, 'app'), 'dataDir'];
    const bundled = await sh('docs/cli.md', 'asyncjob bundle --out /app/workflow-bundle.js', [app]);
    expect(bundled.code, bundled.stderr).toBe(0);
    const checked = await sh('docs/cli.md', 'asyncjob replay-check --bundle /app/workflow-bundle.js', [app]);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    expect(checked.stdout).toMatch(/^replay-check: \d+ histories replayed, 0 failed$/m);
    const plain = await sh('README.md', 'asyncjob replay-check');
    expect(plain.code, plain.stdout + plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/^replay-check: \d+ histories replayed, 0 failed$/m);
  });

  it('docs/cli.md: asyncjob replay-check --history op-42.json op-43.json replays saved histories', async () => {
    // The two files, as `temporal workflow show --output json` writes them: op-42's and the walk-through's.
    for (const [file, id] of [
      ['op-42.json', 'op-42'],
      ['op-43.json', 'try-review-20261201t083503-901e'],
    ] as const) {
      const shown = await run(
        temporal!.path,
        ['workflow', 'show', '--workflow-id', id, '--output', 'json', '--namespace', namespace, '--address', address],
        { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      );
      await writeFile(path.join(work, file), shown.stdout);
    }
    const replayed = await sh('docs/cli.md', 'asyncjob replay-check --history op-42.json op-43.json');
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    expect(replayed.stdout).toMatch(/^replay-check: 2 histories replayed, 0 failed$/m);
  });

  describe('docs/agents.md: asyncjob mcp, with a policy file agents.yaml', () => {
    beforeAll(async () => {
      await writeFile(
        path.join(work, 'agents.yaml'),
        [
          'version: 1',
          'authorisedBy: policy:docs',
          'stdioIdentity: agent:report-writer',
          'agents:',
          ...[
            // sha256("test") and sha256("x"): the bearer tokens of the HTTP form, one per agent.
            ['agent:report-writer', '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
            ['agent:x', '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881'],
          ].flatMap(([identity, digest]) => [
            `  - identity: ${identity}`,
            `    token: { sha256: ${digest} }`,
            '    providers:',
            '      - { name: demo-reports, maxCreateDeadline: 1m, maxResultDeadline: 15m, maxStatusRequests: 10 }',
          ]),
        ].join('\n'),
      );
    });

    it.each([['asyncjob mcp --policy agents.yaml'], ['asyncjob mcp --policy agents.yaml --identity agent:x']])(
      '%s serves the agent tools over stdio',
      async (text) => {
        const transport = new StdioClientTransport({
          command: 'bash',
          args: ['-c', docCommand('docs/agents.md', text).text],
          cwd: work,
          env: userEnv(env) as Record<string, string>,
          stderr: 'pipe',
        });
        const client = new Client({ name: 'doc-commands', version: '1.0.0' });
        try {
          await client.connect(transport);
          const { tools } = await client.listTools();
          expect(tools.map((tool) => tool.name)).toContain('start_operation');
          const providers = await client.callTool({ name: 'list_providers', arguments: {} });
          const identity = text.includes('--identity') ? 'agent:x' : 'agent:report-writer';
          expect(JSON.stringify(providers.content)).toContain(`\\"identity\\":\\"${identity}\\"`);
        } finally {
          await client.close();
        }
      },
    );

    it('asyncjob mcp --policy agents.yaml --http --port 8765 serves Streamable HTTP and asks for a bearer token', async () => {
      const port = await freePort();
      const server = startShell(
        substitute(docCommand('docs/agents.md', 'asyncjob mcp --policy agents.yaml --http --port 8765').text, [
          ['8765', String(port), 'port'],
        ]),
        { cwd: work, env, timeoutMs: RUN_MS },
      );
      try {
        await server.waitFor(new RegExp(`http://127\\.0\\.0\\.1:${port}/mcp`), RUN_MS);
        const refused = await request(`http://127.0.0.1:${port}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
        expect(refused.statusCode).toBe(401);
        await refused.body.dump();
      } finally {
        const stopped = await server.stop('SIGTERM');
        expect(stoppedCleanly(stopped, 'SIGTERM'), server.output()).toBe(true);
      }
    });
  });
});
