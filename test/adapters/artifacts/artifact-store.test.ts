import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileArtifactStore } from '../../../src/adapters/artifacts/artifact-store';

describe('FileArtifactStore', () => {
  it('R2: commits a result with its sha256 and size, readable back', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'artifacts-'));
    const store = new FileArtifactStore(root);
    const writer = await store.begin('op/1', '7-result');
    await writer.write(Buffer.from('{"items":'));
    await writer.write(Buffer.from('[1,2,3]}'));
    const artifact = await writer.commit();
    const bytes = Buffer.from('{"items":[1,2,3]}');
    expect(artifact).toMatchObject({
      sha256: createHash('sha256').update(bytes).digest('hex'),
      sizeBytes: bytes.length,
    });
    expect(await readFile(new URL(artifact.location))).toEqual(bytes);
    expect(await store.describe(artifact.location)).toEqual(artifact);
    expect(await readdir(path.join(root, 'op_1'))).toEqual(['7-result']);
  });

  it('R4: an aborted write leaves nothing behind', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'artifacts-'));
    const store = new FileArtifactStore(root);
    const writer = await store.begin('op-2', 'result');
    await writer.write(Buffer.from('partial'));
    await writer.abort();
    expect(await readdir(path.join(root, 'op-2'))).toEqual([]);
  });

  it('refuses to read a location outside its root', async () => {
    const store = new FileArtifactStore(await mkdtemp(path.join(tmpdir(), 'artifacts-')));
    expect(() => store.open('file:///etc/passwd')).toThrow(/outside the store/);
    expect(await store.describe('file:///nonexistent-root/x').catch((e: Error) => e.message)).toMatch(
      /outside the store/,
    );
  });
});
