/**
 * Collected results in an S3-compatible object store (AWS S3, MinIO, Ceph, moto...): one object per artifact at
 * `<prefix>/<sha256 hex of the operation ID>/<artifact name>`, located as `s3://bucket/key`.
 *
 * A result is streamed up as it arrives, in parts of `partSizeBytes` (a multipart upload from the second part on,
 * one PutObject below it), its sha256 and size computed on the way; nothing is visible under the key until the
 * upload completes, and an aborted or failed upload is aborted at the server (AbortMultipartUpload), so no parts
 * are left behind. The artifact name carries the journal sequence, so a retried collect writes the same key again
 * and replaces the object: an operation never has two results. An upload cut short by a killed process leaves
 * parts only a bucket lifecycle rule (`AbortIncompleteMultipartUpload`) removes (docs/operating.md).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { S3Client, S3ClientConfig, ServerSideEncryption } from '@aws-sdk/client-s3';
import type * as StorageSdk from '@aws-sdk/lib-storage';
import {
  ARTIFACT_NAME,
  artifactFolderOf,
  digestOf,
  type ArtifactStore,
  type ArtifactWriter,
  type StoredArtifact,
} from './artifact-store';

/** Parts of 8 MiB (S3's least is 5 MiB): two in flight bound an upload's memory to about 16 MiB. */
const DEFAULT_PART_SIZE_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/** Server-side encryption asked for on each object written. */
export interface S3Encryption {
  /** `x-amz-server-side-encryption`: `AES256`, `aws:kms` or `aws:kms:dsse`. */
  serverSideEncryption: 'AES256' | 'aws:kms' | 'aws:kms:dsse';
  /** The KMS key of `aws:kms` (ID, ARN or alias); absent: the account's AWS-managed key. */
  kmsKeyId?: string;
}

/** Where and how an {@link S3ArtifactStore} keeps artifacts. */
export interface S3ArtifactStoreOptions {
  /** A client configured with the endpoint, region, addressing style and credentials. */
  client: S3Client;
  bucket: string;
  /** Key prefix without leading or trailing `/`; empty for the bucket's root. */
  prefix: string;
  encryption?: S3Encryption;
  /** Size of each uploaded part, at least 5 MiB (default 8 MiB). */
  partSizeBytes?: number;
}

