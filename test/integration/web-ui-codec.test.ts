/**
 * The Temporal Web UI reads encrypted payloads only through the codec server, tested in the real browser (Debian's
 * chromium, playwright-core) against the run's dev server UI: `asyncjob worker` and a client with
 * ASYNCJOB_PAYLOAD_KEYS run an operation whose request carries a distinctive string. Without a codec endpoint the
 * workflow's page shows the input as ciphertext (`binary/encrypted`, the string absent); with the endpoint set in
 * the UI's codec settings, as docs/operating.md tells operators, the browser itself calls the documented
 * `asyncjob codec-server` (cross-origin: its CORS answer is what lets the page read the answer) and the page shows
 * the decoded input. A codec server that requires a token refuses the UI's unauthenticated call, and the page
 * stays ciphertext. A screenshot of each page is kept in test-artifacts/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page, type Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { writeRestContract } from './rest-contract';
import { AsyncJobClient } from '../../src/client';
import { freePort } from '../../src/dev/temporal-server';
import { startSimulator, type Simulator } from '../../src/simulator';
import { docCommand, substitute } from '../docs/doc-commands';
import { uniqueId, weeklyReportRequest } from '../setup/temporal';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const uiUrl = inject('temporalUiUrl');
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts');
const BIN = path.join(__dirname, '..', '..', 'bin', 'asyncjob');
const PROVIDER_TOKEN = `codec-ui-${randomBytes(12).toString('hex')}`;
const SECRET_NOTE = `distinctive-secret-${randomBytes(6).toString('hex')}`;
/** The codec server command docs/operating.md shows. */
const CODEC_SERVER = 'asyncjob codec-server --port 8888';

/** A child process of ours with its output kept. */
interface Child {
  process: ChildProcess;
  output: () => string;
}

function run(args: string[], env: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return { process: child, output: () => output };
}

/** Waits until the child's output shows `text`. */
async function outputShows(child: Child, text: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!child.output().includes(text) && Date.now() < end && child.process.exitCode === null)
    await new Promise((r) => setTimeout(r, 100));
  expect(child.output()).toContain(text);
}

async function stopChild(child: Child | undefined): Promise<void> {
  if (!child || child.process.exitCode !== null || child.process.signalCode !== null) return;
  const exited = new Promise((r) => child.process.once('exit', r));
  child.process.kill('SIGTERM');
  await exited;
}

