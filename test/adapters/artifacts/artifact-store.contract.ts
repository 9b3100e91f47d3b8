/**
 * The `ArtifactStore` contract, run against every implementation (the file store, the S3 store on moto): a round
 * trip with sha256 and size computed while streaming, a result larger than several upload parts, an abort that
 * leaves nothing, a retried write that replaces the one artifact, operation IDs that stay inside the store, and
 * locations of other stores refused.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ArtifactStore } from '../../../src/adapters/artifacts/artifact-store';
import { TRAVERSAL_CORPUS } from '../../security/traversal-corpus';

/** One store under test, and the looks at its storage the contract needs. */
export interface StoreUnderTest {
  store: ArtifactStore;
  /** Every artifact stored, as a path or key relative to the store's root or prefix (readable IDs aside). */
  stored(): Promise<string[]>;
  /** Everything in the storage the store writes into, outside its root or prefix included (relative paths). */
  everything(): Promise<string[]>;
  /** Uploads begun and neither completed nor aborted (always 0 for a store without them). */
  uploadsInProgress(): Promise<number>;
  /** A location of the same kind that is not this store's. */
  foreignLocations: string[];
}

/** Part size the large-result case is written for (S3's least part size). */
export const CONTRACT_PART_SIZE_BYTES = 5 * 1024 * 1024;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function readAll(store: ArtifactStore, location: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.open(location)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Deterministic bytes that do not compress (so no layer can shortcut them). */
function bytesOf(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = state & 0xff;
  }
  return out;
}

/** Runs the contract against the stores `open` makes (a fresh, empty store each time). */
export function artifactStoreContract(name: string, open: () => Promise<StoreUnderTest>): void {
  describe(`ArtifactStore contract: ${name}`, () => {
    it('R2: commits a result streamed in chunks with its sha256 and size, and reads it back', async () => {
      const t = await open();
      const writer = await t.store.begin('op-round-trip', '7-result');
      await writer.write(Buffer.from('{"items":'));
      await writer.write(Buffer.from('[1,2,3]}'));
      expect(writer.bytesWritten).toBe(17);
      const artifact = await writer.commit();
      const bytes = Buffer.from('{"items":[1,2,3]}');
      expect(artifact).toMatchObject({ sha256: sha256(bytes), sizeBytes: bytes.length });
      expect(t.store.holds(artifact.location)).toBe(true);
      expect(await readAll(t.store, artifact.location)).toEqual(bytes);
      expect(await t.store.describe(artifact.location)).toEqual(artifact);
      expect(await t.stored()).toHaveLength(1);
    });

    it('R2: a result larger than two upload parts keeps every byte, hashed while streaming', async () => {
      const t = await open();
      const bytes = bytesOf(2 * CONTRACT_PART_SIZE_BYTES + 123_457, 7);
      const writer = await t.store.begin('op-large', '9-result');
      for (let at = 0; at < bytes.length; at += 256 * 1024) await writer.write(bytes.subarray(at, at + 256 * 1024));
      const artifact = await writer.commit();
      expect(artifact.sha256).toBe(sha256(bytes));
      expect(artifact.sizeBytes).toBe(bytes.length);
      expect(sha256(await readAll(t.store, artifact.location))).toBe(sha256(bytes));
      expect(await t.uploadsInProgress()).toBe(0);
    });

    it('R4: an aborted write, after more than a part was sent, leaves nothing', async () => {
      const t = await open();
      const writer = await t.store.begin('op-abort', '3-result');
      const bytes = bytesOf(CONTRACT_PART_SIZE_BYTES + 1024 * 1024, 3);
      for (let at = 0; at < bytes.length; at += 512 * 1024) await writer.write(bytes.subarray(at, at + 512 * 1024));
      await writer.abort();
      await writer.abort();
      expect(await t.stored()).toEqual([]);
      expect(await t.uploadsInProgress()).toBe(0);
    });

    it('R2: a retried collect writes the same name again and leaves one artifact, the last one', async () => {
      const t = await open();
      const first = await t.store.begin('op-retry', '5-result');
      await first.write(Buffer.from('first attempt'));
      const one = await first.commit();
      const second = await t.store.begin('op-retry', '5-result');
      await second.write(Buffer.from('second attempt'));
      const two = await second.commit();
      expect(two.location).toBe(one.location);
      expect(await t.stored()).toHaveLength(1);
      expect((await readAll(t.store, two.location)).toString()).toBe('second attempt');
      expect(await t.store.describe(two.location)).toEqual(two);
    });

    it('R6: hostile operation IDs stay inside the store, each in the folder named by its digest', async () => {
      const t = await open();
      const locations = new Set<string>();
      for (const operationId of [...TRAVERSAL_CORPUS, 'a/b/../../c']) {
        const writer = await t.store.begin(operationId, '4-result');
        await writer.write(Buffer.from(operationId));
        const artifact = await writer.commit();
        expect(t.store.holds(artifact.location)).toBe(true);
        expect((await readAll(t.store, artifact.location)).toString()).toBe(operationId);
        locations.add(artifact.location);
      }
      expect(locations.size).toBe(TRAVERSAL_CORPUS.length + 1);
      const stored = await t.stored();
      expect(stored).toHaveLength(locations.size);
      for (const entry of stored) expect(entry).toMatch(/^[0-9a-f]{64}\/4-result$/);
      expect((await t.everything()).filter((entry) => !entry.startsWith('inside/'))).toEqual([]);
    });

    it('R6: refuses locations of other stores, and an absent artifact is absent', async () => {
      const t = await open();
      for (const location of t.foreignLocations) {
        expect(t.store.holds(location), location).toBe(false);
        await expect(t.store.open(location), location).rejects.toThrow(/outside the store|not a file artifact/);
      }
      const writer = await t.store.begin('op-absent', '2-result');
      await writer.write(Buffer.from('x'));
      const artifact = await writer.commit();
      const absent = artifact.location.replace(/2-result$/, '3-result');
      expect(t.store.holds(absent)).toBe(true);
      expect(await t.store.describe(absent)).toBeUndefined();
      await expect(t.store.open(absent)).rejects.toThrow();
    });
  });
}
