/**
 * moto's server (PyPI `moto[server]`, pinned): installed on demand into a Python virtual environment under the
 * git-ignored `.conformance/` folder (never a project dependency), started on a free loopback port with signature
 * checking on, and given the IAM user whose access key signs every later request.
 *
 * Signatures: moto verifies SigV4 on every action once `INITIAL_NO_AUTH_ACTION_COUNT` actions have passed
 * unchecked. The server starts with that count at 3, spent on the three IAM actions that create the user, allow it
 * every action and create its access key; every request after them is checked against that key (a wrong signature
 * answers 403 `SignatureDoesNotMatch`, an unknown key 403 `InvalidClientTokenId`). `/moto-api/` calls are not
 * actions and are never counted or checked.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { spawnServer } from './server-process';
import { INSTALL_PREFIX } from './testserver';

/** The pinned package, with the extra that brings the standalone server, and its version. */
export const MOTO_PACKAGE = 'moto[server]';
export const MOTO_VERSION = '5.2.5';

/** The virtual environment moto is installed in: `<repo>/.conformance/moto`. */
const VENV_DIR = path.join(INSTALL_PREFIX, 'moto');
const PYTHON = path.join(VENV_DIR, 'bin', 'python');

/** The region every conformance request is signed for. */
export const MOTO_REGION = 'us-east-1';

/** An AWS access key. */
export interface AccessKey {
  accessKeyId: string;
  secretAccessKey: string;
}

const run = promisify(execFile);

/** The installed moto version, or undefined when the virtual environment or moto is missing. */
export async function installedMotoVersion(): Promise<string | undefined> {
  if (!existsSync(PYTHON)) return undefined;
  try {
    const { stdout } = await run(PYTHON, ['-c', 'import importlib.metadata as m; print(m.version("moto"))']);
    return stdout.trim();
  } catch {
    return undefined;
  }
}

/** Whether the pinned moto is installed, read synchronously (a test file decides at load time whether to skip). */
export function motoInstalledSync(): boolean {
  return existsSync(path.join(VENV_DIR, `moto-${MOTO_VERSION}.installed`));
}

/**
 * Installs the pinned moto into `.conformance/moto` (a virtual environment made with the machine's `python3`)
 * unless it is already there. Returns what it did. Safe to repeat.
 */
export async function ensureMotoInstalled(log: (line: string) => void = () => {}): Promise<'present' | 'installed'> {
  const marker = path.join(VENV_DIR, `moto-${MOTO_VERSION}.installed`);
  if ((await installedMotoVersion()) === MOTO_VERSION && existsSync(marker)) return 'present';
  log(`conformance: installing ${MOTO_PACKAGE}==${MOTO_VERSION} into ${path.relative(process.cwd(), VENV_DIR)}/`);
  if (!existsSync(PYTHON)) await run('python3', ['-m', 'venv', VENV_DIR], { timeout: 120_000 });
  await run(
    path.join(VENV_DIR, 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', `${MOTO_PACKAGE}==${MOTO_VERSION}`],
    { timeout: 900_000, maxBuffer: 16 * 1024 * 1024 },
  );
  const version = await installedMotoVersion();
  if (version !== MOTO_VERSION)
    throw new Error(`installing ${MOTO_PACKAGE}==${MOTO_VERSION} left version ${version ?? 'none'} in ${VENV_DIR}`);
  await run('touch', [marker]);
  return 'installed';
}

/** A running moto server whose IAM user's key signs every request. */
export interface MotoServer {
  url: string;
  pid: number;
  /** The access key of the IAM user allowed every action; moto checks every request's signature against it. */
  accessKey: AccessKey;
  /** Sends a JSON-protocol action signed with `key` (default: the user's) straight to moto. */
  call(action: AwsAction, key?: AccessKey): Promise<AwsAnswer>;
  /** Stops it (SIGTERM, then SIGKILL). Safe to repeat. */
  stop(): Promise<void>;
}

/** One AWS JSON-protocol action. */
export interface AwsAction {
  /** The signing name (`transcribe`, `textract`, `states`). */
  service: string;
  /** The `X-Amz-Target` value, e.g. `Transcribe.GetTranscriptionJob`. */
  target: string;
  /** The protocol version of the content type: `1.1` (most services) or `1.0` (Step Functions). */
  jsonVersion?: '1.0' | '1.1';
  body: unknown;
}

/** moto's answer. */
export interface AwsAnswer {
  status: number;
  text: string;
  json?: Record<string, unknown>;
}

/** Signs and sends one request to `url` (path `/`), as any AWS SDK would. */
async function signedPost(
  url: string,
  service: string,
  headers: Record<string, string>,
  body: string,
  key: AccessKey,
): Promise<AwsAnswer> {
  const target = new URL(url);
  const signer = new SignatureV4({ credentials: key, region: MOTO_REGION, service, sha256: Sha256 });
  const signed = await signer.sign({
    method: 'POST',
    protocol: target.protocol,
    hostname: target.hostname,
    port: Number(target.port),
    path: '/',
    query: {},
    headers: { host: target.host, ...headers },
    body,
  });
  const sent = { ...signed.headers };
  delete sent.host;
  const response = await fetch(`${target.origin}/`, { method: 'POST', headers: sent, body });
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: response.status, text, ...(json !== undefined ? { json } : {}) };
}

