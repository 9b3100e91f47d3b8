/**
 * `npm start` exactly as a user runs it (README.md's line that moves its ports), in the project directory, beside a
 * CPU busy loop (a loaded machine is
 * where the demo's cancel race used to be lost into a crash): only its ports and its data directory are moved,
 * through the documented settings (docs/configuration.md), so it runs beside other tests. It must reach "What to
 * try next" with both operations reported, stop cleanly on Ctrl-C (SIGINT to its process group, as a terminal
 * sends it): the demo ends what it started and says so before npm exits, and leaves none of its listeners behind.
 * It runs as the quick start runs it (no keys: the history's input is plain JSON), and with ASYNCJOB_PAYLOAD_KEYS
 * set, as README.md's "Encrypted payloads" says it may: the demo's history is then ciphertext read without the
 * keys, and the codec server the demo starts (the Web UI's configured codec endpoint) decodes it for the UI's origin.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/dev/temporal-server';
import { docCommand, substitute, type Substitution } from '../docs/doc-commands';
import { runShell } from '../docs/shell';

/** README.md's commands this test runs (registered in test/docs/doc-commands.ts). */
const NPM_START = 'ASYNCJOB_TEMPORAL_PORT=17233 ASYNCJOB_UI_PORT=18233 npm start';
const EXPORT_ADDRESS = 'export TEMPORAL_ADDRESS=127.0.0.1:17233';

const ROOT = path.resolve(__dirname, '..', '..');

/** Resolves once `text` holds `pattern`, re-checked on every chunk; rejects when the process exits first. */
function waitForOutput(child: ChildProcess, output: () => string, pattern: RegExp, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!pattern.test(output())) return;
      cleanup();
      resolve();
    };
    const exited = (code: number | null): void => {
      cleanup();
      reject(new Error(`npm start exited (${code}) before ${pattern}:\n${output()}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${output()}`));
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout!.off('data', check);
      child.off('exit', exited);
    };
    child.stdout!.on('data', check);
    child.once('exit', exited);
    check();
  });
}

/** The payloads of `workflowId`'s first event (its input), read without any codec, as the codec server's JSON. */
async function inputAsStored(address: string, workflowId: string) {
  const connection = await Connection.connect({ address });
  try {
    const raw = await connection.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId },
      maximumPageSize: 1,
    });
    return raw.history!.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads!.map((payload) => ({
      metadata: Object.fromEntries(
        Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
      ),
      data: Buffer.from(payload.data ?? []).toString('base64'),
    }));
  } finally {
    await connection.close();
  }
}

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/**
 * Encrypted: the Web UI is configured with the codec server the demo started, which decodes the history's input for
 * the UI's origin; read without it, the input is ciphertext.
 */
