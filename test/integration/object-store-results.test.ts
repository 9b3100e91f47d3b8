/**
 * Results in an object store, end to end on the dev server and moto's real S3 (signatures checked): a worker
 * process with `ASYNCJOB_ARTIFACTS=s3://...` collects a result into the bucket; a client made from the environment
 * alone reads it back verified; the documented `asyncjob result ... --out FILE` (the package's bin) writes it; an
 * object overwritten in the bucket is refused by both and leaves no file; the documented `audit verify` hashes the
 * object, then finds the overwrite. The AWS secret key is in no log line, command output, history, store file or
 * object.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { writeRestContract } from './rest-contract';
import { AsyncJobClient, ResultUnavailableError } from '../../src/client';
import type { OperationSummary } from '../../src/client';
import { renderPayload, startSimulator, type Simulator } from '../../src/simulator';
import { MOTO_MISSING, startMotoS3, type MotoS3 } from '../adapters/artifacts/moto-s3';
import { docCommand, substitute } from '../docs/doc-commands';
import { runShell } from '../docs/shell';
import { connectTestEnvironment, eventsOfEveryRun, uniqueId, weeklyReportRequest } from '../setup/temporal';

const DOC = 'docs/operating.md';
const RESULT = 'asyncjob result report-2026-11 --out report.json';
const AUDIT = 'asyncjob audit verify --operation report-2026-11';
const BIN = path.join(__dirname, '..', '..', 'bin', 'asyncjob');
const TOKEN = `s3-provider-token-${randomBytes(12).toString('hex')}`;
const HMAC_KEY = `s3-chain-key-${randomBytes(12).toString('hex')}`;
const PREFIX = 'asyncjob';
/** A result of two upload parts (8 MiB each): a multipart upload. */
const LARGE = { kind: 'generated' as const, sizeBytes: 8 * 1024 * 1024 + 123_457 };

