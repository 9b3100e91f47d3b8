import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iamAction, MOTO_REGION, type AccessKey } from '../../scripts/conformance/moto';
import { S3ArtifactStore } from '../../src/adapters/artifacts/s3-artifact-store';
import { checkArtifactFiles } from '../../src/audit/artifact-files';
import { type JournalEntry } from '../../src/core/journal';
import { MOTO_MISSING, startMotoS3, type MotoS3 } from '../adapters/artifacts/moto-s3';

const root = mkdtempSync(join(tmpdir(), 'asyncjob-artifact-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function artifactEntry(sequence: number, location: string, bytes = Buffer.from('{}')): JournalEntry {
  return {
    operationId: 'op-1',
    sequence,
    at: '2026-11-29T10:18:00.000Z',
    actor: 'worker:host-a',
    body: {
      kind: 'artifact',
      location,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      sizeBytes: bytes.length,
      validation: 'valid',
    },
  };
}

describe('artifact files: what counts as missing', () => {
  it('T2: a file absent under the artifact root (even with its folder gone) or beside an existing folder is missing; another host or scheme is unreachable', async () => {
    const store = join(root, 'artifacts');
    mkdirSync(join(store, 'present'), { recursive: true });
    writeFileSync(join(store, 'present', '1-result'), '{}');
    const entries = [
      artifactEntry(1, pathToFileURL(join(store, 'present', '1-result')).href),
      artifactEntry(2, pathToFileURL(join(store, 'gone-folder', '2-result')).href),
      artifactEntry(3, pathToFileURL(join(root, '3-result')).href),
      artifactEntry(4, 'file:///no-such-host-directory/asyncjob/4-result'),
      artifactEntry(5, 's3://bucket/op-1/5-result'),
      artifactEntry(6, 'file://other-host/var/asyncjob/6-result'),
    ];
    const found = await checkArtifactFiles('op-1', entries, { root: store });
    expect(found.checked).toBe(1);
    expect(found.unreachable).toBe(3);
    expect(found.findings.map((f) => [f.sequence, f.problem])).toEqual([
      [2, 'artifact_file_missing'],
      [3, 'artifact_file_missing'],
    ]);
    const allowed = await checkArtifactFiles('op-1', entries, { root: store, allowMissing: true });
    expect(allowed.findings).toEqual([]);
    expect(allowed.allowedMissing).toHaveLength(2);
    // Without the artifact root on this host, a file whose folder is gone is another machine's.
    const elsewhere = await checkArtifactFiles('op-1', entries.slice(1, 2), { root: join(root, 'not-here') });
    expect(elsewhere).toMatchObject({ findings: [], unreachable: 1 });
  });
});

/** An S3 client for `url` signed with `key`, trying once (an outage is not worth the SDK's retries here). */
function s3ClientOf(url: string, key: AccessKey): S3Client {
  return new S3Client({ endpoint: url, region: MOTO_REGION, forcePathStyle: true, credentials: key, maxAttempts: 1 });
}

/** A loopback port nothing listens on: one just given up by a server. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A user of moto with an access key and no policy at all: every S3 request it signs is AccessDenied. */
async function keyWithoutRights(moto: MotoS3): Promise<AccessKey> {
  await iamAction(moto.url, { Action: 'CreateUser', UserName: 'audit-reader-without-rights' }, moto.accessKey);
  const xml = await iamAction(
    moto.url,
    { Action: 'CreateAccessKey', UserName: 'audit-reader-without-rights' },
    moto.accessKey,
  );
  return {
    accessKeyId: /<AccessKeyId>([^<]+)</.exec(xml)![1]!,
    secretAccessKey: /<SecretAccessKey>([^<]+)</.exec(xml)![1]!,
  };
}

describe.skipIf(MOTO_MISSING !== undefined)(
  `artifact files: objects of the configured store on moto${MOTO_MISSING ? ` (skipped: ${MOTO_MISSING})` : ''}`,
  () => {
    let moto: MotoS3 | undefined;
    beforeAll(async () => {
      moto = await startMotoS3();
    }, 90_000);
    afterAll(async () => {
      await moto?.stop();
    });

    it('T2: an object of the configured store that cannot be read (wrong secret key, 403 AccessDenied, an outage) is artifact_unreadable, never unreachable or missing; another bucket stays unreachable', async () => {
      const bucket = moto!.bucket;
      const options = { bucket, prefix: 'audit' };
      const store = new S3ArtifactStore({ client: moto!.client, ...options });
      const writer = await store.begin('op-1', '1-result');
      await writer.write(Buffer.from('{}'));
      const kept = await writer.commit();
      const entries = [
        artifactEntry(1, kept.location),
        // Absent: S3 answers 404 to the signing user, 403 to one who may not read.
        artifactEntry(2, kept.location.replace(/1-result$/, '2-result')),
        artifactEntry(3, `s3://another-bucket/${kept.location.slice(`s3://${bucket}/`.length)}`),
      ];
      const readable = await checkArtifactFiles('op-1', entries, { objects: store });
      expect(readable).toMatchObject({ checked: 1, unreachable: 1 });
      expect(readable.findings.map((f) => [f.sequence, f.problem])).toEqual([[2, 'artifact_file_missing']]);

      const wrongSecret = { ...moto!.accessKey, secretAccessKey: `${moto!.accessKey.secretAccessKey}-wrong` };
      const readers: [string, AccessKey, string, RegExp][] = [
        ['a wrong secret key', wrongSecret, moto!.url, /^not read: SignatureDoesNotMatch \(HTTP 403\)$/],
        ['no rights', await keyWithoutRights(moto!), moto!.url, /^not read: AccessDenied \(HTTP 403\)$/],
        ['an outage', moto!.accessKey, `http://127.0.0.1:${await closedPort()}`, /^not read: .*ECONNREFUSED/],
      ];
      for (const [why, key, url, error] of readers) {
        const client = s3ClientOf(url, key);
        const reader = new S3ArtifactStore({ client, ...options });
        const found = await checkArtifactFiles('op-1', entries, { objects: reader, allowMissing: true });
        client.destroy();
        expect(found, why).toMatchObject({ checked: 0, unreachable: 1, allowedMissing: [] });
        expect(
          found.findings.map((f) => [f.sequence, f.problem]),
          why,
        ).toEqual([
          [1, 'artifact_unreadable'],
          [2, 'artifact_unreadable'],
        ]);
        expect(found.findings[0], why).toMatchObject({ expected: `2 bytes at ${kept.location}` });
        expect(found.findings[0]!.found, why).toMatch(error);
        expect(JSON.stringify(found.findings), why).not.toContain(key.secretAccessKey);
      }
    });
  },
);