/** Sends one IAM (query protocol) action; answers its XML. */
export async function iamAction(url: string, params: Record<string, string>, key: AccessKey): Promise<string> {
  const body = new URLSearchParams({ Version: '2010-05-08', ...params }).toString();
  const answer = await signedPost(
    url,
    'iam',
    { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body,
    key,
  );
  if (answer.status !== 200) throw new Error(`IAM ${params.Action} answered ${answer.status}: ${answer.text}`);
  return answer.text;
}

/** The key the three unchecked bootstrap actions are signed with (moto does not check them). */
const BOOTSTRAP_KEY: AccessKey = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'bootstrap-not-checked' };

/** The three unchecked actions: a user, a policy allowing every action, an access key. Answers the key. */
async function createSigningUser(url: string): Promise<AccessKey> {
  await iamAction(url, { Action: 'CreateUser', UserName: 'asyncjob-conformance' }, BOOTSTRAP_KEY);
  const policy = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] };
  await iamAction(
    url,
    {
      Action: 'PutUserPolicy',
      UserName: 'asyncjob-conformance',
      PolicyName: 'conformance',
      PolicyDocument: JSON.stringify(policy),
    },
    BOOTSTRAP_KEY,
  );
  const xml = await iamAction(url, { Action: 'CreateAccessKey', UserName: 'asyncjob-conformance' }, BOOTSTRAP_KEY);
  const accessKeyId = /<AccessKeyId>([^<]+)<\/AccessKeyId>/.exec(xml)?.[1];
  const secretAccessKey = /<SecretAccessKey>([^<]+)<\/SecretAccessKey>/.exec(xml)?.[1];
  if (accessKeyId === undefined || secretAccessKey === undefined)
    throw new Error(`CreateAccessKey answered no key: ${xml.slice(0, 200)}`);
  return { accessKeyId, secretAccessKey };
}

/** Sends an action to moto signed with `key`. */
export function callMoto(url: string, action: AwsAction, key: AccessKey): Promise<AwsAnswer> {
  return signedPost(
    url,
    action.service,
    { 'content-type': `application/x-amz-json-${action.jsonVersion ?? '1.1'}`, 'x-amz-target': action.target },
    JSON.stringify(action.body),
    key,
  );
}

/**
 * Proves signatures are checked before any scenario runs: the user's key is accepted, a signature made with
 * the wrong secret is refused with 403 SignatureDoesNotMatch. Throws when either does not hold.
 */
async function proveSignaturesChecked(url: string, key: AccessKey): Promise<void> {
  const probe: AwsAction = {
    service: 'transcribe',
    target: 'Transcribe.ListTranscriptionJobs',
    body: { MaxResults: 1 },
  };
  const good = await callMoto(url, probe, key);
  if (good.status !== 200) throw new Error(`moto refused the user's own signature: ${good.status} ${good.text}`);
  const forged = await callMoto(url, probe, { ...key, secretAccessKey: `${key.secretAccessKey}x` });
  if (forged.status !== 403 || !forged.text.includes('SignatureDoesNotMatch'))
    throw new Error(`moto accepted a wrong signature (answered ${forged.status}): signature checking is off`);
}

async function waitForServer(url: string, exited: () => number | null, deadline: number, logFile: string) {
  for (;;) {
    if (exited() !== null) throw new Error(`moto exited with code ${exited()} before answering (log: ${logFile})`);
    try {
      if ((await fetch(`${url}/moto-api/data.json`)).ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`moto did not answer at ${url} in time (log: ${logFile})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts the installed moto on a free loopback port (its log goes to `logFile`), creates the signing user, turns
 * on Step Functions' state machine execution (executions really run their Wait, Pass and Fail states), and proves
 * that a wrong signature is refused.
 */
export async function startMoto(options: { logFile: string; startTimeoutMs?: number }): Promise<MotoServer> {
  const { child, url, stop } = await spawnServer({
    command: path.join(VENV_DIR, 'bin', 'moto_server'),
    argsFor: (port) => ['-H', '127.0.0.1', '-p', String(port)],
    logFile: options.logFile,
    env: { ...process.env, INITIAL_NO_AUTH_ACTION_COUNT: '3' },
  });
  try {
    await waitForServer(url, () => child.exitCode, Date.now() + (options.startTimeoutMs ?? 60_000), options.logFile);
    const accessKey = await createSigningUser(url);
    const config = await fetch(`${url}/moto-api/config`, {
      method: 'POST',
      body: JSON.stringify({ stepfunctions: { execute_state_machine: true } }),
    });
    if (!config.ok) throw new Error(`POST /moto-api/config answered ${config.status}`);
    await proveSignaturesChecked(url, accessKey);
    return {
      url,
      pid: child.pid!,
      accessKey,
      call: (action, key = accessKey) => callMoto(url, action, key),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