describe.skipIf(!uiUrl || !existsSync(CHROMIUM))('Web UI: encrypted payloads through the codec server', () => {
  let sim: Simulator;
  let worker: Child;
  let env: NodeJS.ProcessEnv;
  let client: AsyncJobClient;
  let browser: Browser;
  let operationId: string;
  const provider = `reports-${uniqueId('uicodec').toLowerCase()}`.slice(0, 60);
  const uiOrigin = new URL(uiUrl).origin;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-ui-codec-'));
    sim = await startSimulator({ dialect: 'rest', token: PROVIDER_TOKEN, seed: 7 });
    const contractFile = await writeRestContract(dir, provider, sim.url);
    env = {
      PATH: process.env.PATH,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      ASYNCJOB_TASK_QUEUE: uniqueId('uicodec'),
      ASYNCJOB_PAYLOAD_KEYS: 'k1=env:ASYNCJOB_PAYLOAD_KEY_1',
      ASYNCJOB_PAYLOAD_KEY_1: randomBytes(32).toString('base64'),
    };
    worker = run(['worker'], {
      ...env,
      ASYNCJOB_STORE: `sqlite:${path.join(dir, 'asyncjob.db')}`,
      ASYNCJOB_ARTIFACTS_DIR: path.join(dir, 'artifacts'),
      ASYNCJOB_PROVIDERS: contractFile,
      REPORTS_TOKEN: PROVIDER_TOKEN,
    });
    await outputShows(worker, 'asyncjob worker: task queue');
    client = await AsyncJobClient.connect({ env });
    await client.waitForWorkers([provider]);
    operationId = uniqueId('op-uicodec');
    await client.start({
      ...weeklyReportRequest(operationId, provider),
      payload: { report: 'weekly', note: SECRET_NOTE },
    });
    expect((await client.result(operationId)).localState).toBe('succeeded');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await stopChild(worker);
    await sim?.stop();
  });

  /** Starts the documented codec server on a free port with `extra` settings; resolves with it and its URL. */
  async function codecServer(extra: NodeJS.ProcessEnv = {}): Promise<{ child: Child; url: string }> {
    const port = await freePort();
    const command = substitute(docCommand('docs/operating.md', CODEC_SERVER).text, [['8888', String(port), 'port']]);
    const child = run(command.split(' ').slice(1), { ...env, ASYNCJOB_CODEC_SERVER_ORIGINS: uiOrigin, ...extra });
    const url = `http://127.0.0.1:${port}`;
    await outputShows(child, url);
    return { child, url };
  }

  /** The workflow's history page in the UI. */
  async function workflowPage(): Promise<string> {
    const { runId } = await client['ctx'].client.workflow.getHandle(operationId).describe();
    return `${uiUrl}/namespaces/default/workflows/${encodeURIComponent(operationId)}/${runId}/history`;
  }

  /** The base64 data of the operation's input as the history holds it (ciphertext). */
  async function storedInput(): Promise<{ encoding: string; data: string }> {
    const raw = await client['ctx'].client.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId: operationId },
      maximumPageSize: 1,
    });
    const [payload] = raw.history!.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads!;
    return {
      encoding: Buffer.from(payload!.metadata!.encoding!).toString(),
      data: Buffer.from(payload!.data!).toString('base64'),
    };
  }

  /**
   * A fresh browser on the workflow's page; with `endpoint`, first set as docs/operating.md says: the codec status
   * button, "Use my browser setting and ignore Cluster-level setting", the endpoint, cross-origin credentials on,
   * Apply (the UI keeps it in this browser's localStorage), then the page loaded again.
   */
  async function openInput(endpoint?: string): Promise<{ page: Page; decode?: Promise<Response> }> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    await page.goto(await workflowPage(), { waitUntil: 'load' });
    if (endpoint !== undefined) {
      await page.locator('[data-testid^="data-encoder-status"]:visible').first().click();
      const dialog = page.locator('#data-encoder-settings');
      await dialog.getByTestId('use-local-endpoint-input').click();
      await dialog.locator('#data-encoder-endpoint-input').fill(endpoint);
      await dialog.locator('label').filter({ hasText: 'Include cross-origin credentials' }).click();
      await shot(page, 'settings');
      await dialog.getByTestId('confirm-modal-button').click();
      const decode = page.waitForResponse(
        (r) => r.url().startsWith(`${endpoint}/decode`) && r.request().method() === 'POST',
        { timeout: 30_000 },
      );
      await page.goto(await workflowPage(), { waitUntil: 'load' });
      return { page, decode };
    }
    return { page };
  }

  async function visibleText(page: Page): Promise<string> {
    const texts = await Promise.all(
      page.frames().map((f) => f.evaluate<string>('document.body ? document.body.innerText : ""').catch(() => '')),
    );
    return texts.join('\n');
  }

  async function shot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(ARTIFACTS, `web-ui-codec-${name}.png`), fullPage: true });
  }

  it('without a codec endpoint the workflow page shows the input as ciphertext', async () => {
    const { page } = await openInput();
    try {
      const stored = await storedInput();
      expect(stored.encoding).toBe('binary/encrypted');
      // The Input card shows the payload's data as the history holds it: the ciphertext, in base64.
      await expect
        .poll(() => visibleText(page), { timeout: 30_000, interval: 200 })
        .toContain(stored.data.slice(0, 32));
      expect(await visibleText(page)).not.toContain(SECRET_NOTE);
      expect(await page.content()).not.toContain(SECRET_NOTE);
    } finally {
      await shot(page, 'without-endpoint');
      await page.context().close();
    }
  });

  it('with the codec endpoint set in the UI, the browser decodes through asyncjob codec-server and shows the input', async () => {
    const server = await codecServer();
    try {
      const { page, decode } = await openInput(server.url);
      try {
        const response = (await decode)!;
        expect(response.status()).toBe(200);
        expect(await response.request().headerValue('origin')).toBe(uiOrigin);
        expect(await response.request().headerValue('x-namespace')).toBe('default');
        await expect.poll(() => visibleText(page), { timeout: 30_000, interval: 200 }).toContain(SECRET_NOTE);
      } finally {
        await shot(page, 'decoded');
        await page.context().close();
      }
    } finally {
      await stopChild(server.child);
    }
  });

  it('a codec server that requires a token refuses the UI that sends none: the page stays ciphertext', async () => {
    const server = await codecServer({
      ASYNCJOB_CODEC_SERVER_TOKEN: 'env:CODEC_TOKEN',
      CODEC_TOKEN: randomBytes(16).toString('hex'),
    });
    try {
      const { page, decode } = await openInput(server.url);
      try {
        expect((await decode)!.status()).toBe(401);
        await expect
          .poll(() => visibleText(page), { timeout: 30_000, interval: 200 })
          .toContain((await storedInput()).data.slice(0, 32));
        expect(await visibleText(page)).not.toContain(SECRET_NOTE);
      } finally {
        await shot(page, 'refused');
        await page.context().close();
      }
    } finally {
      await stopChild(server.child);
    }
  });
});
