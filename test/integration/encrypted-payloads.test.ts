/**
 * Encrypted payloads end to end on a dev server of its own, whose SQLite database the test reads: `asyncjob worker`
 * and a client with ASYNCJOB_PAYLOAD_KEYS run an operation whose request carries a distinctive string, which the
 * client reads back (status, result, the join check) while Temporal's database holds it nowhere; an operation
 * started by a client without keys (as before encryption was turned on) still runs, and its string is in the
 * database (the search finds what is there). The documented `asyncjob codec-server` decodes the history's input.
 * A provider's error text (a job the provider reports failed) is an observation, never a failure: it reaches history
 * only inside encrypted payloads, and `asyncjob status` and `audit verify --with-temporal` read it decrypted.
 * A failure of our own (an activity that cannot write the result's artifact) is a Temporal failure: history holds
 * "Encoded failure" with its text in encrypted attributes, which the client's data converter and `asyncjob decide`
 * read decrypted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactFolderOf } from '../../src/adapters/artifacts/artifact-store';
import { EXIT } from '../../src/cli/exit-codes';
import { writeRestContract } from './rest-contract';
import { AsyncJobClient } from '../../src/client';
import { type DevServer, freePort, startDevServer } from '../../src/dev/temporal-server';
import { startSimulator, type Simulator } from '../../src/simulator';
import { docCommand, substitute } from '../docs/doc-commands';
import { runShell } from '../docs/shell';
import { eventsOfEveryRun, uniqueId, weeklyReportRequest } from '../setup/temporal';

const BIN = path.join(__dirname, '..', '..', 'bin', 'asyncjob');
const TOKEN = `enc-secret-${randomBytes(12).toString('hex')}`;
const SECRET_NOTE = `distinctive-secret-${randomBytes(6).toString('hex')}`;
const FAILURE_TEXT = `distinctive-failure-${randomBytes(6).toString('hex')}`;
const PLAIN_NOTE = `distinctive-plain-${randomBytes(6).toString('hex')}`;
/** The worker's artifact directory, in the test's directory. */
const ARTIFACTS = 'artifacts';
/** The codec server command docs/operating.md shows. */
const CODEC_SERVER = 'asyncjob codec-server --port 8888';

/** Temporal's database in `dir`: the dev server's SQLite file and its write-ahead log, as the server has written them. */
async function temporalDatabase(dir: string): Promise<Buffer> {
  const files = (await readdir(dir)).filter((f) => f.startsWith('temporal.db'));
  return Buffer.concat(await Promise.all(files.map((f) => readFile(path.join(dir, f)))));
}

/** Waits until `child`'s output shows `text`. */
async function outputShows(child: ChildProcess, output: () => string, text: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!output().includes(text) && Date.now() < end && child.exitCode === null)
    await new Promise((r) => setTimeout(r, 100));
  expect(output()).toContain(text);
}

