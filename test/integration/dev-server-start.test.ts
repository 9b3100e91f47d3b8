/**
 * A dev server that cannot start says why: its port is held by another process for the whole start, so every attempt
 * exits before answering, and the error names the code and carries the server's own last words, whether its output
 * goes to a log file (the demo's) or nowhere. Each early exit is tried again before that (the log holds one refusal
 * per attempt), since a port taken for a moment, ours or one the CLI chose for itself, frees again.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer } from '../../src/dev/temporal-server';

const TAKEN = /address already in use/;

describe('a dev server whose port is taken', () => {
  let holder: net.Server;
  let port: number;
  beforeAll(async () => {
    // Accepts and drops every connection, so the start's own connection attempts leave nothing open.
    holder = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it('fails with ASYNCJOB_ERR_DEV_SERVER_EXITED and the log file tail, after trying again', async () => {
    const logFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'dev-server-')), 'temporal.log');
    const start = startDevServer({ port, logFile });
    await expect(start).rejects.toMatchObject({
      code: 'ASYNCJOB_ERR_DEV_SERVER_EXITED',
      message: expect.stringMatching(TAKEN),
    });
    const refusals = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => TAKEN.test(line));
    expect(refusals).toHaveLength(3);
  }, 120_000);

  it('fails with the output it kept when there is no log file', async () => {
    const error = await startDevServer({ port }).catch((err: unknown) => err);
    expect(error).toMatchObject({ code: 'ASYNCJOB_ERR_DEV_SERVER_EXITED' });
    expect((error as Error).message).toMatch(
      new RegExp(`exited with code \\d+ before answering; its last output:\\n.*${port}.*${TAKEN.source}`),
    );
  }, 120_000);
});
