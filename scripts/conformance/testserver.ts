/**
 * Azure's LRO conformance server (`@microsoft.azure/autorest.testserver`, pinned): installed on demand into the
 * git-ignored `.conformance/` folder (never a project dependency), started on a free loopback port, and asked
 * for its coverage counters (`GET /report/azure`, `GET /report/optional`).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { spawnServer } from './server-process';

/** The pinned package and version. */
export const TEST_SERVER_PACKAGE = '@microsoft.azure/autorest.testserver';
export const TEST_SERVER_VERSION = '3.3.51';

/** Where it is installed: `<repo>/.conformance`. */
export const INSTALL_PREFIX = path.resolve(__dirname, '..', '..', '.conformance');
const PACKAGE_DIR = path.join(INSTALL_PREFIX, 'node_modules', ...TEST_SERVER_PACKAGE.split('/'));

/** The installed version, or undefined when it is not installed. */
export async function installedVersion(): Promise<string | undefined> {
  try {
    const manifest = JSON.parse(await readFile(path.join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof manifest.version === 'string' ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

/** The installed version, read synchronously (a test file decides at load time whether to skip). */
export function installedVersionSync(): string | undefined {
  try {
    const manifest = JSON.parse(readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

/** Installs the pinned version into `.conformance/` unless it is already there. Returns what it did. */
export async function ensureTestServerInstalled(
  log: (line: string) => void = () => {},
): Promise<'present' | 'installed'> {
  if ((await installedVersion()) === TEST_SERVER_VERSION) return 'present';
  log(
    `conformance: installing ${TEST_SERVER_PACKAGE}@${TEST_SERVER_VERSION} into ${path.relative(process.cwd(), INSTALL_PREFIX) || INSTALL_PREFIX}/`,
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  await promisify(execFile)(
    npm,
    [
      'install',
      '--prefix',
      INSTALL_PREFIX,
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      `${TEST_SERVER_PACKAGE}@${TEST_SERVER_VERSION}`,
    ],
    { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 },
  );
  const version = await installedVersion();
  if (version !== TEST_SERVER_VERSION)
    throw new Error(
      `installing ${TEST_SERVER_PACKAGE}@${TEST_SERVER_VERSION} left version ${version ?? 'none'} in ${PACKAGE_DIR}`,
    );
  return 'installed';
}

/** Coverage counters: scenario name -> hit count. */
export type Coverage = Record<string, number>;

/** A running test server. */
export interface TestServer {
  url: string;
  pid: number;
  /** The azure and optional counters together. */
  coverage(): Promise<Coverage>;
  /** Stops it (SIGTERM, then SIGKILL). Safe to repeat. */
  stop(): Promise<void>;
}

/** Starts the installed test server on a free loopback port; its log goes to `logFile`. */
export async function startTestServer(options: {
  logFile: string;
  coverageDir: string;
  startTimeoutMs?: number;
}): Promise<TestServer> {
  const { child, url, stop } = await spawnServer({
    command: process.execPath,
    argsFor: (port) => [
      '--import',
      path.join(__dirname, 'loopback.mjs'),
      path.join(PACKAGE_DIR, 'dist', 'cli', 'cli.js'),
      'run',
      '--port',
      String(port),
      '--coverageDirectory',
      options.coverageDir,
    ],
    logFile: options.logFile,
    cwd: options.coverageDir,
  });
  const report = async (which: 'azure' | 'optional'): Promise<Coverage> => {
    const response = await fetch(`${url}/report/${which}`);
    if (!response.ok) throw new Error(`GET /report/${which} answered ${response.status}`);
    return (await response.json()) as Coverage;
  };
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`the test server exited with code ${child.exitCode} before answering (log: ${options.logFile})`);
    try {
      await report('azure');
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(
          `the test server did not answer at ${url} within the start timeout (log: ${options.logFile}): ${(error as Error).message}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    pid: child.pid!,
    coverage: async () => ({ ...(await report('optional')), ...(await report('azure')) }),
    stop,
  };
}
