/**
 * `npm start` exactly as a user runs it (README.md's line that moves its ports), in the project directory, beside a
 * CPU busy loop (a loaded machine is
 * where the demo's cancel race used to be lost into a crash): only its ports and its data directory are moved,
 * through the documented settings (docs/configuration.md), so it runs beside other tests. It must reach "What to
 * try next" with both operations reported, stop cleanly on Ctrl-C (SIGINT to its process group, as a terminal
 * sends it): the demo ends what it started and says so before npm exits, and leaves none of its listeners behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
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

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('npm start', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('runs the demo beside a busy CPU, reaches what to try next, and stops cleanly on Ctrl-C', async () => {
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
    const env = { ...process.env, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) };
    delete env.TEMPORAL_ADDRESS;
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
    // README.md: then `export TEMPORAL_ADDRESS=127.0.0.1:17233` for the commands below.
    const exported = substitute(docCommand('README.md', EXPORT_ADDRESS).text, moved.slice(0, 1));
    const list = await runShell(`${exported}\nnpx asyncjob list --provider demo-reports`, { timeoutMs: 120_000 });
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
    for (const [name, port] of Object.entries(ports)) expect(await listening(port), name).toBe(false);
  });
});
