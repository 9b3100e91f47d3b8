/**
 * `ASYNCJOB_PROVIDER_CALL_SLOTS` as users set it: `asyncjob worker` with one slot per provider runs one provider
 * call at a time, so a status loop waiting between reads holds the only slot and another operation's call waits
 * for it at the server. The setting's bounds are refused before the worker connects anywhere.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AsyncJobClient } from '../../src/client';
import { startSimulator, type Simulator } from '../../src/simulator';
import { connectTestEnvironment, uniqueId } from '../setup/temporal';
import { writeRestContract } from './rest-contract';

const BIN = path.join(__dirname, '..', '..', 'bin', 'asyncjob');
const TOKEN = `slots-secret-${randomBytes(12).toString('hex')}`;
/** Pending activity states (temporal.api.enums.v1.PendingActivityState). */
const SCHEDULED = 1;
const STARTED = 2;

describe('ASYNCJOB_PROVIDER_CALL_SLOTS', () => {
  let sim: Simulator;
  let dir = '';
  let contractFile = '';
  const provider = `slots-${uniqueId('p').toLowerCase()}`.slice(0, 60);

  const env = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    ASYNCJOB_STORE: `sqlite:${path.join(dir, 'asyncjob.db')}`,
    ASYNCJOB_ARTIFACTS_DIR: path.join(dir, 'artifacts'),
    ASYNCJOB_PROVIDERS: contractFile,
    REPORTS_TOKEN: TOKEN,
    ...extra,
  });

  beforeAll(async () => {
    sim = await startSimulator({
      dialect: 'rest',
      token: TOKEN,
      scenario: { scripts: { forever: { steps: [{ state: 'running' }] } } } as never,
    });
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-slots-'));
    contractFile = await writeRestContract(dir, provider, sim.url);
  });
  afterAll(async () => sim?.stop());

  it('is refused outside 1..100000 with exit 2, naming the variable, before connecting anywhere', () => {
    const run = spawnSync(process.execPath, [BIN, 'worker'], {
      env: env({ ASYNCJOB_TASK_QUEUE: uniqueId('slots'), ASYNCJOB_PROVIDER_CALL_SLOTS: '0' }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('ASYNCJOB_PROVIDER_CALL_SLOTS');
  });

  it("with one slot, a status loop waiting between reads holds it and another operation's call waits at the server", async () => {
    const taskQueue = uniqueId('slots');
    let output = '';
    const worker: ChildProcess = spawn(process.execPath, [BIN, 'worker'], {
      env: env({ ASYNCJOB_TASK_QUEUE: taskQueue, ASYNCJOB_PROVIDER_CALL_SLOTS: '1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    worker.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const ready = Date.now() + 60_000;
    while (!output.includes('asyncjob worker: task queue') && Date.now() < ready && worker.exitCode === null)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const temporal = await connectTestEnvironment();
    const ids = [uniqueId('op-slots'), uniqueId('op-slots')];
    try {
      const client = new AsyncJobClient({ client: temporal.client, taskQueue });
      await client.waitForWorkers([provider]);
      for (const operationId of ids)
        await client.start({
          operationId,
          provider,
          payload: { report: operationId, scenario: 'forever' },
          startedBy: 'service:test',
          authorisedBy: 'policy:test',
          createDeadline: { afterMs: 60_000 },
          resultDeadline: { afterMs: 600_000 },
          // Reads 20 s apart: inside the loop's 30 s, so a loop keeps its slot while it waits.
          policy: { baseDelayMs: 20_000, maxDelayMs: 20_000, minJitterRatio: 1 },
        });
      const pendingOf = async (id: string) =>
        (await temporal.client.workflow.getHandle(id).describe()).raw.pendingActivities?.[0] ?? undefined;
      // Until one operation's loop runs while the other's call has waited, scheduled, for 2 s of it.
      let waitingSince: number | undefined;
      const end = Date.now() + 90_000;
      for (;;) {
        const pending = await Promise.all(ids.map(pendingOf));
        const running = pending.filter((p) => p?.state === STARTED);
        const waiting = pending.filter((p) => p?.state === SCHEDULED);
        const holds = running.length === 1 && running[0]!.activityType?.name === 'pollStatus' && waiting.length === 1;
        waitingSince = holds ? (waitingSince ?? Date.now()) : undefined;
        if (waitingSince !== undefined && Date.now() - waitingSince >= 2_000) break;
        if (Date.now() > end) throw new Error(`never one loop holding the slot: ${JSON.stringify(pending)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const serving = output.split('\n').find((line) => line.includes('asyncjob worker: task queue'));
      expect(JSON.parse(serving!)).toMatchObject({ providerCallSlots: 1 });
    } finally {
      for (const id of ids)
        await temporal.client.workflow
          .getHandle(id)
          .terminate('test over')
          .catch(() => undefined);
      await temporal.teardown();
      worker.kill('SIGKILL');
    }
  });
});
