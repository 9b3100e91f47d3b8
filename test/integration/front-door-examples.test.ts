/**
 * The examples of README.md "Using it from a service" and of docs/cli.md run as written against `npm start`'s
 * setup: a worker serving the provider `demo-reports` (the simulator's rest dialect). The library examples run
 * as a user runs them: the package built (`npm run build`'s compiler, into a scratch install), imported by name from
 * an ES module by plain `node`. The command lines of docs/cli.md run through the CLI with their words unchanged.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { FileArtifactStore } from '../../src/adapters/artifacts/artifact-store';
import { createProviderRegistry, type ProviderRegistry } from '../../src/adapters/providers/registry';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import type { OperationStore } from '../../src/adapters/store/operation-store';
import { AsyncJobClient } from '../../src/client';
import { EXIT } from '../../src/cli/exit-codes';
import { startSimulator, type Simulator } from '../../src/simulator';
import { createWorkers, runWorkers, shutdownWorkers } from '../../src/worker';
import { connectTestEnvironment, uniqueId, workflowBundle } from '../setup/temporal';
import { runOn } from './front-door-cli';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const PROVIDER = 'demo-reports';
const TOKEN = 'examples-simulator-token';

/** The body of the first fenced block of `lang` after `heading` (and before the next heading of that level). */
function fencedBlock(markdown: string, heading: string, lang: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = heading.split(' ')[0]!;
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n${level} `));
  const section = end < 0 ? rest : rest.slice(0, end);
  const match = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(section);
  if (!match) throw new Error(`no \`\`\`${lang} block under "${heading}"`);
  return match[1]!;
}

