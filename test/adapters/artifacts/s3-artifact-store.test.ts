/**
 * The S3 artifact store against moto's real server (signatures checked): the store contract, the multipart upload
 * seen from S3, server-side encryption passed through to the objects, and the store the settings choose.
 */
import { createHash } from 'node:crypto';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactSettingsOf, openArtifactStore } from '../../../src/adapters/artifacts/open-artifact-store';
import { S3ArtifactStore } from '../../../src/adapters/artifacts/s3-artifact-store';
import { checkArtifactFiles } from '../../../src/audit/artifact-files';
import type { JournalEntry } from '../../../src/core/journal';
import { checkObjectStore } from '../../../src/doctor/object-store-check';
import { artifactStoreContract, CONTRACT_PART_SIZE_BYTES } from './artifact-store.contract';
import { MOTO_MISSING, startMotoS3, type MotoS3 } from './moto-s3';

let moto: MotoS3 | undefined;
let buckets = 0;

/** A fresh bucket on the shared moto. */
async function freshBucket(): Promise<string> {
  const bucket = `contract-${++buckets}`;
  await moto!.client.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

async function keysIn(bucket: string): Promise<string[]> {
  const listed = await moto!.client.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (listed.Contents ?? []).map((object) => object.Key!);
}

function storeIn(bucket: string, options: Partial<ConstructorParameters<typeof S3ArtifactStore>[0]> = {}) {
  return new S3ArtifactStore({
    client: moto!.client,
    bucket,
    prefix: 'inside',
    partSizeBytes: CONTRACT_PART_SIZE_BYTES,
    ...options,
  });
}

describe.skipIf(MOTO_MISSING !== undefined)(
  `S3ArtifactStore on moto${MOTO_MISSING ? ` (skipped: ${MOTO_MISSING})` : ''}`,
  () => {
    beforeAll(async () => {
      moto = await startMotoS3();
    }, 90_000);
    afterAll(async () => {
      await moto?.stop();
    });

    artifactStoreContract('S3ArtifactStore', async () => {
      const bucket = await freshBucket();
      return {
        store: storeIn(bucket),
        stored: async () =>
          (await keysIn(bucket)).filter((key) => key.startsWith('inside/')).map((key) => key.slice('inside/'.length)),
        everything: () => keysIn(bucket),
        uploadsInProgress: async () =>
          (await moto!.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads?.length ?? 0,
        foreignLocations: [
          `s3://another-bucket/inside/${'0'.repeat(64)}/1-result`,
          `s3://${bucket}/outside/${'0'.repeat(64)}/1-result`,
          `s3://${bucket}/inside/../outside/1-result`,
          `s3://${bucket}/inside/${'0'.repeat(64)}/operation-id`,
          'file:///etc/passwd',
        ],
      };
    });

    it('R2: a result above one part is a multipart upload of 5 MiB parts; below it, one PutObject', async () => {
      const bucket = await freshBucket();
      const store = storeIn(bucket);
      const big = await store.begin('op-parts', '6-result');
      const bytes = Buffer.alloc(CONTRACT_PART_SIZE_BYTES * 2 + 10, 7);
      await big.write(bytes);
      const large = await big.commit();
      expect(large.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
      const key = large.location.slice(`s3://${bucket}/`.length);
      const head = await moto!.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      expect(head.ETag).toMatch(/-3"$/);
      expect(head.ContentLength).toBe(bytes.length);
      const small = await (await store.begin('op-parts', '7-result')).commit();
      const smallHead = await moto!.client.send(
        new HeadObjectCommand({ Bucket: bucket, Key: small.location.slice(`s3://${bucket}/`.length) }),
      );
      expect(smallHead.ETag).not.toMatch(/-\d+"$/);
      expect(smallHead.ContentLength).toBe(0);
    });

    it.each([
      [{ serverSideEncryption: 'AES256' as const }, { ServerSideEncryption: 'AES256' }],
      [
        { serverSideEncryption: 'aws:kms' as const, kmsKeyId: 'alias/asyncjob-results' },
        { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'alias/asyncjob-results' },
      ],
    ])('passes server-side encryption %j through to every object (HeadObject)', async (encryption, expected) => {
      const bucket = await freshBucket();
      const store = storeIn(bucket, { encryption });
      for (const size of [10, CONTRACT_PART_SIZE_BYTES + 1]) {
        const writer = await store.begin('op-sse', `${size}-result`);
        await writer.write(Buffer.alloc(size, 1));
        const artifact = await writer.commit();
        const head = await moto!.client.send(
          new HeadObjectCommand({ Bucket: bucket, Key: artifact.location.slice(`s3://${bucket}/`.length) }),
        );
        expect(head, `${size} bytes`).toMatchObject(expected);
      }
    });

    it('ASYNCJOB_ARTIFACTS=s3://... chooses the S3 store with the standard AWS variables; unset, the file store', async () => {
      const bucket = await freshBucket();
      const env = {
        ...moto!.env,
        ASYNCJOB_ARTIFACTS: `s3://${bucket}/results/v1`,
        ASYNCJOB_ARTIFACTS_S3_SSE: 'AES256',
      };
      const store = openArtifactStore(artifactSettingsOf(env), env);
      expect(store).toBeInstanceOf(S3ArtifactStore);
      const writer = await store.begin('op/chosen', '1-result');
      await writer.write(Buffer.from('chosen'));
      const artifact = await writer.commit();
      expect(artifact.location).toMatch(new RegExp(`^s3://${bucket}/results/v1/[0-9a-f]{64}/1-result$`));
      expect(await keysIn(bucket)).toEqual([artifact.location.slice(`s3://${bucket}/`.length)]);
      // Someone overwrites the object: describe recomputes what is there now.
      await moto!.client.send(
        new PutObjectCommand({ Bucket: bucket, Key: artifact.location.slice(`s3://${bucket}/`.length), Body: 'x' }),
      );
      expect((await store.describe(artifact.location))?.sizeBytes).toBe(1);
      const fileStore = openArtifactStore(artifactSettingsOf({ ASYNCJOB_ARTIFACTS_DIR: '/tmp/x' }), env);
      expect(fileStore.holds('file:///tmp/x/ab/1-result')).toBe(true);
      expect(() => artifactSettingsOf({ ASYNCJOB_ARTIFACTS: 's3://b/../x' })).toThrow(/ASYNCJOB_ARTIFACTS/);
      expect(() => artifactSettingsOf({ ASYNCJOB_ARTIFACTS: 'https://b/x' })).toThrow(/s3:\/\/BUCKET/);
    });

    it('a wrong secret key is refused by the server, and the secret is in no location or error message', async () => {
      const bucket = await freshBucket();
      const env = {
        ...moto!.env,
        AWS_SECRET_ACCESS_KEY: `${moto!.accessKey.secretAccessKey}-wrong`,
        ASYNCJOB_ARTIFACTS: `s3://${bucket}`,
      };
      const store = openArtifactStore(artifactSettingsOf(env), env);
      const writer = await store.begin('op-denied', '1-result');
      await writer.write(Buffer.from('denied'));
      const error = (await writer.commit().catch((e: unknown) => e)) as Error;
      expect(error).toBeInstanceOf(Error);
      expect(`${error.name} ${error.message}`).toMatch(/SignatureDoesNotMatch|signature/i);
      expect(`${error.message} ${error.stack}`).not.toContain(env.AWS_SECRET_ACCESS_KEY);
      expect(await keysIn(bucket)).toEqual([]);
    });

    it('T2: audit verify hashes objects of the configured store: a match is checked, an overwritten one a mismatch, an absent one missing, another bucket unreachable', async () => {
      const bucket = await freshBucket();
      const store = storeIn(bucket);
      const entries: JournalEntry[] = [];
      for (const [sequence, text] of [
        [1, 'kept'],
        [2, 'overwritten'],
        [3, 'deleted'],
      ] as const) {
        const writer = await store.begin('op-audit', `${sequence}-result`);
        await writer.write(Buffer.from(text));
        const artifact = await writer.commit();
        entries.push({
          operationId: 'op-audit',
          sequence,
          at: '2026-12-01T10:00:00.000Z',
          actor: 'worker:host-a',
          body: { kind: 'artifact', ...artifact, validation: 'valid' },
        });
      }
      const locationOf = (entry: JournalEntry) => (entry.body as { location: string }).location;
      const keyOf = (entry: JournalEntry) => locationOf(entry).slice(`s3://${bucket}/`.length);
      await moto!.client.send(new PutObjectCommand({ Bucket: bucket, Key: keyOf(entries[1]!), Body: 'tampered!!!' }));
      await moto!.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: keyOf(entries[2]!) }));
      const elsewhere = { ...entries[0]!.body, location: `s3://another/${keyOf(entries[0]!)}` };
      entries.push({ ...entries[0]!, sequence: 4, body: elsewhere as JournalEntry['body'] });
      const found = await checkArtifactFiles('op-audit', entries, { objects: store });
      expect(found.checked).toBe(2);
      expect(found.unreachable).toBe(1);
      expect(found.findings.map((f) => [f.sequence, f.problem])).toEqual([
        [2, 'artifact_file_mismatch'],
        [3, 'artifact_file_missing'],
      ]);
      expect(JSON.stringify(found.findings)).toContain('no object');
      const without = await checkArtifactFiles('op-audit', entries, {});
      expect(without).toMatchObject({ checked: 0, unreachable: 4, findings: [] });
    });

    it('asyncjob doctor reads one absent key: ok for a bucket it may use; a missing bucket or a wrong secret is a problem', async () => {
      const bucket = await freshBucket();
      const url = `s3://${bucket}/results`;
      const settings = (extra: Record<string, string>) => ({ ...moto!.env, ASYNCJOB_ARTIFACTS: url, ...extra });
      const good = settings({});
      expect(await checkObjectStore(url, openArtifactStore(artifactSettingsOf(good), good), 10_000)).toMatchObject({
        status: 'ok',
      });
      const noBucket = settings({ ASYNCJOB_ARTIFACTS: 's3://no-such-bucket/results' });
      const missing = await checkObjectStore(
        's3://no-such-bucket/results',
        openArtifactStore(artifactSettingsOf(noBucket), noBucket),
        10_000,
      );
      expect(missing).toMatchObject({ status: 'problem', message: expect.stringContaining('NoSuchBucket') });
      const wrong = settings({ AWS_SECRET_ACCESS_KEY: 'not-the-secret-key-at-all' });
      const refused = await checkObjectStore(url, openArtifactStore(artifactSettingsOf(wrong), wrong), 10_000);
      expect(refused).toMatchObject({ status: 'problem' });
      expect(JSON.stringify(refused)).not.toContain(moto!.accessKey.secretAccessKey);
    });
  },
);