async function expectDecodedByCodecServer(
  codecUrl: RegExpExecArray | null,
  payloads: Awaited<ReturnType<typeof inputAsStored>>,
  uiPort: number,
  output: string,
): Promise<void> {
  expect(codecUrl, output).not.toBeNull();
  const settings = await request(`http://localhost:${uiPort}/api/v1/settings`);
  expect(((await settings.body.json()) as { Codec: { Endpoint: string } }).Codec.Endpoint).toBe(codecUrl![1]);
  expect(Buffer.from(payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
  expect(Buffer.from(payloads[0]!.data, 'base64').toString()).not.toContain('monthly-sales');
  const origin = `http://localhost:${uiPort}`;
  const decoded = await request(`${codecUrl![1]}/decode`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-namespace': 'default', origin },
    body: JSON.stringify({ payloads }),
  });
  expect(decoded.statusCode).toBe(200);
  expect(decoded.headers['access-control-allow-origin']).toBe(origin);
  const body = (await decoded.body.json()) as { payloads: { data: string }[] };
  expect(Buffer.from(body.payloads[0]!.data, 'base64').toString()).toContain('"monthly-sales"');
}

describe('npm start', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it.each([
    { keys: false, what: 'as the quick start runs it' },
    { keys: true, what: 'with payload keys (its codec server decodes the encrypted history)' },
  ])(
    'runs the demo $what beside a busy CPU, reaches what to try next, and stops cleanly on Ctrl-C',
    async ({ keys: withKeys }) => {
      const busy = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
      children.push(busy);
      const ports = {
        ASYNCJOB_TEMPORAL_PORT: await freePort(),
        ASYNCJOB_UI_PORT: await freePort(),
        ASYNCJOB_TEMPORAL_HTTP_PORT: await freePort(),
        ASYNCJOB_TEMPORAL_METRICS_PORT: await freePort(),
        ASYNCJOB_DEMO_SIMULATOR_PORT: await freePort(),
        ASYNCJOB_DEMO_WEBHOOK_PORT: await freePort(),
      };
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'npm-start-'));
      // The keys, by environment reference as docs/operating.md lists them; the CLI below is given them too.
      const keys: Record<string, string> = withKeys
        ? { ASYNCJOB_PAYLOAD_KEYS: 'demo=env:DEMO_PAYLOAD_KEY', DEMO_PAYLOAD_KEY: randomBytes(32).toString('hex') }
        : {};
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
        ...keys,
      };
      delete env.TEMPORAL_ADDRESS;
      if (!withKeys) delete env.ASYNCJOB_PAYLOAD_KEYS;
      // README.md's command as written, its two ports moved; the other listeners and the data directory through their
      // documented settings. Its own process group, so the SIGINT below reaches npm, the demo and the dev server, as a
      // terminal's does.
      const moved: Substitution[] = [
        ['17233', String(ports.ASYNCJOB_TEMPORAL_PORT), 'port'],
        ['18233', String(ports.ASYNCJOB_UI_PORT), 'port'],
      ];
      const command = substitute(docCommand('README.md', NPM_START).text, moved);
      const demo = spawn('bash', ['-c', command], {
        cwd: ROOT,
        env: { ...env, ASYNCJOB_DEMO_DATA_DIR: dataDir },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(demo);
      let output = '';
      demo.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      demo.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        demo.once('exit', (code, signal) => resolve({ code, signal })),
      );

      await waitForOutput(demo, () => output, /Running until Ctrl-C\./, 300_000);
      expect(output).toContain('What to try next');
      expect(output).toContain(`dev server at 127.0.0.1:${ports.ASYNCJOB_TEMPORAL_PORT}`);
      expect(output).toContain(`Web UI http://localhost:${ports.ASYNCJOB_UI_PORT}`);
      expect(output).toContain(`HTTP API port ${ports.ASYNCJOB_TEMPORAL_HTTP_PORT}`);
      expect(output).toContain(`metrics http://127.0.0.1:${ports.ASYNCJOB_TEMPORAL_METRICS_PORT}/metrics`);
      expect(output).toContain(`at http://127.0.0.1:${ports.ASYNCJOB_DEMO_SIMULATOR_PORT}; webhook receiver at`);
      expect(output).toContain(`webhook receiver at http://127.0.0.1:${ports.ASYNCJOB_DEMO_WEBHOOK_PORT}`);
      expect(output).toContain(`--store sqlite:${path.join(dataDir, 'asyncjob.db')}`);
      expect(output).toMatch(/operation demo-report-\S+: succeeded\n/);
      // The cancel either reached the running job and lost (X2), or came after the job finished and was refused.
      expect(output).toMatch(
        /cancel of demo-export-\S+(?:: \{"accepted":true| refused \(ASYNCJOB_ERR_\w+\): the job finished before the cancel could be sent \(X2\))/,
      );
      expect(output).toMatch(
        /operation demo-export-\S+: succeeded \(the job finished before the cancel took effect, X2\)/,
      );
      expect(output).toMatch(/audit chains: intact/);

      const reportId = /operation (demo-report-\S+): succeeded\n/.exec(output)![1]!;
      const payloads = await inputAsStored(`127.0.0.1:${ports.ASYNCJOB_TEMPORAL_PORT}`, reportId);
      const codecUrl = /payloads encrypted; the Web UI decodes them through (http:\/\/127\.0\.0\.1:(\d+))\n/.exec(
        output,
      );
      if (withKeys) await expectDecodedByCodecServer(codecUrl, payloads, ports.ASYNCJOB_UI_PORT, output);
      else {
        expect(codecUrl).toBeNull();
        expect(Buffer.from(payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
        expect(Buffer.from(payloads[0]!.data, 'base64').toString()).toContain('"monthly-sales"');
      }
      // README.md: then `export TEMPORAL_ADDRESS=127.0.0.1:17233` for the commands below.
      const exported = substitute(docCommand('README.md', EXPORT_ADDRESS).text, moved.slice(0, 1));
      const list = await runShell(`${exported}\nnpx asyncjob list --provider demo-reports`, {
        env: keys,
        timeoutMs: 120_000,
      });
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toMatch(/ succeeded +- +demo-reports /);

      process.kill(-demo.pid!, 'SIGINT');
      const end = await Promise.race([
        exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit:\n${output}`)), 120_000)),
      ]);
      busy.kill('SIGKILL');
      // npm waits for the demo to end, then exits 0, or by the SIGINT its script's shell was sent too (npm's way).
      expect([0, 'SIGINT'], output).toContain(end.code ?? end.signal);
      expect(output).toContain(
        'asyncjob dev stopped: the worker, the simulator, the webhook receiver and the dev server',
      );
      expect(output).not.toMatch(/Error:|ASYNCJOB_ERR_INTERNAL|was still running/);
      const listeners = { ...ports, ...(codecUrl ? { codecServer: Number(codecUrl[2]) } : {}) };
      for (const [name, port] of Object.entries(listeners)) expect(await listening(port), name).toBe(false);
    },
    // The test's own bounds (start 300 s, the CLI 120 s, the exit 120 s), not the suite's default: a slow start on a
    // busy machine is then reported by its wait, with the demo's output, instead of cut short without it.
    600_000,
  );
});
