/**
 * The documented paths are the tested paths. Every command line README.md and docs/*.md tell a user to run is in
 * the registry (doc-commands.ts) with the test that runs it, the `.ci/run` line that runs it, or why it is only
 * illustrative; a new documented command without an entry fails here, naming its file and line, and so does an
 * entry whose command the docs no longer show. The commands that need no Temporal server run here, as written,
 * through `bash` with `asyncjob` on PATH as the package's `bin/asyncjob`; their documented outcome is checked
 * (exit code, and the output shown after a `$ ` line). The others run in test/integration/doc-commands.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/dev/temporal-server';
import { docCommand, extractAll, REGISTRY, substitute } from './doc-commands';
import { commandKey, extractCommands } from './markdown-commands';
import { runPromptedBlock } from './prompted-block';
import { ROOT, runShell, startShell, stoppedCleanly } from './shell';

const RUN_MS = 120_000;

describe('the registry of documented commands', () => {
  const extractions = extractAll();
  const commands = extractions.flatMap((x) => x.commands);

  it('reads the commands of a fenced block, its prompts, output, continuations and comments', () => {
    const markdown = [
      'Run `npx asyncjob help` or `asyncjob worker',
      '--help`; `asyncjob` alone is a name.',
      '```sh',
      'npm ci \\',
      '  --no-audit   # quietly',
      '# only a comment',
      '```',
      '```',
      '$ asyncjob list --limit 1   # newest',
      'OPERATION  STATE',
      "$ echo 'a # b'",
      'a # b',
      '```',
      '<!-- illustrative: a synopsis -->',
      '```',
      'asyncjob status ID',
      '```',
      '```text',
      'npm start',
      '```',
    ].join('\n');
    const { commands: found, illustrative } = extractCommands('x.md', markdown);
    expect(found.map((c) => [c.line, c.kind, c.text, c.comment, c.output])).toEqual([
      [1, 'inline', 'npx asyncjob help', '', []],
      [1, 'inline', 'asyncjob worker --help', '', []],
      [4, 'block', 'npm ci --no-audit', 'quietly', []],
      [9, 'block', 'asyncjob list --limit 1', 'newest', ['OPERATION  STATE']],
      [11, 'block', "echo 'a # b'", '', ['a # b']],
    ]);
    expect(illustrative).toEqual([{ file: 'x.md', line: 15, reason: 'a synopsis' }]);
  });

  it('every documented command has an entry (a test, a .ci/run line, or a reason)', () => {
    const missing = commands
      .filter((c) => !REGISTRY.has(commandKey(c.file, c.text)))
      .map((c) => `${c.file}:${c.line}: ${c.text}`);
    expect(missing, 'documented commands with no registry entry in test/docs/doc-commands.ts').toEqual([]);
  });

  it('every entry is a command the docs still show', () => {
    const shown = new Set(commands.map((c) => commandKey(c.file, c.text)));
    expect([...REGISTRY.keys()].filter((key) => !shown.has(key))).toEqual([]);
  });

  it('every entry names a test file that runs it, or a line .ci/run really has', () => {
    const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
    const problems: string[] = [];
    for (const [key, handling] of REGISTRY) {
      const text = key.slice(key.indexOf(': ') + 2);
      if ('ci' in handling) {
        if (!ci.includes(handling.ci)) problems.push(`${key}: .ci/run has no ${JSON.stringify(handling.ci)}`);
      } else if ('test' in handling) {
        const file = path.join(ROOT, handling.test);
        const mention = handling.mentions ?? text;
        if (!existsSync(file)) problems.push(`${key}: no ${handling.test}`);
        else if (!readFileSync(file, 'utf8').includes(mention))
          problems.push(`${key}: ${handling.test} never names it`);
      } else if (handling.illustrative.trim().length < 10) {
        problems.push(`${key}: an illustrative entry needs its reason`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('an illustrative block says why in the document', () => {
    const blocks = extractions.flatMap((x) => x.illustrative);
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) expect(block.reason.length, `${block.file}:${block.line}`).toBeGreaterThan(10);
  });

  it('npm test is what .ci/run runs, and it runs the typecheck and the lint', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.test).toBe('npm run typecheck && npm run lint && vitest run');
  });
});

describe('documented commands that need no Temporal server, run as written', { timeout: 300_000 }, () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'asyncjob-doc-commands-'));
  });

  it('docs/cli.md: npx asyncjob help, and npx asyncjob help decide', async () => {
    const help = await runShell(docCommand('docs/cli.md', 'npx asyncjob help').text, { timeoutMs: RUN_MS });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: asyncjob <command> \[options\]/);
    for (const command of ['start', 'status', 'watch', 'cancel', 'decide', 'list', 'doctor', 'worker', 'mcp']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
    const decide = await runShell(docCommand('docs/cli.md', 'npx asyncjob help decide').text, { timeoutMs: RUN_MS });
    expect(decide.code).toBe(0);
    expect(decide.stdout).toMatch(/^usage: asyncjob decide ID\n/);
  });

  it('README.md, docs/configuration.md: asyncjob worker --help prints the worker settings', async () => {
    const run = await runShell(docCommand('docs/configuration.md', 'asyncjob worker --help').text, {
      timeoutMs: RUN_MS,
    });
    expect(run.code).toBe(0);
    for (const name of ['TEMPORAL_ADDRESS', 'ASYNCJOB_PROVIDERS', 'ASYNCJOB_STORE', 'ASYNCJOB_WORKFLOW_BUNDLE']) {
      expect(run.stdout).toContain(name);
    }
  });

  it('docs/configuration.md: ASYNCJOB_PROVIDERS=./providers/reports.yaml ASYNCJOB_WEBHOOK_PORT=8088 asyncjob worker names every problem, exit 2', async () => {
    const cwd = path.join(work, 'worker-check');
    await mkdir(path.join(cwd, 'providers'), { recursive: true });
    // The provider the example describes: its base URL, credential and webhook secret from three variables.
    await writeFile(
      path.join(cwd, 'providers', 'reports.yaml'),
      [
        'name: reports',
        'preset: rest',
        'baseUrl: ${REPORTS_URL}',
        'credential: { scheme: bearer, secretEnv: REPORTS_TOKEN }',
        'webhook: { secret: { secretEnv: REPORTS_WEBHOOK_SECRET } }',
      ].join('\n'),
    );
    const run = await runPromptedBlock(
      'docs/configuration.md',
      'ASYNCJOB_PROVIDERS=./providers/reports.yaml ASYNCJOB_WEBHOOK_PORT=8088 asyncjob worker',
      cwd,
    );
    expect(run.stdout.trim().split('\n').at(-1)).toBe('2');
  });

  it('D3: docs/operating.md, docs/cli.md: asyncjob keys new --for alice@example.com writes the key file and prints what is shown', async () => {
    const keys = path.join(work, 'decider-keys');
    const file = path.join(keys, 'ff8d9819fc0e12bf0d24892e45987e24.json');
    // The documented directory (the default for alice's home) becomes one of the run, given as the setting.
    await runPromptedBlock(
      'docs/operating.md',
      'asyncjob keys new --for alice@example.com',
      work,
      [['/home/alice/.config/asyncjob/keys', keys, 'dataDir']],
      { ASYNCJOB_DECIDER_KEYS_DIR: keys },
    );
    expect(existsSync(file)).toBe(true);
    const again = await runShell(docCommand('docs/cli.md', 'asyncjob keys new --for alice@example.com').text, {
      env: { ASYNCJOB_DECIDER_KEYS_DIR: keys },
      timeoutMs: RUN_MS,
    });
    expect(again.code, 'a key file is never overwritten').toBe(2);
    expect(again.stderr).toContain(`key file ${file}: exists already`);
  });

  it('docs/cli.md: asyncjob adapter validate test/conformance/azure-put.yaml broken.yaml, exit 2 as shown', async () => {
    const broken = path.join(work, 'broken.yaml');
    // A contract with the two problems the example shows.
    await writeFile(
      broken,
      [
        'name: broken',
        'baseUrl: https://reports.example.com',
        'credential: { scheme: none }',
        'create: { path: /jobs, jobId: [{ from: body, field: id }] }',
        'status: { path: "/jobs/{id}", stateField: state, stateTable: { pending: [running], success: [done] } }',
        'result: { url: [{ from: template, path: "/jobs/{jobId}/result" }] }',
        'reconciliation: { method: none }',
      ].join('\n'),
    );
    await runPromptedBlock(
      'docs/cli.md',
      'asyncjob adapter validate test/conformance/azure-put.yaml broken.yaml',
      ROOT,
      [
        [' broken.yaml', ` ${broken}`, 'dataDir'],
        ['broken.yaml:', `${broken}:`, 'dataDir'],
      ],
    );
  });

  it('docs/cli.md: asyncjob adapter explain test/conformance/azure-put.yaml prints the sections shown', async () => {
    const run = await runPromptedBlock('docs/cli.md', 'asyncjob adapter explain test/conformance/azure-put.yaml', ROOT);
    expect(run.code).toBe(0);
  });

  describe('docs/writing-an-adapter.md, in a directory holding its contracts', () => {
    let cwd: string;
    beforeAll(async () => {
      cwd = path.join(work, 'adapter-guide');
      await mkdir(path.join(cwd, 'contracts'), { recursive: true });
      const guide = readFileSync(path.join(ROOT, 'docs/writing-an-adapter.md'), 'utf8');
      const acme = /Its contract, `contracts\/acme-exports\.yaml`:\n\n```yaml\n([\s\S]*?)\n```/.exec(guide);
      expect(acme, 'the guide shows contracts/acme-exports.yaml').not.toBeNull();
      await writeFile(path.join(cwd, 'contracts', 'acme-exports.yaml'), acme![1]!);
      // A contract with the five problems the guide's example shows.
      await writeFile(
        path.join(cwd, 'contracts', 'broken.yaml'),
        [
          'name: broken',
          'baseUrl: https://x.example',
          'credential: { scheme: bearer, secretEnv: X, secretFile: /y }',
          'create: { path: /jobs, jobId: [{ from: body, field: id }] }',
          'status: { path: "/jobs/{id}", stateField: state, stateTable: { pending: [run], success: [1] }, pollEvery: 5 }',
          'result: { url: [{ from: template, path: "/jobs/{jobId}/out" }] }',
          'reconciliation: { method: none }',
        ].join('\n'),
      );
    });

    it('asyncjob adapter validate contracts/acme-exports.yaml contracts/broken.yaml prints every problem as shown', async () => {
      const run = await runPromptedBlock(
        'docs/writing-an-adapter.md',
        'asyncjob adapter validate contracts/acme-exports.yaml contracts/broken.yaml',
        cwd,
      );
      expect(run.code).toBe(2);
    });

    it('asyncjob adapter validate contracts/*.yaml exits 2 (one is not valid); explain prints the steps', async () => {
      const validate = await runShell(
        docCommand('docs/writing-an-adapter.md', 'asyncjob adapter validate contracts/*.yaml').text,
        {
          cwd,
          timeoutMs: RUN_MS,
        },
      );
      expect(validate.code).toBe(2);
      expect(validate.stdout).toContain('contracts/acme-exports.yaml: ok (acme-exports');
      expect(validate.stdout).toContain('contracts/broken.yaml: invalid (5 problems)');
      const explain = await runShell(
        docCommand('docs/writing-an-adapter.md', 'asyncjob adapter explain contracts/acme-exports.yaml').text,
        { cwd, timeoutMs: RUN_MS },
      );
      expect(explain.code).toBe(0);
      expect(explain.stdout).toMatch(/^acme-exports: Acme Exports v2/);
      expect(explain.stdout).toContain('\n2. Create\n');
    });

    it('asyncjob adapter explain rest finds the built-in preset by name', async () => {
      const run = await runShell(docCommand('docs/writing-an-adapter.md', 'asyncjob adapter explain rest').text, {
        cwd,
        timeoutMs: RUN_MS,
      });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^rest\b/);
    });
  });

  it('README.md: asyncjob simulate --port 8080 --scenario examples/scenarios/rest-mixed.yaml serves until SIGINT', async () => {
    const port = await freePort();
    const command = substitute(
      docCommand('README.md', 'asyncjob simulate --port 8080 --scenario examples/scenarios/rest-mixed.yaml').text,
      [['8080', String(port), 'port']],
    );
    const server = startShell(command, { timeoutMs: RUN_MS });
    try {
      await server.waitFor(/listening on (http:\/\/\S+) \(accounting/, RUN_MS);
      const accounting = await request(`http://127.0.0.1:${port}/_sim/requests`);
      expect(accounting.statusCode).toBe(200);
      await accounting.body.dump();
    } finally {
      const stopped = await server.stop('SIGINT');
      // asyncjob simulate is no npm script: it exits 0 on SIGINT itself.
      expect(stopped.code, server.output()).toBe(0);
      expect(stoppedCleanly(stopped, 'SIGINT')).toBe(true);
    }
  });

  it('README.md: npm run temporal -- ensure finds the installed Temporal CLI', async () => {
    const run = await runShell(docCommand('README.md', 'npm run temporal -- ensure').text, { timeoutMs: RUN_MS });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/temporal \(/);
  });

  it('README.md: npm run temporal -- start --port N --ui-port N [--db FILE] serves, and stops cleanly on SIGINT', async () => {
    const [port, uiPort] = [await freePort(), await freePort()];
    const db = path.join(work, 'temporal.db');
    const command = substitute(
      docCommand('README.md', 'npm run temporal -- start --port N --ui-port N [--db FILE]').text,
      [
        ['--port N --ui-port N', `--port ${port} --ui-port ${uiPort}`, 'port'],
        ['[--db FILE]', `--db ${db}`, 'placeholder'],
      ],
    );
    const server = startShell(command, { timeoutMs: RUN_MS });
    try {
      await server.waitFor(new RegExp(`at 127\\.0\\.0\\.1:${port}, Web UI http://\\S+:${uiPort}`), RUN_MS);
      expect(existsSync(db)).toBe(true);
    } finally {
      const stopped = await server.stop('SIGINT');
      expect(stoppedCleanly(stopped, 'SIGINT'), server.output().slice(-3000)).toBe(true);
    }
  });
});
