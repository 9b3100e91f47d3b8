/**
 * `asyncjob worker` has one voice: everything a worker process writes to stderr while it runs an operation and
 * shuts down is a JSON line of the one logger (ours and the Temporal SDK's, its native core's forwarded), at the
 * debug level where the SDK says most, and no line holds the provider's credential or the audit chain key (T4).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { writeRestContract } from './rest-contract';
import { AsyncJobClient } from '../../src/client';
import { startSimulator } from '../../src/simulator';
import { connectTestEnvironment, uniqueId, weeklyReportRequest } from '../setup/temporal';

const BIN = path.join(__dirname, '..', '..', 'bin', 'asyncjob');
const TOKEN = `logs-secret-${randomBytes(12).toString('hex')}`;
const HMAC_KEY = `logs-chain-key-${randomBytes(12).toString('hex')}`;

interface LogLine {
  ts: string;
  level: string;
  msg: string;
  sdkComponent?: string;
}

/** Runs one operation to its end on the worker's task queue. */
async function runOneOperation(taskQueue: string, provider: string): Promise<string> {
  const env = await connectTestEnvironment();
  try {
    const client = new AsyncJobClient({ client: env.client, taskQueue });
    const operationId = uniqueId('op-logs');
    await client.start(weeklyReportRequest(operationId, provider));
    return (await client.result(operationId)).localState;
  } finally {
    await env.teardown();
  }
}

/** The lines that are not a JSON object with a string `ts`, `level` and `msg`. */
function notLogLines(lines: string[]): string[] {
  return lines.filter((line) => {
    try {
      const parsed = JSON.parse(line) as Partial<LogLine>;
      return typeof parsed.ts !== 'string' || typeof parsed.level !== 'string' || typeof parsed.msg !== 'string';
    } catch {
      return true;
    }
  });
}

describe('asyncjob worker logs', () => {
  it('T4: a whole run writes only JSON lines to stderr, the SDK through the same logger, never a secret', async () => {
    const sim = await startSimulator({ dialect: 'rest', token: TOKEN, seed: 5 });
    const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-logs-'));
    const taskQueue = uniqueId('logs');
    const provider = `reports-${uniqueId('l').toLowerCase()}`.slice(0, 60);
    const worker = spawn(process.execPath, [BIN, 'worker'], {
      env: {
        PATH: process.env.PATH,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        ASYNCJOB_TASK_QUEUE: taskQueue,
        ASYNCJOB_STORE: `sqlite:${path.join(dir, 'asyncjob.db')}`,
        ASYNCJOB_ARTIFACTS_DIR: path.join(dir, 'artifacts'),
        ASYNCJOB_PROVIDERS: await writeRestContract(dir, provider, sim.url),
        ASYNCJOB_LOG_LEVEL: 'debug',
        ASYNCJOB_AUDIT_HMAC_KEY: HMAC_KEY,
        REPORTS_TOKEN: TOKEN,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    worker.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    worker.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    try {
      const end = Date.now() + 60_000;
      while (!stderr.includes('asyncjob worker: task queue') && worker.exitCode === null && Date.now() < end)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(stderr).toContain('asyncjob worker: task queue');
      expect(await runOneOperation(taskQueue, provider)).toBe('succeeded');
      worker.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (worker.exitCode === null) worker.kill('SIGKILL');
      await sim.stop();
    }

    const lines = stderr.split('\n').filter((line) => line !== '');
    expect(notLogLines(lines)).toEqual([]);
    const records = lines.map((line) => JSON.parse(line) as LogLine);
    // Ours and the SDK's (TypeScript side and native core), in the same format.
    expect(records.some((record) => record.msg === 'provider call')).toBe(true);
    expect(records.some((record) => record.sdkComponent === 'worker')).toBe(true);
    expect(records.some((record) => record.sdkComponent === 'core')).toBe(true);
    expect(records.every((record) => ['trace', 'debug', 'info', 'warn', 'error'].includes(record.level))).toBe(true);
    expect(stdout).toBe('');
    expect(stderr).not.toContain(TOKEN);
    expect(stderr).not.toContain(HMAC_KEY);
  });
});
