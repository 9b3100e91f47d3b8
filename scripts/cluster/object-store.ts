/**
 * The cluster's object store: moto's S3-compatible server (PyPI, the pinned one `npm run conformance --
 * --install-only` puts in `.conformance/moto`), listening where the workers reach it, with one bucket for the run.
 * The workers write results there and the client reads them back from there: no worker's disk is involved.
 */
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../../src/dev/temporal-server';

const ROOT = path.join(__dirname, '..', '..');
const MOTO_SERVER = path.join(ROOT, '.conformance', 'moto', 'bin', 'moto_server');

/** A running object store and what a process needs to use it. */
export interface ObjectStore {
  /** The variables a worker or client is given: `ASYNCJOB_ARTIFACTS`, the endpoint, region and a key. */
  env: Record<string, string>;
  stop(): void;
}

/** Why the object store cannot start here (moto's server not installed), checked before the run starts anything. */
export function objectStoreMissing(): string | undefined {
  return existsSync(MOTO_SERVER)
    ? undefined
    : `moto's server is not installed at ${MOTO_SERVER}: \`npm run conformance -- --install-only\` installs it`;
}

/** Starts moto's server on `host` (output to `logFile`) and makes the run's bucket. */
export async function startObjectStore(host: string, logFile: string): Promise<ObjectStore> {
  const port = await freePort();
  const out = openSync(logFile, 'a');
  const child = spawn(MOTO_SERVER, ['-H', host, '-p', String(port)], { stdio: ['ignore', out, out] });
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code) => reject(new Error(`moto's server exited ${code} (log ${logFile})`)));
    // A server that cannot be spawned emits `error`, which unheard ends the process before the run's teardown.
    child.once('error', (error) => reject(new Error(`moto's server did not start: ${error.message}`)));
  });
  const endpoint = `http://${host}:${port}`;
  const credentials = { accessKeyId: 'AKIACLUSTERRUN', secretAccessKey: randomBytes(20).toString('hex') };
  const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  const bucket = `asyncjob-cluster-${randomBytes(4).toString('hex')}`;
  // moto answers once it listens: retry the bucket until then.
  for (let attempt = 0; ; attempt++) {
    try {
      await Promise.race([s3.send(new CreateBucketCommand({ Bucket: bucket })), exited]);
      break;
    } catch (error) {
      if (attempt >= 100 || child.exitCode !== null) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  s3.destroy();
  return {
    env: {
      ASYNCJOB_ARTIFACTS: `s3://${bucket}/results`,
      ASYNCJOB_ARTIFACTS_S3_FORCE_PATH_STYLE: 'true',
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
    stop: () => void child.kill('SIGTERM'),
  };
}
