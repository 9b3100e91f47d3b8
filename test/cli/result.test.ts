/**
 * `asyncjob result ID [--out FILE]` behind the `CliDeps` seam: the verified bytes on stdout, a file that appears
 * only once every byte matched the recorded sha256 and size (R2), and the exit codes.
 */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes';
import { runCli } from '../../src/cli/run-cli';
import { FakeClient, fakeDeps, usageError } from './fixtures';

describe('asyncjob result', () => {
  it('R2: writes the verified result to stdout as bytes, exit 0', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client);
    expect(await runCli(['result', 'op-1'], io.deps)).toBe(EXIT.ok);
    expect(io.stdoutBytes()).toEqual(client.resultBytes);
    expect(client.calls.map((c) => c.method)).toEqual(['readResult']);
  });

  it('R2: --out FILE writes the file after verification and says what it wrote (text and --json)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'result-'));
    const client = new FakeClient();
    const io = fakeDeps(client);
    const file = path.join(dir, 'report.json');
    expect(await runCli(['result', 'op-1', '--out', file], io.deps)).toBe(EXIT.ok);
    expect(await readFile(file)).toEqual(client.resultBytes);
    expect(io.stdout()).toBe(
      `wrote ${client.resultBytes.length} bytes to ${file} (sha256 ${client.recordedResult.sha256}, verified)\n`,
    );
    const json = fakeDeps(client);
    expect(await runCli(['result', 'op-1', '--out', file, '--json'], json.deps)).toBe(EXIT.ok);
    expect(json.json()).toEqual([
      {
        schema: 'asyncjob.result/v1',
        operationId: 'op-1',
        file,
        sha256: client.recordedResult.sha256,
        sizeBytes: client.resultBytes.length,
      },
    ]);
    expect(await readdir(dir)).toEqual(['report.json']);
  });

  it.each([
    ['other bytes of the same size', Buffer.from('{"items":[9,9,9]}')],
    ['fewer bytes', Buffer.from('{"items":[1]}')],
    ['more bytes', Buffer.from('{"items":[1,2,3,4,5]}')],
  ])(
    'R2: %s than recorded: exit 6, ASYNCJOB_ERR_RESULT_UNAVAILABLE, no file and no temporary file left',
    async (_, bytes) => {
      const dir = await mkdtemp(path.join(tmpdir(), 'result-'));
      const client = new FakeClient();
      client.resultBytes = bytes;
      const io = fakeDeps(client);
      const file = path.join(dir, 'report.json');
      expect(await runCli(['result', 'op-1', '--out', file, '--json'], io.deps)).toBe(EXIT.internal);
      expect(io.json()).toEqual([expect.objectContaining({ code: 'ASYNCJOB_ERR_RESULT_UNAVAILABLE' })]);
      expect(io.stderr()).toMatch(/does not match the recorded sha256/);
      expect(await readdir(dir)).toEqual([]);
    },
  );

  it('R2: a mismatch on stdout exits 6 after the bytes', async () => {
    const client = new FakeClient();
    client.resultBytes = Buffer.from('{"items":[9,9,9]}');
    const io = fakeDeps(client);
    expect(await runCli(['result', 'op-1'], io.deps)).toBe(EXIT.internal);
    expect(io.stderr()).toMatch(/^asyncjob: the result of op-1 at s3:\/\/results\/op\/1-result does not match/);
  });

  it('keeps an existing file as it was when the result does not match', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'result-'));
    const file = path.join(dir, 'report.json');
    await writeFile(file, 'before');
    const client = new FakeClient();
    client.resultBytes = Buffer.from('tampered');
    expect(await runCli(['result', 'op-1', '--out', file], fakeDeps(client).deps)).toBe(EXIT.internal);
    expect(await readFile(file, 'utf8')).toBe('before');
  });

  it('needs exactly one ID; --json needs --out; --out needs a file', () => {
    expect(usageError(['result']).message).toMatch(/ID/);
    expect(usageError(['result', 'a', 'b']).message).toMatch(/unexpected argument/);
    expect(usageError(['result', 'a', '--out', ' ']).message).toBe('--out needs a file');
  });

  it('--json without --out is a usage error before anything is read', async () => {
    const client = new FakeClient();
    const io = fakeDeps(client);
    expect(await runCli(['result', 'op-1', '--json'], io.deps)).toBe(EXIT.usage);
    expect(client.calls).toEqual([]);
  });
});