async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe.skipIf(MOTO_MISSING !== undefined)(
  `results in an object store${MOTO_MISSING ? ` (skipped: ${MOTO_MISSING})` : ''}`,
  () => {
    let moto: MotoS3;
    let sim: Simulator;
    let dir: string;
    let worker: ChildProcess;
    let workerLog = '';
    let env: Record<string, string>;
    let client: AsyncJobClient;
    let summary: OperationSummary;
    let provider: string;
    const outputs: string[] = [];
    const operationId = uniqueId('report');

    /** The documented command with this run's operation ID (and file), in `dir`, through the package's bin. */
    async function documented(text: string, file?: string) {
      const substitutions: [string, string, 'placeholder'][] = [['report-2026-11', operationId, 'placeholder']];
      if (file !== undefined) substitutions.push(['report.json', file, 'placeholder']);
      const run = await runShell(substitute(docCommand(DOC, text).text, substitutions), {
        cwd: dir,
        env,
        timeoutMs: 90_000,
      });
      outputs.push(run.stdout, run.stderr);
      return run;
    }

    beforeAll(async () => {
      moto = await startMotoS3();
      sim = await startSimulator({
        dialect: 'rest',
        token: TOKEN,
        seed: 35,
        scenario: { scripts: { large: { steps: [{ state: 'succeeded' }], result: LARGE } } },
      });
      dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-object-store-'));
      const taskQueue = uniqueId('s3');
      provider = `reports-${uniqueId('s').toLowerCase()}`.slice(0, 60);
      env = {
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        ASYNCJOB_TASK_QUEUE: taskQueue,
        ASYNCJOB_STORE: `sqlite:${path.join(dir, 'asyncjob.db')}`,
        ASYNCJOB_AUDIT_HMAC_KEY: HMAC_KEY,
        ASYNCJOB_ARTIFACTS: `s3://${moto.bucket}/${PREFIX}`,
        ASYNCJOB_ARTIFACTS_S3_SSE: 'AES256',
        ...moto.env,
      };
      worker = spawn(process.execPath, [BIN, 'worker'], {
        env: {
          PATH: process.env.PATH,
          ...env,
          ASYNCJOB_PROVIDERS: await writeRestContract(dir, provider, sim.url),
          ASYNCJOB_LOG_LEVEL: 'debug',
          REPORTS_TOKEN: TOKEN,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      worker.stdout!.on('data', (chunk: Buffer) => (workerLog += chunk.toString()));
      worker.stderr!.on('data', (chunk: Buffer) => (workerLog += chunk.toString()));
      const end = Date.now() + 60_000;
      while (!workerLog.includes('asyncjob worker: task queue') && worker.exitCode === null && Date.now() < end)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(workerLog).toContain(`artifacts s3://${moto.bucket}/${PREFIX}`);
      // A client as a service on another machine makes it: from the environment alone.
      client = await AsyncJobClient.connect({ env });
      await client.start(weeklyReportRequest(operationId, provider));
      summary = await client.result(operationId);
    }, 120_000);

    afterAll(async () => {
      await client?.close();
      if (worker?.exitCode === null) {
        worker.kill('SIGTERM');
        await new Promise((resolve) => worker.once('exit', resolve));
      }
      await sim?.stop();
      await moto?.stop();
    });

    it('R2: the worker streams the result into the bucket under the prefix and the hash of the operation ID', async () => {
      expect(summary.localState).toBe('succeeded');
      const folder = createHash('sha256').update(operationId).digest('hex');
      const location = summary.result?.artifactLocation;
      expect(location).toMatch(new RegExp(`^s3://${moto.bucket}/${PREFIX}/${folder}/[0-9]+-result$`));
      const listed = await moto.client.send(new ListObjectsV2Command({ Bucket: moto.bucket }));
      expect(listed.Contents?.map((object) => object.Key)).toEqual([location!.slice(`s3://${moto.bucket}/`.length)]);
    });

    it('R2: client.readResult reads it back, verified against the recorded sha256 and size', async () => {
      const bytes = await readAll(await client.readResult(operationId));
      expect(bytes.length).toBe(summary.result?.sizeBytes);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(summary.result?.sha256);
    });

    it('R2: a result of two upload parts goes up as a multipart upload and reads back verified', async () => {
      const large = uniqueId('report-large');
      await client.start({ ...weeklyReportRequest(large, provider), payload: { report: 'weekly', scenario: 'large' } });
      const done = await client.result(large);
      expect(done.localState).toBe('succeeded');
      const served = renderPayload(LARGE);
      expect(done.result).toMatchObject({ sha256: served.sha256Hex, sizeBytes: served.sizeBytes });
      const key = done.result!.artifactLocation!.slice(`s3://${moto.bucket}/`.length);
      const head = await moto.client.send(new HeadObjectCommand({ Bucket: moto.bucket, Key: key }));
      expect(head.ETag).toMatch(/-2"$/);
      expect(head.ServerSideEncryption).toBe('AES256');
      const bytes = await readAll(await client.readResult(large));
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(served.sha256Hex);
    });

    it('R2: the documented asyncjob result --out writes the verified file; to stdout, the same bytes', async () => {
      const run = await documented(RESULT);
      expect(run.code, run.stderr).toBe(0);
      const file = await readFile(path.join(dir, 'report.json'));
      expect(createHash('sha256').update(file).digest('hex')).toBe(summary.result?.sha256);
      expect(run.stdout).toBe(
        `wrote ${file.length} bytes to report.json (sha256 ${summary.result?.sha256}, verified)\n`,
      );
      const stdout = await runShell(`asyncjob result ${operationId} | sha256sum`, { cwd: dir, env });
      outputs.push(stdout.stdout, stdout.stderr);
      expect(stdout.stdout.split(' ')[0]).toBe(summary.result?.sha256);
    });

    it('T2: the documented audit verify fetches and hashes the object', async () => {
      const run = await documented(AUDIT);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toMatch(/[1-9][0-9]* artifact files hashed/);
      expect(run.stdout).not.toContain('not reachable from here');
    });

    it('R2, T2: an object overwritten in the bucket is refused by the client, the CLI (no file left) and the audit', async () => {
      const location = summary.result!.artifactLocation!;
      const key = location.slice(`s3://${moto.bucket}/`.length);
      const original = await readAll(
        (await moto.client.send(new GetObjectCommand({ Bucket: moto.bucket, Key: key })))
          .Body as AsyncIterable<unknown>,
      );
      // Same size, other bytes: only the hash can tell.
      const tampered = Buffer.from(original);
      tampered[0] = tampered[0]! ^ 0xff;
      await moto.client.send(new PutObjectCommand({ Bucket: moto.bucket, Key: key, Body: tampered }));

      const refused = await readAll(await client.readResult(operationId)).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ResultUnavailableError);
      expect(refused).toMatchObject({ code: 'ASYNCJOB_ERR_RESULT_UNAVAILABLE', reason: 'mismatch', operationId });

      const before = (await readdir(dir)).sort();
      const run = await documented(RESULT, 'tampered.json');
      expect(run.code).toBe(6);
      expect(run.stderr).toMatch(/does not match the recorded sha256/);
      expect((await readdir(dir)).sort()).toEqual(before);

      const audit = await documented(AUDIT);
      expect(audit.code).not.toBe(0);
      expect(audit.stdout).toContain('artifact_file_mismatch');
    });

    it('T4: the AWS secret key is in no log line, command output, history, store file or object', async () => {
      const secret = moto.accessKey.secretAccessKey;
      expect(secret.length).toBeGreaterThanOrEqual(16);
      expect(workerLog).not.toContain(secret);
      for (const output of outputs) expect(output).not.toContain(secret);
      const temporal = await connectTestEnvironment();
      try {
        expect(JSON.stringify(await eventsOfEveryRun(temporal.client, operationId))).not.toContain(secret);
      } finally {
        await temporal.teardown();
      }
      for (const file of (await readdir(dir)).filter((name) => name.startsWith('asyncjob.db')))
        expect((await readFile(path.join(dir, file))).includes(secret), file).toBe(false);
      const listed = await moto.client.send(new ListObjectsV2Command({ Bucket: moto.bucket }));
      for (const object of listed.Contents ?? []) {
        expect(object.Key).not.toContain(secret);
        const body = await moto.client.send(new GetObjectCommand({ Bucket: moto.bucket, Key: object.Key }));
        expect((await readAll(body.Body as AsyncIterable<unknown>)).includes(secret)).toBe(false);
      }
    });
  },
);
