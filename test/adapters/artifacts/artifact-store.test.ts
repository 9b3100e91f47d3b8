import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { artifactFolderOf, FileArtifactStore } from '../../../src/adapters/artifacts/artifact-store';
import { artifactStoreContract } from './artifact-store.contract';

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
    expect(await readdir(path.join(root, artifactFolderOf('op/1')))).toEqual(['7-result', 'operation-id']);
    expect(await readFile(path.join(root, artifactFolderOf('op/1'), 'operation-id'), 'utf8')).toBe('op/1');
  });

  it('R4: an aborted write leaves nothing behind', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'artifacts-'));
    const store = new FileArtifactStore(root);
    const writer = await store.begin('op-2', '3-result');
    await writer.write(Buffer.from('partial'));
    await writer.abort();
    expect(await readdir(path.join(root, artifactFolderOf('op-2')))).toEqual(['operation-id']);
  });

  it('refuses to read a location outside its root', async () => {
    const store = new FileArtifactStore(await mkdtemp(path.join(tmpdir(), 'artifacts-')));
    await expect(store.open('file:///etc/passwd')).rejects.toThrow(/outside the store/);
    expect(await store.describe('file:///nonexistent-root/x').catch((e: Error) => e.message)).toMatch(
      /outside the store/,
    );
  });

  /** Identifiers an attacker would try as a path: none may leave the root or reach another operation's folder. */
  const TRAVERSAL_CORPUS = [
    '..',
    '.',
    '../..',
    '../outside',
    '%2e%2e',
    '..%2f',
    '..\\..',
    '\\',
    '/etc/passwd',
    'C:\\Windows',
    'op\u0000x',
    '.hidden',
    'x'.repeat(5000),
  ];

  it.each(TRAVERSAL_CORPUS.map((id) => [JSON.stringify(id).slice(0, 40), id]))(
    'R6: an operation ID of %s writes inside the root, in the folder named by its digest',
    async (_label, operationId) => {
      const parent = await mkdtemp(path.join(tmpdir(), 'artifacts-parent-'));
      const root = path.join(parent, 'root');
      const store = new FileArtifactStore(root);
      const writer = await store.begin(operationId, '4-result');
      await writer.write(Buffer.from('x'));
      const artifact = await writer.commit();
      expect(await readdir(parent)).toEqual(['root']);
      expect(await readdir(root)).toEqual([artifactFolderOf(operationId)]);
      expect(artifactFolderOf(operationId)).toMatch(/^[0-9a-f]{64}$/);
      expect(new URL(artifact.location).pathname.startsWith(root + path.sep)).toBe(true);
    },
  );

  it.each(['../4-result', '4-result/../../x', '', 'result', '4-result\u0000'])(
    'R6: refuses an artifact name that is not a sequence-numbered name (%j)',
    async (name) => {
      const store = new FileArtifactStore(await mkdtemp(path.join(tmpdir(), 'artifacts-')));
      await expect(store.begin('op-3', name)).rejects.toThrow(/not an artifact name/);
    },
  );
});

/** Every file under `dir`, relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

artifactStoreContract('FileArtifactStore', async () => {
  const parent = await mkdtemp(path.join(tmpdir(), 'artifacts-contract-'));
  const root = path.join(parent, 'inside');
  return {
    store: new FileArtifactStore(root),
    stored: async () =>
      (await filesUnder(root).catch(() => [])).filter((file) => path.basename(file) !== 'operation-id'),
    everything: () => filesUnder(parent),
    uploadsInProgress: async () => (await filesUnder(parent)).filter((file) => file.includes('.partial-')).length,
    foreignLocations: ['file:///etc/passwd', `file://${parent}/outside`, 's3://bucket/key'],
  };
});
