/**
 * Durable storage for collected results (R2): large results go here, with their sha256 and size, never into
 * workflow history or the journal. The filesystem implementation is the default; `s3-artifact-store.ts` keeps
 * them in an S3-compatible object store, and `open-artifact-store.ts` chooses between them from the settings.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** A committed artifact. */
export interface StoredArtifact {
  /** Where it lives, e.g. `file:///.../op-1/7-result` or `s3://bucket/prefix/<folder>/7-result`. */
  location: string;
  /** Hex sha256 of the bytes. */
  sha256: string;
  sizeBytes: number;
}

/** An artifact being written; `commit` makes it durable and visible, `abort` discards it. */
export interface ArtifactWriter {
  write(chunk: Uint8Array): Promise<void>;
  /** Bytes written so far. */
  readonly bytesWritten: number;
  commit(): Promise<StoredArtifact>;
  abort(): Promise<void>;
}

/** Where collected results are kept. */
export interface ArtifactStore {
  /** Starts writing the artifact `name` of an operation. Writing the same name again replaces it atomically. */
  begin(operationId: string, name: string): Promise<ArtifactWriter>;
  /**
   * Reads a committed artifact back: the stream of its bytes, as stored (nothing is verified here). Rejects when the
   * location is not one of this store's or the artifact is absent.
   */
  open(location: string): Promise<Readable>;
  /** Whether `location` names an artifact of this store (present or not); no I/O. */
  holds(location: string): boolean;
  /** Describes a committed artifact (size and hash recomputed), or undefined if absent. */
  describe(location: string): Promise<StoredArtifact | undefined>;
}

/** The artifact names our activities write (`14-result`, `9-result-pages.json`): a sequence number first. */
export const ARTIFACT_NAME = /^[0-9]+-[A-Za-z0-9.-]{1,100}$/;

/**
 * The folder of an operation's artifacts, relative to the store's root: the hex sha256 of its ID, never the ID
 * as written, so no operation ID (`..`, a separator, a device name) can name a path outside the root or
 * another operation's folder. The readable ID is kept beside the files (`operation-id`).
 */
export function artifactFolderOf(operationId: string): string {
  return createHash('sha256').update(operationId, 'utf8').digest('hex');
}

/** The hex sha256 and size of every byte `bytes` yields. */
export async function digestOf(bytes: AsyncIterable<unknown>): Promise<{ sha256: string; sizeBytes: number }> {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  for await (const chunk of bytes) {
    hash.update(chunk as Uint8Array);
    sizeBytes += (chunk as Uint8Array).byteLength;
  }
  return { sha256: hash.digest('hex'), sizeBytes };
}

/** Filesystem artifact store under `root` (default `.asyncjob/artifacts`): temp file, fsync, rename. */
export class FileArtifactStore implements ArtifactStore {
  constructor(private readonly root: string) {}

  async begin(operationId: string, name: string): Promise<ArtifactWriter> {
    if (!ARTIFACT_NAME.test(name)) throw new Error(`not an artifact name: ${JSON.stringify(name)}`);
    const dir = path.join(path.resolve(this.root), artifactFolderOf(operationId));
    await mkdir(dir, { recursive: true });
    // The readable ID for an operator browsing the folder; written once, the same bytes on every retry.
    await writeFile(path.join(dir, 'operation-id'), operationId, { flag: 'wx' }).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    });
    const final = path.join(dir, name);
    const temp = `${final}.partial-${process.pid}-${Date.now()}`;
    const handle = await open(temp, 'w');
    return new FileArtifactWriter(handle, temp, final);
  }

  async open(location: string): Promise<Readable> {
    const file = this.pathOf(location);
    const stream = createReadStream(file);
    // Opened before it is handed over, so an absent file rejects here rather than failing the reader later.
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    return stream;
  }

  holds(location: string): boolean {
    try {
      this.pathOf(location);
      return true;
    } catch {
      return false;
    }
  }

  async describe(location: string): Promise<StoredArtifact | undefined> {
    const file = this.pathOf(location);
    try {
      await stat(file);
    } catch {
      return undefined;
    }
    return { location, ...(await digestOf(createReadStream(file))) };
  }

  private pathOf(location: string): string {
    const file = new URL(location);
    if (file.protocol !== 'file:') throw new Error(`not a file artifact: ${location}`);
    const resolved = path.resolve(decodeURIComponent(file.pathname));
    if (!resolved.startsWith(path.resolve(this.root) + path.sep))
      throw new Error(`artifact outside the store: ${location}`);
    return resolved;
  }
}

class FileArtifactWriter implements ArtifactWriter {
  private readonly hash: Hash = createHash('sha256');
  bytesWritten = 0;
  private done = false;

  constructor(
    private readonly handle: FileHandle,
    private readonly temp: string,
    private readonly final: string,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    if (this.done) throw new Error('artifact writer already closed');
    this.hash.update(chunk);
    this.bytesWritten += chunk.byteLength;
    await this.handle.write(chunk);
  }

  async commit(): Promise<StoredArtifact> {
    if (this.done) throw new Error('artifact writer already closed');
    this.done = true;
    await this.handle.sync();
    await this.handle.close();
    await rename(this.temp, this.final);
    return {
      location: new URL(`file://${path.resolve(this.final)}`).href,
      sha256: this.hash.digest('hex'),
      sizeBytes: this.bytesWritten,
    };
  }

  async abort(): Promise<void> {
    if (this.done) return;
    this.done = true;
    await this.handle.close().catch(() => undefined);
    await rm(this.temp, { force: true });
  }
}
