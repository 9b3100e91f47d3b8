/**
 * `asyncjob replay-check` as an operator runs it before an upgrade: a separate process configured from the
 * environment reads the histories of the operations running now on its task queue (a real dev server, worker and
 * simulator: the workflow tests' harness, on a task queue of its own) and replays them against this install's
 * workflows. Operations that keep polling a job that never ends stay running meanwhile; they are terminated after.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes';
import { runningQuery } from '../../src/replay/running-histories';
import { uniqueId } from '../setup/temporal';
import { startHarness, type Harness } from '../workflows/harness';

const BIN = path.join(__dirname, '..', '..', 'bin', 'asyncjob');

/** Runs `asyncjob <argv>` in its own process against the test server and `taskQueue`. */
function asyncjob(argv: string[], taskQueue: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], {
      env: {
        PATH: process.env.PATH,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        ASYNCJOB_TASK_QUEUE: taskQueue,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Waits until `check` holds (hooks cannot use expect.poll). */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

describe('asyncjob replay-check against the operations running now', () => {
  let h: Harness;
  const running: string[] = [];

  beforeAll(async () => {
    h = await startHarness('replay-check', {
      scenarios: { rest: { scripts: { forever: { steps: [{ state: 'running' }] } } } } as never,
    });
    // Long polls of a job that never ends: the operations stay running, waiting in a timer, until terminated.
    for (let i = 0; i < 2; i++) {
      const request = h.request('rest', {
        script: 'forever',
        resultDeadline: { afterMs: 30 * 60_000 },
        policy: { baseDelayMs: 60_000, maxDelayMs: 120_000 },
      });
      await h.client.start(request);
      running.push(request.operationId);
    }
    // Created at the provider and waiting for the first status poll (a timer): activities, markers and a timer.
    for (const operationId of running)
      await until(`${operationId} created`, async () =>
        ['accepted', 'observing'].includes((await h.client.get(operationId)).localState),
      );
    // Visibility lags a moment behind the starts.
    await until('both listed as running', async () => {
      let listed = 0;
      for await (const info of h.env.client.workflow.list({ query: runningQuery(h.taskQueue) }))
        if (running.includes(info.workflowId)) listed++;
      return listed === running.length;
    });
  });

  afterAll(async () => {
    for (const operationId of running)
      await h?.env.client.workflow
        .getHandle(operationId)
        .terminate('replay-check test done')
        .catch(() => undefined);
    await h?.stop();
  });

  it("replays every running operation's history against this install's workflows: exit 0", async () => {
    const run = await asyncjob(['replay-check', '--json'], h.taskQueue);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT.ok);
    const doc = JSON.parse(run.stdout) as { histories: { workflowId: string; runId: string }[] };
    expect(doc).toMatchObject({
      schema: 'asyncjob.replay-check/v1',
      source: 'temporal',
      taskQueue: h.taskQueue,
      query: runningQuery(h.taskQueue),
      truncated: false,
      workflowCode: { bundle: null },
      failed: 0,
    });
    expect(doc.histories.map((x) => x.workflowId).sort()).toEqual([...running].sort());
    expect(doc.histories.every((x) => x.runId.length > 0)).toBe(true);
  });

  it('--limit caps the operations read (newest first), and says more were running', async () => {
    const run = await asyncjob(['replay-check', '--limit', '1'], h.taskQueue);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toBe(
      'replay-check: more operations are running than --limit 1: the newest 1 were checked\n' +
        'replay-check: 1 histories replayed, 0 failed\n',
    );
  });

  it('--query narrows the running operations (and-ed with the task queue and status)', async () => {
    const filter = `WorkflowId = '${running[0]}'`;
    const run = await asyncjob(['replay-check', '--query', filter, '--json'], h.taskQueue);
    expect(run.code).toBe(EXIT.ok);
    expect(JSON.parse(run.stdout)).toMatchObject({
      query: `${runningQuery(h.taskQueue)} AND (${filter})`,
      replayed: 1,
      failed: 0,
      histories: [{ workflowId: running[0], failure: null }],
    });
  });

  it('says so when nothing is running (exit 0), and refuses a query the server cannot read (exit 2)', async () => {
    const queue = uniqueId('replay-none');
    const none = await asyncjob(['replay-check'], queue);
    expect(none.code).toBe(EXIT.ok);
    expect(none.stdout).toBe(
      `replay-check: nothing is running on task queue ${queue}\nreplay-check: 0 histories replayed, 0 failed\n`,
    );
    const bad = await asyncjob(['replay-check', '--query', 'NoSuchAttribute ='], queue);
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toMatch(/^asyncjob: --query: Temporal refused the visibility query /);
  });
});