/** Splits a shell command line as sh does for the quoting the docs use: '…', "…", and a `\` line continuation. */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  const src = text.replace(/\\\n/g, ' ');
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "'" || c === '"') {
      const close = src.indexOf(c, i + 1);
      word = (word ?? '') + src.slice(i + 1, close);
      i = close;
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

describe('the examples of README.md and docs/cli.md run as written against a worker serving demo-reports', () => {
  let env: TestWorkflowEnvironment;
  let sim: Simulator;
  let store: OperationStore;
  let registry: ProviderRegistry;
  let workers: Worker[];
  let running: Promise<void>;
  let client: AsyncJobClient;
  let installDir: string;
  const taskQueue = uniqueId('wf-examples');

  beforeAll(async () => {
    env = await connectTestEnvironment();
    const dataDir = await mkdtemp(path.join(tmpdir(), 'asyncjob-examples-'));
    sim = await startSimulator({ dialect: 'rest', token: TOKEN });
    store = await openSqliteStore({ path: path.join(dataDir, 'asyncjob.db'), forbiddenValues: [TOKEN] });
    registry = await createProviderRegistry({
      providers: [{ name: PROVIDER, path: 'rest' }],
      baseUrls: { [PROVIDER]: sim.url },
      env: { ASYNCJOB_SIMULATOR_TOKEN: TOKEN },
      taskQueue,
    });
    workers = await createWorkers({
      connection: env.nativeConnection,
      taskQueue,
      activities: createActivities({
        store,
        providers: registry,
        artifacts: new FileArtifactStore(path.join(dataDir, 'artifacts')),
      }),
      providerQueues: [{ taskQueue: registry.get(PROVIDER).taskQueue }],
      workflowBundle: await workflowBundle(),
      shutdownGraceTime: '1 second',
    });
    running = runWorkers(workers);
    client = new AsyncJobClient({ client: env.client, taskQueue });

    // `npm run build` into a scratch install of the package: node_modules/asyncjob/{package.json,bin,dist}.
    installDir = path.join(dataDir, 'service');
    const pkg = path.join(installDir, 'node_modules', 'asyncjob');
    await mkdir(pkg, { recursive: true });
    await writeFile(path.join(pkg, 'package.json'), await readFile(path.join(ROOT, 'package.json')));
    await symlink(path.join(ROOT, 'node_modules'), path.join(pkg, 'node_modules'), 'dir');
    // `bin/` ships in the package (package.json `files`): the entries check the Node.js version with its module.
    await symlink(path.join(ROOT, 'bin'), path.join(pkg, 'bin'), 'dir');
    await run(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        path.join(ROOT, 'tsconfig.build.json'),
        '--outDir',
        path.join(pkg, 'dist'),
      ],
      { cwd: ROOT },
    ).catch(
      // Type errors elsewhere in a working tree do not stop the emit; a missing dist/index.js does (below).
      (err: { stdout?: string }) => console.warn(`tsc reported: ${err.stdout?.slice(0, 2000) ?? err}`),
    );
  }, 180_000);

  afterAll(async () => {
    if (workers) shutdownWorkers(workers);
    await running?.catch(() => undefined);
    await registry?.close();
    await store?.close();
    await sim?.stop();
    await env?.teardown();
  });

  /** Runs an example as an ES module with plain node, with the Temporal environment of the test. */
  async function runModule(name: string, code: string): Promise<{ stdout: string; stderr: string }> {
    const file = path.join(installDir, name);
    await writeFile(file, code);
    return run(process.execPath, [file], {
      cwd: installDir,
      timeout: 90_000,
      env: {
        PATH: process.env.PATH ?? '',
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        ASYNCJOB_TASK_QUEUE: taskQueue,
      },
    });
  }

  it('README.md "Using it from a service": the service module runs and gets a verified result', async () => {
    const code = fencedBlock(await readFile(path.join(ROOT, 'README.md'), 'utf8'), '## Using it from a service', 'ts');
    expect(code).toContain(`provider: '${PROVIDER}'`);
    const { stdout } = await runModule('service.mjs', code);
    expect(stdout.trim()).toMatch(/^succeeded file:\/\/\S+ [0-9a-f]{64}$/);
  }, 120_000);

  it('docs/cli.md: the start example (with --wait) succeeds; status, watch and list show it; decide says it has ended', async () => {
    const doc = await readFile(path.join(ROOT, 'docs/cli.md'), 'utf8');
    const words = shellWords(fencedBlock(doc, '### `start`', ''));
    expect(words.slice(0, 3)).toEqual(['asyncjob', 'start', '--provider']);
    expect(words).toContain(PROVIDER);
    const started = await runOn(client, words.slice(1));
    expect(started.stderr).toBe('');
    expect(started.code).toBe(EXIT.ok);
    const id = words[words.indexOf('--operation-id') + 1]!;
    expect(started.stdout).toContain(`operation ${id} ended: succeeded`);
    expect((await runOn(client, ['status', id])).code).toBe(EXIT.ok);
    expect((await runOn(client, ['watch', id])).stdout).toContain(`operation ${id} ended: succeeded`);
    const listLine = shellWords(
      doc.slice(doc.indexOf('$ asyncjob list ') + 2, doc.indexOf('\n', doc.indexOf('$ asyncjob list '))),
    );
    await expect
      .poll(async () => (await runOn(client, listLine.slice(1))).stdout, { timeout: 15_000, interval: 200 })
      .toContain(id);
    const decide = await runOn(client, ['decide', id]);
    expect(decide.code).toBe(EXIT.refused);
    expect(decide.stderr).toMatch(
      /ASYNCJOB_ERR_OPERATION_FINAL: operation op-42 has ended \(workflow COMPLETED; state succeeded\)/,
    );
  }, 120_000);

  it('docs/cli.md "The typed client": the module runs (it joins op-42 and reads it back)', async () => {
    const code = fencedBlock(await readFile(path.join(ROOT, 'docs/cli.md'), 'utf8'), '## The typed client', 'ts');
    const { stdout } = await runModule('typed-client.mjs', code);
    expect(stdout.split('\n')[0]).toMatch(/^(true|false)$/); // joined when the start example above made op-42 first
    expect(stdout).toMatch(/^succeeded /m);
  }, 120_000);
});
