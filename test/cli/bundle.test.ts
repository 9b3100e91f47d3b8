/**
 * `asyncjob bundle --out FILE` writes a stamped workflow bundle that the worker's start-up check accepts and
 * Temporal runs (a recorded history replays against it), and the check refuses, naming ASYNCJOB_WORKFLOW_BUNDLE,
 * a missing file, a file that is not a Temporal workflow bundle, an unstamped bundle, another version's and one of
 * other workflow sources. Bundles once for the file (seconds of CPU).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes';
import { runCli } from '../../src/cli/run-cli';
import { ConfigError } from '../../src/config';
import { runWorker } from '../../src/worker';
import { asyncjobVersion, checkWorkflowBundle } from '../../src/workflow-bundle';
import { FakeClient, fakeDeps } from './fixtures';

const STAMP = /^\/\* asyncjob workflow bundle (\{.*?\}) \*\//;

describe('asyncjob bundle', () => {
  let dir: string;
  let file: string;
  let code: string;
  let printed: Record<string, unknown>;
  let exitCode: number;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-bundle-'));
    // A directory that does not exist yet: the command creates it.
    file = path.join(dir, 'build', 'workflow-bundle.js');
    const io = fakeDeps(new FakeClient());
    exitCode = await runCli(['bundle', '--out', file, '--json'], io.deps);
    expect(io.stderr()).toBe('');
    printed = io.json()[0]!;
    code = await readFile(file, 'utf8');
  }, 120_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes the bundle, stamped with the version and the sources hash, and prints what it wrote', () => {
    expect(exitCode).toBe(EXIT.ok);
    const stamp = JSON.parse(STAMP.exec(code)![1]!) as Record<string, unknown>;
    expect(stamp).toMatchObject({
      asyncjob: asyncjobVersion(),
      sources: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(printed).toEqual({
      schema: 'asyncjob.bundle/v1',
      file,
      bytes: Buffer.byteLength(code),
      asyncjob: stamp.asyncjob,
      sources: stamp.sources,
    });
    // The stamp shares the first line with the bundle's first statement: the source map's lines still match.
    expect(code.split('\n')[0]).toMatch(/\*\/var __TEMPORAL__;$/);
  });

  it("passes the worker's start-up check", async () => {
    expect(await checkWorkflowBundle(file)).toEqual({
      stamp: expect.objectContaining({ asyncjob: printed.asyncjob, sources: printed.sources }),
    });
  });

  it('is run by Temporal as written: a recorded history replays against it', async () => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // Installed by another file in this process.
    }
    const recorded = JSON.parse(
      await readFile(path.join(__dirname, '..', 'histories', 'happy-rest.json'), 'utf8'),
    ) as unknown;
    const history = historyFromJSON(recorded);
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    const { request } = JSON.parse(Buffer.from(input ?? new Uint8Array()).toString('utf8')) as {
      request: { operationId: string };
    };
    // Throws on a nondeterminism error or a bundle Temporal cannot load.
    await Worker.runReplayHistory({ workflowBundle: { codePath: file } }, history, request.operationId);
  }, 60_000);

  it('refuses, naming ASYNCJOB_WORKFLOW_BUNDLE, what the worker cannot run', async () => {
    const variant = async (name: string, text: string) => {
      const target = path.join(dir, name);
      await writeFile(target, text);
      return checkWorkflowBundle(target);
    };
    const restamp = (patch: Record<string, string>) =>
      code.replace(
        STAMP,
        (_, json: string) => `/* asyncjob workflow bundle ${JSON.stringify({ ...JSON.parse(json), ...patch })} */`,
      );
    const cases: [Promise<unknown>, RegExp][] = [
      [checkWorkflowBundle(path.join(dir, 'missing.js')), /cannot read .*missing\.js \(ENOENT\)/],
      [variant('plain.js', 'module.exports = {};\n'), /plain\.js is not a Temporal workflow bundle/],
      [variant('unstamped.js', code.replace(STAMP, '')), /not written by "asyncjob bundle"/],
      [variant('old.js', restamp({ asyncjob: '0.0.1' })), /asyncjob 0\.0\.1, this worker is asyncjob /],
      [variant('other.js', restamp({ sources: `sha256:${'0'.repeat(64)}` })), /bundled from other workflow sources/],
    ];
    for (const [check, message] of cases) {
      const result = (await check) as { problem?: string };
      expect(result.problem).toMatch(/^ASYNCJOB_WORKFLOW_BUNDLE: /);
      expect(result.problem).toMatch(message);
      expect(result.problem).toContain('asyncjob bundle --out');
    }
  });

  it("is listed with every other problem of the worker's environment, before anything connects", async () => {
    const refused = await runWorker({
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      ASYNCJOB_PROVIDERS: '',
      ASYNCJOB_WORKFLOW_BUNDLE: path.join(dir, 'missing.js'),
    }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ConfigError);
    const problems = (refused as ConfigError).problems;
    expect(problems.some((p) => p.startsWith('ASYNCJOB_WORKFLOW_BUNDLE: cannot read'))).toBe(true);
    expect(problems.some((p) => p.includes('ASYNCJOB_PROVIDERS'))).toBe(true);
  });

  it('needs --out, and says so', async () => {
    const io = fakeDeps(new FakeClient());
    expect(await runCli(['bundle'], io.deps)).toBe(EXIT.usage);
    expect(io.stderr()).toBe('asyncjob: --out is required (asyncjob help bundle)\n');
    const help = fakeDeps(new FakeClient());
    expect(await runCli(['bundle', '--help'], help.deps)).toBe(EXIT.ok);
    expect(help.stdout()).toMatch(/^usage: asyncjob bundle --out FILE\n/);
  });
});
