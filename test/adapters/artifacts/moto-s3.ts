/**
 * A real S3-compatible server for tests: moto's server (installed into `.conformance/moto` by
 * `npm run conformance -- --install-only`, which `.ci/run` runs before the tests), started on a free loopback port
 * with signature checking on (scripts/conformance/moto.ts), and a bucket made with its signing user's key. A test
 * file skips with {@link MOTO_MISSING} as its reason only when moto is not installed.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { MOTO_REGION, motoInstalledSync, startMoto, type AccessKey } from '../../../scripts/conformance/moto';

/** Why the S3 tests are skipped, or undefined when moto is installed. */
export const MOTO_MISSING = motoInstalledSync()
  ? undefined
  : 'moto is not installed in .conformance/moto: run `npm run conformance -- --install-only` to run the S3 tests';

/** A running moto with one bucket. */
export interface MotoS3 {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  bucket: string;
  /** The key moto checks every request's signature against. */
  accessKey: AccessKey;
  /** An S3 client signed with {@link accessKey}, path-style, for the test's own looks at the bucket. */
  client: S3Client;
  /** The standard AWS variables (and our path-style setting) that point a process at this server. */
  env: Record<string, string>;
  /** Where moto writes its log. */
  logFile: string;
  stop(): Promise<void>;
}

/** Starts moto on a free loopback port and creates `bucket` (default `asyncjob-results`). */
export async function startMotoS3(options: { bucket?: string } = {}): Promise<MotoS3> {
  const bucket = options.bucket ?? 'asyncjob-results';
  const logFile = path.join(await mkdtemp(path.join(tmpdir(), 'moto-')), 'moto.log');
  const moto = await startMoto({ logFile });
  const client = new S3Client({
    endpoint: moto.url,
    region: MOTO_REGION,
    forcePathStyle: true,
    credentials: moto.accessKey,
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    await moto.stop();
    throw error;
  }
  return {
    url: moto.url,
    bucket,
    accessKey: moto.accessKey,
    client,
    env: {
      AWS_ENDPOINT_URL_S3: moto.url,
      AWS_REGION: MOTO_REGION,
      AWS_ACCESS_KEY_ID: moto.accessKey.accessKeyId,
      AWS_SECRET_ACCESS_KEY: moto.accessKey.secretAccessKey,
      ASYNCJOB_ARTIFACTS_S3_FORCE_PATH_STYLE: 'true',
    },
    logFile,
    stop: async () => {
      client.destroy();
      await moto.stop();
    },
  };
}
