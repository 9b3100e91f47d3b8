import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkArtifactFiles } from '../../src/audit/artifact-files';
import { type JournalEntry } from '../../src/core/journal';

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