describe('encrypted payloads on a real dev server', () => {
  let server: DevServer;
  let sim: Simulator;
  let worker: ChildProcess;
  let output = '';
  let dir = '';
  let env: NodeJS.ProcessEnv;
  let client: AsyncJobClient;
  const provider = `reports-${uniqueId('enc').toLowerCase()}`.slice(0, 60);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-encrypted-'));
    server = await startDevServer({ dbFile: path.join(dir, 'temporal.db') });
    sim = await startSimulator({ dialect: 'rest', token: TOKEN, seed: 5 });
    const contractFile = await writeRestContract(dir, provider, sim.url);
    // Rotation as documented: k2 encrypts, k1 (an older key, in a file) still decrypts.
    await writeFile(path.join(dir, 'k1.key'), randomBytes(32).toString('base64'));
    env = {
      PATH: process.env.PATH,
      TEMPORAL_ADDRESS: server.address,
      ASYNCJOB_TASK_QUEUE: uniqueId('enc'),
      ASYNCJOB_PAYLOAD_KEYS: `k2=env:ASYNCJOB_PAYLOAD_KEY_2,k1=file:${path.join(dir, 'k1.key')}`,
      ASYNCJOB_PAYLOAD_KEY_2: randomBytes(32).toString('hex'),
    };
    worker = spawn(process.execPath, [BIN, 'worker'], {
      env: {
        ...env,
        ASYNCJOB_STORE: `sqlite:${path.join(dir, 'asyncjob.db')}`,
        ASYNCJOB_ARTIFACTS_DIR: path.join(dir, ARTIFACTS),
        ASYNCJOB_PROVIDERS: contractFile,
        REPORTS_TOKEN: TOKEN,
        // Each provider call its own activity, so a collect that fails fails an activity in history (a test below).
        ASYNCJOB_POLL_LOOP_MAX_WAIT_MS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    worker.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    worker.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await outputShows(worker, () => output, 'asyncjob worker: task queue');
    client = await AsyncJobClient.connect({ env });
    await client.waitForWorkers([provider]);
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    if (worker && worker.exitCode === null) worker.kill('SIGKILL');
    await sim?.stop();
    await server?.stop();
  });

  it("a provider's error text is ciphertext in the database, shown decoded by asyncjob status and held to history by audit verify --with-temporal", async () => {
    const operationId = uniqueId('op-failed');
    sim.setScenario({
      scripts: {
        broken: {
          steps: [{ state: 'running', durationMs: 30 }, { state: 'failed' }],
          error: { code: 'render_error', message: FAILURE_TEXT },
        },
      },
    });
    await client.start({
      ...weeklyReportRequest(operationId, provider),
      payload: { report: 'weekly', scenario: 'broken' },
    });
    const summary = await client.result(operationId);
    expect(summary).toMatchObject({
      localState: 'failed',
      providerError: { code: 'render_error', message: FAILURE_TEXT },
    });

    // The CLI as a user runs it, with the keys (and the worker's store, for the audit) in its environment.
    const cliEnv = { ...(env as Record<string, string>), ASYNCJOB_STORE: `sqlite:${path.join(dir, 'asyncjob.db')}` };
    const status = await runShell(`bin/asyncjob status ${operationId}`, { env: cliEnv, timeoutMs: 60_000 });
    expect(status.code, status.stdout + status.stderr).toBe(EXIT.operationEndedBadly);
    expect(status.stdout).toContain(`error:     render_error: ${FAILURE_TEXT} (the provider's last error)`);
    const audit = await runShell(`bin/asyncjob audit verify --operation ${operationId} --with-temporal`, {
      env: cliEnv,
      timeoutMs: 60_000,
    });
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);

    // The provider's answer is an observation: it travels in the activities' results and the workflow's result,
    // payloads the codec encrypts, and the workflow completes; no failure event carries it.
    const events = await eventsOfEveryRun(client['ctx'].client, operationId);
    expect(events.at(-1)?.workflowExecutionCompletedEventAttributes).toBeTruthy();
    expect(events.filter((e) => /Failed|TimedOut/.test(String(e.eventType)))).toEqual([]);
    // Temporal's database (the file and its write-ahead log, as the server has committed it): the operation's
    // events are there, the provider's text is not.
    const database = await temporalDatabase(dir);
    expect(database.includes(operationId)).toBe(true);
    expect(database.includes(FAILURE_TEXT)).toBe(false);
  }, 120_000);

  it("an activity's own failure is 'Encoded failure' in history and ciphertext in the database, read decrypted by the client and asyncjob decide", async () => {
    const operationId = uniqueId('op-collect');
    // A file where the worker makes the operation's artifact folder: collecting the result fails with our error,
    // whose text names that folder.
    const folder = path.join(dir, ARTIFACTS, artifactFolderOf(operationId));
    await mkdir(path.dirname(folder), { recursive: true });
    await writeFile(folder, 'not a folder');
    const request_ = weeklyReportRequest(operationId, provider);
    // One transport failure is the budget: the failed collect escalates at once (S5), its text in the escalation.
    await client.start({ ...request_, policy: { ...request_.policy, maxTransportFailures: 1 } });
    const summary = await client.result(operationId);
    expect(summary.localState).toBe('escalated');

    // History: the activity failed with our failure type in plain (it names no data), the text encoded. It failed
    // before its download was written: nothing was sent.
    const temporal = client['ctx'].client;
    const failed = (await eventsOfEveryRun(temporal, operationId)).filter((e) => e.activityTaskFailedEventAttributes);
    expect(failed).toHaveLength(1);
    const failure = failed[0]!.activityTaskFailedEventAttributes!.failure!;
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace ?? '').toBe('');
    expect(failure.applicationFailureInfo?.type).toBe('ASYNCJOB_ERR_NOTHING_SENT');
    expect(Buffer.from(failure.encodedAttributes!.metadata!.encoding!).toString()).toBe('binary/encrypted');
    // The client's data converter (the keys) restores the message and the stack trace.
    const decoded = await decodeOptionalFailureToOptionalError(temporal.options.loadedDataConverter, failure);
    const message = `ASYNCJOB_ERR_ARTIFACT_FAILED: cannot start the artifact of ${operationId}: EEXIST`;
    expect(decoded?.message).toContain(`ASYNCJOB_ERR_NOTHING_SENT: nothing was sent: ${message}`);
    expect(decoded?.message).toContain(folder);
    expect(decoded?.stack).toContain('to-failure.ts');
    const cause = decoded?.cause as Error | undefined;
    expect(cause?.stack).toContain('sent-requests.ts');
    expect((cause?.cause as Error | undefined)?.stack).toContain('collect-result.ts');

    // Temporal's database: the failure event is there (its type), its text and stack traces are not.
    const database = await temporalDatabase(dir);
    expect(database.includes('ASYNCJOB_ERR_NOTHING_SENT')).toBe(true);
    expect(database.includes('cannot start the artifact of')).toBe(false);
    expect(database.includes(artifactFolderOf(operationId))).toBe(false);
    expect(database.includes('to-failure.ts')).toBe(false);
    expect(database.includes('collect-result.ts')).toBe(false);

    // The CLI with the keys: the escalation that asks for a decision says what failed, decrypted; once the folder
    // is repaired, the decision it offers finishes the operation, and the audit holds the store to that history.
    const cliEnv = { ...(env as Record<string, string>), ASYNCJOB_STORE: `sqlite:${path.join(dir, 'asyncjob.db')}` };
    const shown = await runShell(`bin/asyncjob decide ${operationId}`, { env: cliEnv, timeoutMs: 60_000 });
    expect(shown.code, shown.stdout + shown.stderr).toBe(0);
    expect(shown.stdout).toContain(
      `the collect activity failed before sending anything (1 transport failures of 1); last: ASYNCJOB_ERR_NOTHING_SENT: nothing was sent: ${message}`,
    );
    await rm(folder);
    const decided = await runShell(
      `bin/asyncjob decide ${operationId} --option extend --extend 15m --checks 4 --transport-failures 1 --by ops@example.com --reason "artifact folder repaired"`,
      { env: cliEnv, timeoutMs: 60_000 },
    );
    expect(decided.code, decided.stdout + decided.stderr).toBe(0);
    expect((await client.result(operationId)).localState).toBe('succeeded');
    const audit = await runShell(`bin/asyncjob audit verify --operation ${operationId} --with-temporal`, {
      env: cliEnv,
      timeoutMs: 60_000,
    });
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);
  }, 120_000);

  it('the request is ciphertext in the database, read back by the client with the keys; plaintext written before still runs', async () => {
    const operationId = uniqueId('op-enc');
    const request_ = {
      ...weeklyReportRequest(operationId, provider),
      payload: { report: 'weekly', note: SECRET_NOTE },
    };
    await client.start(request_);
    expect((await client.result(operationId)).localState).toBe('succeeded');
    expect((await client.get(operationId)).localState).toBe('succeeded');
    // The join check reads the run's input from history: decrypted, it is the same request.
    expect((await client.start(request_)).joined).toBe(true);

    const { ASYNCJOB_PAYLOAD_KEYS: _keys, ...withoutKeys } = env;
    const plainClient = await AsyncJobClient.connect({ env: withoutKeys });
    const plainId = uniqueId('op-plain');
    try {
      await plainClient.start({
        ...weeklyReportRequest(plainId, provider),
        payload: { report: 'weekly', note: PLAIN_NOTE },
      });
      expect((await client.result(plainId)).localState).toBe('succeeded');
      // A client without the keys reads nothing the worker encrypted.
      await expect(plainClient.get(operationId)).rejects.toThrow();
    } finally {
      await plainClient.close();
    }

    // The documented codec server decodes the history's input for the Web UI.
    const port = await freePort();
    const command = substitute(docCommand('docs/operating.md', CODEC_SERVER).text, [['8888', String(port), 'port']]);
    const codecServer = spawn(process.execPath, [BIN, ...command.split(' ').slice(1)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let codecOutput = '';
    codecServer.stdout!.on('data', (d: Buffer) => (codecOutput += d.toString()));
    codecServer.stderr!.on('data', (d: Buffer) => (codecOutput += d.toString()));
    try {
      await outputShows(codecServer, () => codecOutput, `http://127.0.0.1:${port}`);
      const raw = await client['ctx'].client.workflowService.getWorkflowExecutionHistory({
        namespace: 'default',
        execution: { workflowId: operationId },
        maximumPageSize: 1,
      });
      const input = raw.history!.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads!;
      const asJson = input.map((p) => ({
        metadata: Object.fromEntries(
          Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
        ),
        data: Buffer.from(p.data ?? []).toString('base64'),
      }));
      expect(Buffer.from(asJson[0]!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
      const decoded = await request(`http://127.0.0.1:${port}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-namespace': 'default' },
        body: JSON.stringify({ payloads: asJson }),
      });
      expect(decoded.statusCode).toBe(200);
      const body = (await decoded.body.json()) as { payloads: { data: string }[] };
      expect(Buffer.from(body.payloads[0]!.data, 'base64').toString()).toContain(SECRET_NOTE);
    } finally {
      codecServer.kill('SIGINT');
    }

    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
    expect(output).not.toContain(env.ASYNCJOB_PAYLOAD_KEY_2!);
    await server.stop();
    // The dev server's SQLite database and its write-ahead log: the plain request is there, the encrypted one is not.
    const database = await temporalDatabase(dir);
    expect(database.includes(PLAIN_NOTE)).toBe(true);
    expect(database.includes(SECRET_NOTE)).toBe(false);
  }, 180_000);
});