/** The bucket and prefix of `s3://bucket/prefix` (the prefix without surrounding `/`). */
function parseS3Artifacts(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url.trim());
  if (match === null) throw new Error(`not an s3:// location: ${url}`);
  return { bucket: match[1]!, prefix: (match[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

/**
 * The AWS SDK's S3 client and upload helper, loaded at the first use of an S3 store, so a process on the file store
 * (most commands, most clients) never loads them.
 */
function sdk(): { s3: typeof S3Sdk; storage: typeof StorageSdk } {
  /* eslint-disable @typescript-eslint/no-require-imports -- a lazy load, typed by the imports above */
  return {
    s3: require('@aws-sdk/client-s3') as typeof S3Sdk,
    storage: require('@aws-sdk/lib-storage') as typeof StorageSdk,
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Artifacts in one bucket under one prefix. Safe to share; each method is one or a few S3 requests. */
export class S3ArtifactStore implements ArtifactStore {
  private readonly keyPattern: RegExp;

  constructor(private readonly options: S3ArtifactStoreOptions) {
    const base = options.prefix === '' ? '' : `${options.prefix}/`;
    // A key of this store: the prefix, an operation's folder (64 hex digits) and an artifact name, nothing else.
    this.keyPattern = new RegExp(`^${escapeRegExp(base)}[0-9a-f]{64}/${ARTIFACT_NAME.source.slice(1)}`);
  }

  /**
   * The store at `s3://bucket/prefix`, with a client of `clientConfig` (endpoint, region, addressing style,
   * credentials; what it leaves out is the SDK's default chain).
   */
  static at(
    url: string,
    clientConfig: S3ClientConfig,
    options: Pick<S3ArtifactStoreOptions, 'encryption' | 'partSizeBytes'> = {},
  ): S3ArtifactStore {
    return new S3ArtifactStore({ client: new (sdk().s3.S3Client)(clientConfig), ...parseS3Artifacts(url), ...options });
  }

  /** Starts the upload of `name` for `operationId`; writing the same name again replaces the object on commit. */
  async begin(operationId: string, name: string): Promise<ArtifactWriter> {
    if (!ARTIFACT_NAME.test(name)) throw new Error(`not an artifact name: ${JSON.stringify(name)}`);
    const { prefix, bucket, encryption } = this.options;
    const key = `${prefix === '' ? '' : `${prefix}/`}${artifactFolderOf(operationId)}/${name}`;
    const body = new PassThrough();
    const upload = new (sdk().storage.Upload)({
      client: this.options.client,
      params: {
        Bucket: bucket,
        Key: key,
        Body: body,
        ...(encryption !== undefined
          ? { ServerSideEncryption: encryption.serverSideEncryption as ServerSideEncryption }
          : {}),
        ...(encryption?.kmsKeyId !== undefined ? { SSEKMSKeyId: encryption.kmsKeyId } : {}),
      },
      partSize: this.options.partSizeBytes ?? DEFAULT_PART_SIZE_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    return new S3ArtifactWriter(body, upload, `s3://${bucket}/${key}`);
  }

  async open(location: string): Promise<Readable> {
    const answer = await this.options.client.send(
      new (sdk().s3.GetObjectCommand)({ Bucket: this.options.bucket, Key: this.keyOf(location) }),
    );
    if (!(answer.Body instanceof Readable)) throw new Error(`no body for ${location}`);
    return answer.Body;
  }

  holds(location: string): boolean {
    try {
      this.keyOf(location);
      return true;
    } catch {
      return false;
    }
  }

  async describe(location: string): Promise<StoredArtifact | undefined> {
    let body: Readable;
    try {
      body = await this.open(location);
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw error;
    }
    return { location, ...(await digestOf(body)) };
  }

  /** The key `location` names in this store's bucket and prefix; throws for anything else. */
  private keyOf(location: string): string {
    const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(location);
    if (match === null || match[1] !== this.options.bucket || !this.keyPattern.test(match[2]!))
      throw new Error(`artifact outside the store: ${location}`);
    return match[2]!;
  }
}

/**
 * S3's answer for a key that does not exist (a bucket that does not exist is an error, not an absent artifact).
 * A 403 never is: S3 answers AccessDenied for a missing key to a reader without s3:ListBucket, so a refusal says
 * nothing about whether the object is there, and the audit reports it as unreadable, not missing.
 */
function isAbsent(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || (e.$metadata?.httpStatusCode === 404 && e.name !== 'NoSuchBucket');
}

/** How an upload ended: the SDK's `done()`, never rejected (its failure is kept as a value). */
type Settled = { kind: 'uploaded' } | { kind: 'failed'; error: unknown };

class S3ArtifactWriter implements ArtifactWriter {
  private readonly hash = createHash('sha256');
  bytesWritten = 0;
  private state: 'open' | 'committing' | 'closed' = 'open';
  private readonly settled: Promise<Settled>;

  constructor(
    private readonly body: PassThrough,
    upload: StorageSdk.Upload,
    private readonly location: string,
  ) {
    this.settled = upload.done().then(
      (): Settled => ({ kind: 'uploaded' }),
      (error: unknown): Settled => ({ kind: 'failed', error }),
    );
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.state !== 'open') throw new Error('artifact writer already closed');
    this.hash.update(chunk);
    this.bytesWritten += chunk.byteLength;
    if (this.body.write(chunk)) return;
    // Backpressure: wait until the parts in flight drain, unless the upload has failed meanwhile.
    const drained = once(this.body, 'drain').then(
      () => undefined,
      () => undefined,
    );
    const outcome = await Promise.race([drained, this.settled]);
    if (outcome?.kind === 'failed') throw outcome.error;
  }

  async commit(): Promise<StoredArtifact> {
    if (this.state !== 'open') throw new Error('artifact writer already closed');
    this.state = 'committing';
    this.body.end();
    const outcome = await this.settled;
    this.state = 'closed';
    // On failure the SDK has already aborted the multipart upload (leavePartsOnError: false).
    if (outcome.kind === 'failed') throw outcome.error;
    return { location: this.location, sha256: this.hash.digest('hex'), sizeBytes: this.bytesWritten };
  }

  /** Ends the upload without an object; the parts sent so far are removed by AbortMultipartUpload. Safe to repeat. */
  async abort(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'closed';
    // Failing the body stream fails the upload, and the SDK aborts it at the server before `done()` settles.
    this.body.destroy(new Error('artifact aborted'));
    await this.settled;
  }
}
