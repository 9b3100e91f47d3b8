/**
 * `asyncjob replay-check --history FILE...`: the recorded histories (test/histories) replay against this install's
 * workflows (exit 0); a history edited so the code no longer makes the commands it recorded fails, named with its
 * file, workflow ID, run ID and why (exit 1); bad flags, files and bundles are refused (exit 2) before anything is
 * replayed. The histories of running operations, read from Temporal: test/integration/replay-check.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes';
import { runCli } from '../../src/cli/run-cli';
import { replayFailureOf } from '../../src/replay/replay-check';
import { runningQuery } from '../../src/replay/running-histories';
import { FakeClient, fakeDeps } from './fixtures';

const DIR = path.join(__dirname, '..', 'histories');
const RECORDED = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => path.join(DIR, f));

interface JsonHistory {
  events: { eventType: string; [attributes: string]: unknown }[];
}

const recorded = (name: string): JsonHistory => JSON.parse(readFileSync(path.join(DIR, name), 'utf8')) as JsonHistory;

/** happy-rest.json with its first activity scheduled under another name: the code schedules `createJob` there. */
function renamedActivity(): string {
  const history = recorded('happy-rest.json');
  const scheduled = history.events.find((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')!;
  (scheduled.activityTaskScheduledEventAttributes as { activityType: { name: string } }).activityType.name =
    'createJobV0';
  return JSON.stringify(history);
}

/**
 * escalate-extend.json without its first TimerStarted event (the decision deadline): the code starts a timer the
 * history does not have.
 */
function droppedTimer(): string {
  const history = recorded('escalate-extend.json');
  history.events.splice(
    history.events.findIndex((e) => e.eventType === 'EVENT_TYPE_TIMER_STARTED'),
    1,
  );
  return JSON.stringify(history);
}

const FILES: Record<string, string> = {
  ...Object.fromEntries(RECORDED.map((file) => [file, readFileSync(file, 'utf8')])),
  'renamed-activity.json': renamedActivity(),
  'dropped-timer.json': droppedTimer(),
  'not-json.json': 'module.exports = {};\n',
  'not-a-history.json': '{"workflows":[]}',
};

/** Runs `asyncjob <argv>` with the history files above readable. */
async function cli(argv: string[], env?: Record<string, string>) {
  const io = fakeDeps(new FakeClient(), { files: FILES });
  if (env) io.deps.env = env;
  const code = await runCli(argv, io.deps);
  return { code, stdout: io.stdout(), stderr: io.stderr(), json: () => io.json() };
}

describe('asyncjob replay-check --history', () => {
  let dir: string;
  let bundle: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-replay-check-'));
    bundle = path.join(dir, 'workflow-bundle.js');
    // Bundled once for the file: the checks below replay against it (the first one against a fresh bundle).
    const written = await cli(['bundle', '--out', bundle]);
    expect(written.code).toBe(EXIT.ok);
  }, 120_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("replays every recorded history against this install's workflows: exit 0, the summary only", async () => {
    expect(RECORDED.length).toBeGreaterThanOrEqual(6);
    const run = await cli(['replay-check', '--history', ...RECORDED]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toBe(`replay-check: ${RECORDED.length} histories replayed, 0 failed\n`);
  }, 120_000);

  it('names a history the code no longer matches, with its workflow ID, run ID and why: exit 1', async () => {
    const good = RECORDED[0]!;
    const run = await cli(['replay-check', '--bundle', bundle, '--history', good, 'renamed-activity.json']);
    expect(run.code).toBe(EXIT.operationEndedBadly);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^renamed-activity\.json: op-rest-\S+ run \S+: nondeterminism: \[TMPRL1100\] Nondeterminism error: .*'createJobV0'.*'createJob'$/,
    );
    expect(lines[1]).toBe('replay-check: 2 histories replayed, 1 failed');
  }, 60_000);

  it('counts a history that cannot be replayed at all (an event dropped) as failed: exit 1', async () => {
    const run = await cli(['replay-check', '--bundle', bundle, '--history', 'dropped-timer.json']);
    expect(run.code).toBe(EXIT.operationEndedBadly);
    expect(run.stdout).toMatch(/^dropped-timer\.json: op-rest-\S+ run \S+: (failure|nondeterminism): \S/);
    expect(run.stdout).toMatch(/\nreplay-check: 1 histories replayed, 1 failed\n$/);
  }, 60_000);

  it('--json: one asyncjob.replay-check/v1 document with every history', async () => {
    const good = RECORDED[0]!;
    const run = await cli(['replay-check', '--bundle', bundle, '--history', good, 'renamed-activity.json', '--json']);
    expect(run.code).toBe(EXIT.operationEndedBadly);
    const [doc, ...more] = run.json();
    expect(more).toEqual([]);
    expect(doc).toEqual({
      schema: 'asyncjob.replay-check/v1',
      source: 'files',
      taskQueue: null,
      query: null,
      truncated: false,
      workflowCode: { bundle, asyncjob: expect.any(String) },
      replayed: 2,
      failed: 1,
      histories: [
        { workflowId: expect.any(String), runId: expect.any(String), file: good, failure: null },
        {
          workflowId: expect.stringMatching(/^op-rest-/),
          runId: expect.any(String),
          file: 'renamed-activity.json',
          failure: { kind: 'nondeterminism', message: expect.stringContaining('createJobV0') },
        },
      ],
    });
  }, 60_000);

  it('refuses bad flags before anything is read or replayed: exit 2, naming the flag', async () => {
    const cases: [string[], RegExp][] = [
      [['replay-check', '--limit', '0'], /--limit: 0 is not from 1 to 10000/],
      [['replay-check', '--limit', 'many'], /--limit: "many" is not a whole number/],
      [['replay-check', '--query', ' '], /--query is empty/],
      [['replay-check', '--history'], /--history needs a history file/],
      [['replay-check', '--history', '--query'], /--history needs a history file/],
      [['replay-check', '--history', RECORDED[0]!, '--limit', '5'], /--history replays the files given/],
      [['replay-check', 'op-42'], /unexpected argument "op-42"/],
      [['replay-check', '--frobnicate'], /Unknown option '--frobnicate'/],
    ];
    for (const [argv, message] of cases) {
      const run = await cli(argv);
      expect(run.code, argv.join(' ')).toBe(EXIT.usage);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).toMatch(/\(asyncjob help replay-check\)\n$/);
      expect(run.stdout).toBe('');
    }
  });

  it('refuses a file that is not a history, and one it cannot read: exit 2, naming it', async () => {
    const cases: [string, RegExp][] = [
      ['missing.json', /--history: cannot read missing\.json/],
      ['not-json.json', /--history: not-json\.json: not JSON/],
      ['not-a-history.json', /--history: not-a-history\.json: not a workflow history/],
    ];
    for (const [file, message] of cases) {
      const run = await cli(['replay-check', '--history', RECORDED[0]!, '--history', file, '--json']);
      expect(run.code, file).toBe(EXIT.usage);
      expect(run.stderr).toMatch(message);
      expect(run.json()[0]).toMatchObject({ schema: 'asyncjob.error/v1', code: 'ASYNCJOB_ERR_USAGE', exitCode: 2 });
    }
  });

  it('refuses a bad --bundle with the reason the worker would give: exit 2', async () => {
    const missing = path.join(dir, 'missing.js');
    const run = await cli(['replay-check', '--bundle', missing, '--history', RECORDED[0]!]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toBe(
      `asyncjob: --bundle: cannot read ${missing} (ENOENT); write it with "asyncjob bundle --out ${missing}" in this install, or leave --bundle out to check this install's workflows (asyncjob help replay-check)\n`,
    );
    const notBundle = await cli(['replay-check', '--bundle', RECORDED[0]!, '--history', RECORDED[0]!]);
    expect(notBundle.code).toBe(EXIT.usage);
    expect(notBundle.stderr).toMatch(/--bundle: .* is not a Temporal workflow bundle/);
  });

  it('exits 5 when Temporal cannot be reached', async () => {
    const run = await cli(['replay-check'], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(run.code).toBe(EXIT.connection);
    expect(run.stderr).toMatch(/^asyncjob: cannot reach Temporal at 127\.0\.0\.1:1/);
  }, 30_000);

  it('asks the visibility store for the running workflows of the task queue, and-ed with --query', () => {
    expect(runningQuery('asyncjob')).toBe(
      "WorkflowType = 'AsyncJobWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = 'asyncjob'",
    );
    expect(runningQuery("it's", "AsyncJobProvider = 'acme'")).toBe(
      "WorkflowType = 'AsyncJobWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = 'it\\'s' AND (AsyncJobProvider = 'acme')",
    );
  });

  it("reports the core's own message, without the SDK's wrapping", () => {
    const error = new Error(
      'Replay failed with a nondeterminism error. This means that the workflow code as written is not compatible ' +
        'with the history that was fed in. Details: Workflow activation completion failed: Failure { failure: ' +
        'Some(Failure { message: "[TMPRL1100] Nondeterminism error: Timer \\"1\\" is not expected", source: "" }) }',
    );
    error.name = 'DeterminismViolationError';
    expect(replayFailureOf(error)).toEqual({
      kind: 'nondeterminism',
      message: '[TMPRL1100] Nondeterminism error: Timer "1" is not expected',
    });
    expect(replayFailureOf(new Error('Replay failed due workflow task failure. Details: boom\n  at x'))).toEqual({
      kind: 'failure',
      message: 'boom',
    });
  });
});
